package dev.limbo.bench.index;

import dev.limbo.index.LongLongPredicate;

/**
 * A thread's range-scan visitor: counts down the entries a scan may still visit and sums their
 * values (so that the JIT cannot drop the visits). Reused by every scan of its thread: the scan
 * path allocates nothing for it.
 */
public final class RangeScan implements LongLongPredicate {

    private final int length;
    private int left;
    private long sum;

    /** A visitor for scans of {@code length} entries. */
    public RangeScan(final int length) {
        if (length < 1) {
            throw new IllegalArgumentException("a range scan visits at least one entry, was " + length);
        }
        this.length = length;
    }

    /** Entries per scan. */
    public int length() {
        return length;
    }

    /** Starts a scan: {@link #length()} entries left. */
    void start() {
        left = length;
    }

    /** Adds an entry's value; whether the scan wants more entries. */
    boolean add(final long value) {
        sum += value;
        return --left > 0;
    }

    @Override
    public boolean test(final long key, final long value) {
        return add(value);
    }

    /** The sum of every value visited so far (for the blackhole). */
    long sum() {
        return sum;
    }
}
