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
        add((int) (Thread.currentThread().threadId() * 0x9E3779B9L >>> 16), delta);
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
