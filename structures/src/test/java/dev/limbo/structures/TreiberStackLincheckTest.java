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
 * Lincheck (stress mode) linearizability test of {@link TreiberStack} over a DEBRA domain, against
 * an {@link ArrayDeque} used as a stack. Values 1..3, so that equal values show up in different
 * orders. Every instance Lincheck creates is closed after the check, then the domain.
 */
@Param(name = "value", gen = LongGen.class, conf = "1:3")
public class TreiberStackLincheckTest {

    static final LimboAllocator ALLOC = LimboAllocator.create();
    static final ReclaimDomain DOMAIN = TreiberStackTest.domain(Scheme.DEBRA, ALLOC);
    static final Queue<OffHeapStructure> CREATED = new ConcurrentLinkedQueue<>();

    private final TreiberStack stack = new TreiberStack(DOMAIN);

    public TreiberStackLincheckTest() {
        CREATED.add(stack);
    }

    @Operation
    public void push(@Param(name = "value") final long value) {
        stack.push(value);
    }

    @Operation
    public long pop() {
        return stack.pop();
    }

    @Operation
    public boolean isEmpty() {
        return stack.isEmpty();
    }

    @Operation
    public boolean contains(@Param(name = "value") final long value) {
        return stack.contains(value);
    }

    /** The sequential specification: an ArrayDeque with the same operations. */
    public static final class Spec {
        private final ArrayDeque<Long> stack = new ArrayDeque<>();

        public void push(final long value) {
            stack.push(value);
        }

        public long pop() {
            return LongMapChecks.orReserved(stack.poll());
        }

        public boolean isEmpty() {
            return stack.isEmpty();
        }

        public boolean contains(final long value) {
            return stack.contains(value);
        }
    }

    @Test
    void linearizable() {
        LincheckStress.check(getClass(), Spec.class, CREATED, DOMAIN);
    }
}
