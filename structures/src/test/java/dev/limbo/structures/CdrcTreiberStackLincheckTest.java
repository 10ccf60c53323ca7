package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.rc.Cdrc;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Lincheck (stress mode) linearizability test of {@link CdrcTreiberStack} against an
 * {@link ArrayDeque} used as a stack; Lincheck's instances alternate between the two modes
 * (snapshots, counted loads). Values 1..3, so that equal values show up in different orders.
 * Every instance is closed after the check, then the domain.
 */
@Param(name = "value", gen = LongGen.class, conf = "1:3")
public class CdrcTreiberStackLincheckTest {

    static final Cdrc RC = new Cdrc(LimboAllocator.create());
    static final Queue<StructureLifecycle> CREATED = new ConcurrentLinkedQueue<>();
    static final AtomicLong INSTANCES = new AtomicLong();

    private final CdrcTreiberStack stack = new CdrcTreiberStack(RC, INSTANCES.getAndIncrement() % 2 == 0);

    public CdrcTreiberStackLincheckTest() {
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

    @Operation
    public long size() {
        return stack.size();
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

        public long size() {
            return stack.size();
        }
    }

    @Test
    void linearizable() {
        LincheckStress.check(getClass(), Spec.class, CREATED, RC);
    }
}
