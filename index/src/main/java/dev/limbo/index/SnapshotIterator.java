package dev.limbo.index;

import java.util.Arrays;

/**
 * A {@link BatchIterator} over a {@link LongLongMap} that has no key order to resume from (a hashed
 * map): its one batch is a copy of every entry, made by one weakly consistent
 * {@link LongLongMap#scan(LongLongPredicate)} when the iteration starts, so each key comes at most
 * once. It holds two {@code long}s per entry of the map.
 *
 * @param <T> what the iterator returns
 */
final class SnapshotIterator<T> extends BatchIterator<T> implements LongLongPredicate {

    private static final int FIRST_CAPACITY = 16;
    private static final int MAX_CAPACITY = Integer.MAX_VALUE - 8;

    private final LongLongMap map;
    private int filled;

    SnapshotIterator(AbstractLongLongView owner, EntryMaker<T> maker, LongLongMap map) {
        super(owner, maker, FIRST_CAPACITY);
        this.map = map;
    }

    @Override
    int refill() {
        map.scan(this);
        exhausted = true;
        return filled;
    }

    /** Copies one entry of the scan, growing the arrays when they are full. */
    @Override
    public boolean test(long key, long value) {
        if (filled == keys.length) {
            if (filled == MAX_CAPACITY) {
                throw new IllegalStateException("the map has more entries than an iterator can copy ("
                        + MAX_CAPACITY + ")");
            }
            final int capacity = (int) Math.min((long) filled * 2, MAX_CAPACITY);
            keys = Arrays.copyOf(keys, capacity);
            values = Arrays.copyOf(values, capacity);
        }
        keys[filled] = key;
        values[filled] = value;
        filled++;
        return true;
    }
}
