package dev.limbo.core.testing;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Decides when a concurrent test ends by the progress it asserts, never by a fixed loop count on
 * one side: every side counts its work, and {@link #done()} turns true once every side has
 * reached its target. A side that a scheduler starves therefore keeps the others running
 * instead of finding them finished. Past a generous deadline {@code done()} throws, naming the
 * sides that fell short, so a lost thread fails the test rather than hanging it.
 *
 * <p>Every thread of the test loops {@code while (!progress.done())}; a side is either counted by
 * the threads ({@link #add}) or, for a figure that the code under test keeps (a domain's free
 * count, its epoch advances), raised to what a thread last read of it ({@link #observe}). A
 * thread that fails calls {@link #stop()}, so that the others end at once and the failure is
 * reported without waiting for the deadline.
 *
 * <p>Shared by the tests of every module: core publishes its {@code dev.limbo.core.testing}
 * test classes as a test-jar.
 */
public final class Progress {

    private final String[] names;
    private final long[] targets;
    private final AtomicLong[] counts;
    private final long deadline;
    private volatile boolean stopped;

    /**
     * @param timeoutSeconds  how long the sides may take to reach their targets, together; keep
     *                        it below the test's own timeout so this message, not a bare timeout,
     *                        reports a starved side
     * @param sidesAndTargets alternating side names and the counts each must reach
     */
    public Progress(final long timeoutSeconds, final Object... sidesAndTargets) {
        if (sidesAndTargets.length == 0 || sidesAndTargets.length % 2 != 0) {
            throw new IllegalArgumentException("expected pairs of a side name and its target");
        }
        final int n = sidesAndTargets.length / 2;
        names = new String[n];
        targets = new long[n];
        counts = new AtomicLong[n];
        for (int i = 0; i < n; i++) {
            names[i] = (String) sidesAndTargets[2 * i];
            targets[i] = ((Number) sidesAndTargets[2 * i + 1]).longValue();
            counts[i] = new AtomicLong();
        }
        deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    }

    /** Adds {@code n} to side {@code side}'s count. */
    public void add(final int side, final long n) {
        counts[side].addAndGet(n);
    }

    /** Raises side {@code side}'s count to {@code value} if it is lower (a figure read, not counted). */
    public void observe(final int side, final long value) {
        counts[side].accumulateAndGet(value, Math::max);
    }

    /** Side {@code side}'s count so far. */
    public long count(final int side) {
        return counts[side].get();
    }

    /** Makes {@link #done()} true at once: a thread failed, and the test ends with its failure. */
    public void stop() {
        stopped = true;
    }

    /** True once every side has reached its target, or after {@link #stop()}; throws past the deadline. */
    public boolean done() {
        if (stopped) {
            return true;
        }
        boolean all = true;
        for (int i = 0; i < counts.length; i++) {
            all &= counts[i].get() >= targets[i];
        }
        if (!all && System.nanoTime() - deadline > 0) {
            throw new AssertionError("timed out before every side made its progress: " + this);
        }
        return all;
    }

    @Override
    public String toString() {
        final StringBuilder b = new StringBuilder();
        for (int i = 0; i < counts.length; i++) {
            b.append(i == 0 ? "" : ", ").append(names[i]).append(' ').append(counts[i].get())
                    .append('/').append(targets[i]);
        }
        return b.toString();
    }
}
