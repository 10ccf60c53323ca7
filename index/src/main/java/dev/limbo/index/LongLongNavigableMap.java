package dev.limbo.index;

import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentNavigableMap;

/**
 * An ordered {@link LongLongMap} (signed order of the keys): navigation and range scans.
 *
 * <p>Navigation answers with a {@code boolean} and hands the entry it found to a
 * {@link LongLongConsumer}, so that no key needs a "none" sentinel. Navigation is weakly
 * consistent: the entry it hands over was in the map at some time during the call, and no key
 * nearer to the argument was in the map for the whole call (the answer may come from two
 * neighbouring leaves read at different times, so it is not linearizable). A range scan, through {@link #scan} or a {@link #cursor}, is weakly consistent in
 * the {@code java.util.concurrent} sense: it sees every key present in the range for the whole
 * scan, never a key absent for the whole scan, each key at most once, in order.
 */
public interface LongLongNavigableMap extends LongLongMap {

    /**
     * The entry with the greatest key {@code <= key}.
     *
     * @param key any key
     * @param action receives the entry, if there is one
     * @return whether there is one
     */
    boolean floor(long key, LongLongConsumer action);

    /**
     * The entry with the least key {@code >= key}.
     *
     * @param key any key
     * @param action receives the entry, if there is one
     * @return whether there is one
     */
    boolean ceiling(long key, LongLongConsumer action);

    /**
     * The entry with the greatest key {@code < key}.
     *
     * @param key any key
     * @param action receives the entry, if there is one
     * @return whether there is one
     */
    boolean lower(long key, LongLongConsumer action);

    /**
     * The entry with the least key {@code > key}.
     *
     * @param key any key
     * @param action receives the entry, if there is one
     * @return whether there is one
     */
    boolean higher(long key, LongLongConsumer action);

    /**
     * The entry with the least key.
     *
     * @param action receives the entry, if the map is not empty
     * @return whether the map has an entry
     */
    boolean first(LongLongConsumer action);

    /**
     * The entry with the greatest key.
     *
     * @param action receives the entry, if the map is not empty
     * @return whether the map has an entry
     */
    boolean last(LongLongConsumer action);

    /**
     * The least key.
     *
     * @return the least key
     * @throws NoSuchElementException when the map is empty
     */
    long firstKey();

    /**
     * The greatest key.
     *
     * @return the greatest key
     * @throws NoSuchElementException when the map is empty
     */
    long lastKey();

    /**
     * Visits the entries with keys in a range, in ascending or descending key order, until the
     * visitor returns {@code false}. The range is empty when {@code from > to}, or when they are
     * equal and either bound is exclusive.
     *
     * @param from the range's low end
     * @param fromInclusive whether {@code from} itself belongs to the range
     * @param to the range's high end
     * @param toInclusive whether {@code to} itself belongs to the range
     * @param descending visit from the high end down
     * @param visitor receives each entry; {@code false} stops the scan
     * @return the number of entries visited (including the one whose visit returned {@code false})
     */
    long scan(long from, boolean fromInclusive, long to, boolean toInclusive, boolean descending,
            LongLongPredicate visitor);

    /**
     * Visits every entry in ascending key order: {@link #scan(long, boolean, long, boolean, boolean,
     * LongLongPredicate)} over the whole key space.
     *
     * @param visitor receives each entry; {@code false} stops the scan
     * @return the number of entries visited
     */
    @Override
    default long scan(LongLongPredicate visitor) {
        return scan(Long.MIN_VALUE, true, Long.MAX_VALUE, true, false, visitor);
    }

    /**
     * Visits the entries with keys in {@code [from, to)} in ascending order.
     *
     * @param from the first key of the range
     * @param to the key after the range
     * @param visitor receives each entry; {@code false} stops the scan
     * @return the number of entries visited
     */
    default long scan(long from, long to, LongLongPredicate visitor) {
        return scan(from, true, to, false, false, visitor);
    }

    /**
     * Visits the entries with keys in {@code [from, to)} in descending order.
     *
     * @param from the first key of the range
     * @param to the key after the range
     * @param visitor receives each entry; {@code false} stops the scan
     * @return the number of entries visited
     */
    default long scanDescending(long from, long to, LongLongPredicate visitor) {
        return scan(from, true, to, false, true, visitor);
    }

    /**
     * A cursor over the entries with keys in a range (bounds as in {@link #scan}).
     *
     * @param from the range's low end
     * @param fromInclusive whether {@code from} itself belongs to the range
     * @param to the range's high end
     * @param toInclusive whether {@code to} itself belongs to the range
     * @param descending step from the high end down
     * @return a cursor before the range's first entry
     */
    LongLongCursor cursor(long from, boolean fromInclusive, long to, boolean toInclusive,
            boolean descending);

    /**
     * A cursor over {@code [from, to)}, ascending or descending.
     *
     * @param from the first key of the range
     * @param to the key after the range
     * @param descending step from the high end down
     * @return a cursor before the range's first entry
     */
    default LongLongCursor cursor(long from, long to, boolean descending) {
        return cursor(from, true, to, false, descending);
    }

    /**
     * A {@link ConcurrentNavigableMap} view, with sub-map views and weakly consistent iterators,
     * as {@code ConcurrentSkipListMap} documents them.
     *
     * @return the view, backed by this map
     */
    ConcurrentNavigableMap<Long, Long> asNavigableMap();
}
