package dev.limbo.index;

/**
 * A {@link BatchIterator} over a key range of a {@link LongLongNavigableMap}, ascending or
 * descending: each batch is one {@link LongLongNavigableMap#scan} of the rest of the range, from
 * just after the last key the previous batch copied, stopped when the batch is full. Keys therefore
 * come strictly increasing (or decreasing), each at most once. Batches start small (an iteration
 * that stops early copies little) and double up to {@value #MAX_BATCH} entries.
 *
 * @param <T> what the iterator returns
 */
final class RangeIterator<T> extends BatchIterator<T> implements LongLongPredicate {

    private static final int FIRST_BATCH = 8;
    private static final int MAX_BATCH = 512;

    private final LongLongNavigableMap map;
    private final long lo;
    private final boolean loInclusive;
    private final long hi;
    private final boolean hiInclusive;
    private final boolean descending;
    private boolean resumed;
    private long resumeAfter;
    private int filled;

    RangeIterator(AbstractLongLongView owner, EntryMaker<T> maker, LongLongNavigableMap map, long lo,
            boolean loInclusive, long hi, boolean hiInclusive, boolean descending) {
        super(owner, maker, FIRST_BATCH);
        this.map = map;
        this.lo = lo;
        this.loInclusive = loInclusive;
        this.hi = hi;
        this.hiInclusive = hiInclusive;
        this.descending = descending;
    }

    @Override
    int refill() {
        if (resumed && keys.length < MAX_BATCH) {
            keys = new long[keys.length * 2];
            values = new long[keys.length];
        }
        filled = 0;
        if (descending) {
            map.scan(lo, loInclusive, resumed ? resumeAfter : hi, !resumed && hiInclusive, true, this);
        } else {
            map.scan(resumed ? resumeAfter : lo, !resumed && loInclusive, hi, hiInclusive, false, this);
        }
        exhausted = filled < keys.length;
        if (filled > 0) {
            resumed = true;
            resumeAfter = keys[filled - 1];
        }
        return filled;
    }

    /** Copies one entry of the scan; stops the scan when the batch is full. */
    @Override
    public boolean test(long key, long value) {
        keys[filled] = key;
        values[filled] = value;
        return ++filled < keys.length;
    }
}
