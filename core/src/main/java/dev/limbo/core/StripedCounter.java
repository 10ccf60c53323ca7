package dev.limbo.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A statistics counter that many threads bump cheaply and that is summed when read (the
 * {@link java.util.concurrent.atomic.LongAdder} idea without its lazy cell allocation, so
 * increments never allocate).
 *
 * <p>The counter has a fixed number of stripes, a power of two near twice the core count, each
 * alone in a {@link Layouts#PADDED 128-byte} run of a {@code long[]}. A caller that knows its
 * {@linkplain Participants participant id} passes it and touches only its stripe; otherwise the
 * stripe comes from the thread id. {@link #sum()} is a moving snapshot: increments concurrent with
 * it may or may not be counted.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm and sources: java.util.concurrent.atomic.LongAdder's striping (Striped64), with the
 * stripes allocated up front in one padded long[] instead of lazily created, contention-chosen
 * cells: a stripe is chosen by participant id or by a hash of the thread id, never re-hashed.
 *
 * Invariants: stripe s (1..STRIPES) is word s * STRIDE, alone in its 128-byte run (word 0's run is
 * leading padding, and the array's tail pads the last stripe); its value is the sum of the
 * deltas added to it. Non-invariant: two threads may share a stripe (ids and hashes are folded
 * modulo STRIPES), which costs contention, never counts.
 *
 * Linearization points: add - its get-and-add (1). sum - none: it reads each stripe at its own
 * load (2), so it is not a snapshot; with non-negative deltas only (counters that grow), the
 * result lies between the total when the call began and the total when it returned.
 *
 * Progress: add and increment are wait-free (one atomic add); sum is wait-free, O(STRIPES).
 *
 * Memory ordering: (1) volatile get-and-add on one stripe; (2) opaque loads of the stripes in
 * sum, atomic and coherent per word (a thread's later sum never sees a stripe go back), and
 * ordering nothing else: a sum publishes and acquires nothing, it is a statistic.
 *
 * Reclamation and ABA: none (a heap array that lives as long as the counter).
 * }</pre>
 */
public final class StripedCounter {

    private static final VarHandle CELLS = MethodHandles.arrayElementVarHandle(long[].class)
            .withInvokeExactBehavior();
    private static final int STRIDE = (int) (Layouts.PADDED / Long.BYTES);
    private static final int STRIPES = Math.min(64,
            Integer.highestOneBit(Math.max(1, Runtime.getRuntime().availableProcessors()) * 2 - 1) << 1);

    private final long[] cells = new long[(STRIPES + 1) * STRIDE]; // one stripe of leading padding

    /** Adds {@code delta} on the stripe of participant {@code id}. */
    public void add(final int id, final long delta) {
        // (1) get-and-add on one stripe; pairs with the opaque loads (2) of sum().
        final long unused = (long) CELLS.getAndAdd(cells, index(id), delta);
    }

    /** Adds {@code delta} on the stripe of the calling thread. */
    public void add(final long delta) {
        add(threadKey(), delta);
    }

    /**
     * The calling thread's stripe key for {@link #add(int, long)}: its thread id, hashed. A
     * register read and a multiply, where a participant id costs a ThreadLocal lookup.
     */
    public static int threadKey() {
        return (int) (Thread.currentThread().threadId() * 0x9E3779B9L >>> 16);
    }

    /** Adds one on the stripe of the calling thread. */
    public void increment() {
        add(1L);
    }

    /** The sum of all stripes. */
    public long sum() {
        long sum = 0;
        for (int s = 1; s <= STRIPES; s++) {
            // (2) opaque load; pairs with (1). Each stripe is read atomically; the sum is not a snapshot.
            sum += (long) CELLS.getOpaque(cells, s * STRIDE);
        }
        return sum;
    }

    private static int index(final int id) {
        return ((id & (STRIPES - 1)) + 1) * STRIDE;
    }

    @Override
    public String toString() {
        return Long.toString(sum());
    }
}
