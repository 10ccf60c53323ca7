package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Scheme;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Lincheck (stress mode) linearizability test of {@link MichaelScottQueue} over a DEBRA domain,
 * against an {@link ArrayDeque} used as a FIFO queue. Values 1..3, so that equal values show up in
 * different orders. Every instance Lincheck creates is closed after the check, then the domain.
 */
@Param(name = "value", gen = LongGen.class, conf = "1:3")
public class MichaelScottQueueLincheckTest {

    static final LimboAllocator ALLOC = LimboAllocator.create();
    static final ReclaimDomain DOMAIN = TreiberStackTest.domain(Scheme.DEBRA, ALLOC);
    static final Queue<OffHeapStructure> CREATED = new ConcurrentLinkedQueue<>();

    private final MichaelScottQueue queue = new MichaelScottQueue(DOMAIN);

    public MichaelScottQueueLincheckTest() {
        CREATED.add(queue);
    }

    @Operation
    public void enqueue(@Param(name = "value") final long value) {
        queue.enqueue(value);
    }

    @Operation
    public long dequeue() {
        return queue.dequeue();
    }

    @Operation
    public boolean isEmpty() {
        return queue.isEmpty();
    }

    /** The sequential specification: an ArrayDeque with the same operations. */
    public static final class Spec {
        private final ArrayDeque<Long> queue = new ArrayDeque<>();

        public void enqueue(final long value) {
            queue.add(value);
        }

        public long dequeue() {
            return LongMapChecks.orReserved(queue.poll());
        }

        public boolean isEmpty() {
            return queue.isEmpty();
        }
    }

    @Test
    void linearizable() {
        LincheckStress.check(getClass(), Spec.class, CREATED, DOMAIN);
    }
}
