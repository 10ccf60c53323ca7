package dev.limbo.index;

import java.util.AbstractMap;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.Map;
import java.util.NavigableSet;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.concurrent.ConcurrentNavigableMap;

/**
 * The {@link ConcurrentNavigableMap} view of a {@link LongLongNavigableMap}
 * ({@link LongLongNavigableMap#asNavigableMap()}), and each of its sub-map, head, tail and
 * descending views: one class, with a key range and a direction. Boxed, {@code null}-free
 * ({@link NullPointerException}), natural key order ({@link #comparator()} is {@code null}, or
 * {@link Collections#reverseOrder()} for a descending view), weakly consistent iterators, as
 * {@code ConcurrentSkipListMap} documents its own.
 *
 * <h2>Implementation notes</h2>
 *
 * <p><b>Range.</b> The view holds the keys {@code k} with {@code lo <(=) k <(=) hi} (each bound
 * inclusive or not); the whole map is {@code [Long.MIN_VALUE, Long.MAX_VALUE]}, both inclusive, since
 * every {@code long} is a key. A new sub-view's bounds must lie within this one's
 * ({@link IllegalArgumentException} "key out of range") and its low end must not pass its high end
 * ("inconsistent range"). Reads and removals of a key outside the range find nothing; writes of one
 * (put, putIfAbsent, replace, compute, merge) throw {@link IllegalArgumentException}.
 *
 * <p><b>Point operations</b> are {@link AbstractLongLongView}'s, after the range check: exact,
 * linearizable at their successful conditional operation or exact read, lock-free (its class
 * notes).
 *
 * <p><b>Navigation</b> ({@code lower/floor/ceiling/higher}, {@code first/last}, their keys and
 * entries) is one linearizable primitive navigation of the map, clipped to the range: a query key
 * below the range becomes the range's first entry ({@code ceiling(lo)} or {@code higher(lo)}), one
 * above it the last, and a found key outside the range means "none". A descending view swaps the
 * directions (its {@code lower} is the map's {@code higher}, its {@code first} the map's last in
 * range). Entries it returns are immutable snapshots ({@link AbstractMap.SimpleImmutableEntry}).
 * {@code pollFirstEntry}/{@code pollLastEntry} loop: find the first (last) entry, then
 * {@code remove(k, v)}; linearizable at that successful removal (or at the navigation that found
 * none), lock-free (a failed removal means a concurrent update changed that entry).
 *
 * <p><b>Iteration</b> is a {@link RangeIterator} over the range, in the view's direction: weakly
 * consistent, strictly monotone keys, each at most once, never
 * {@link java.util.ConcurrentModificationException}. {@link #size()} of the whole map is the map's
 * (an estimate while updates run); a bounded view counts its range with one scan, as
 * {@code ConcurrentSkipListMap}'s sub-maps do, so it is O(n) and only weakly consistent.
 */
final class LongLongNavigableMapView extends AbstractLongLongView
        implements ConcurrentNavigableMap<Long, Long> {

    /** The map, as the ordered map it is (the same object as {@link #map}). */
    private final LongLongNavigableMap ordered;
    private final long lo;
    private final boolean loInclusive;
    private final long hi;
    private final boolean hiInclusive;
    private final boolean descending;
    private final boolean whole;

    LongLongNavigableMapView(LongLongNavigableMap map) {
        this(map, Long.MIN_VALUE, true, Long.MAX_VALUE, true, false);
    }

    private LongLongNavigableMapView(LongLongNavigableMap map, long lo, boolean loInclusive, long hi,
            boolean hiInclusive, boolean descending) {
        super(map);
        this.ordered = map;
        this.lo = lo;
        this.loInclusive = loInclusive;
        this.hi = hi;
        this.hiInclusive = hiInclusive;
        this.descending = descending;
        this.whole = lo == Long.MIN_VALUE && loInclusive && hi == Long.MAX_VALUE && hiInclusive;
    }

    // ---- range ----

    private boolean tooLow(long key) {
        return key < lo || (key == lo && !loInclusive);
    }

    private boolean tooHigh(long key) {
        return key > hi || (key == hi && !hiInclusive);
    }

    private boolean inRange(long key) {
        return !tooLow(key) && !tooHigh(key);
    }

    @Override
    long writeKey(Long key) {
        final long k = key(key);
        if (!inRange(k)) {
            throw new IllegalArgumentException("key out of range: " + k + " is outside " + this.range());
        }
        return k;
    }

    @Override
    Long readKey(Object key) {
        final Long k = queryKey(key);
        return k != null && inRange(k) ? k : null;
    }

    private String range() {
        return (loInclusive ? "[" : "(") + lo + ", " + hi + (hiInclusive ? "]" : ")");
    }

    /**
     * The view of a narrower range, in this view's direction; an end not given ({@code lowGiven},
     * {@code highGiven} false) stays this view's.
     */
    private LongLongNavigableMapView restrict(boolean lowGiven, long low, boolean lowInclusive,
            boolean highGiven, long high, boolean highInclusive) {
        if (!lowGiven) {
            low = lo;
            lowInclusive = loInclusive;
        } else if (low < lo || (low == lo && lowInclusive && !loInclusive)) {
            throw new IllegalArgumentException("key out of range: " + low + " is below " + range());
        }
        if (!highGiven) {
            high = hi;
            highInclusive = hiInclusive;
        } else if (high > hi || (high == hi && highInclusive && !hiInclusive)) {
            throw new IllegalArgumentException("key out of range: " + high + " is above " + range());
        }
        if (low > high) {
            throw new IllegalArgumentException("inconsistent range: low end " + low + " > high end "
                    + high);
        }
        return new LongLongNavigableMapView(ordered, low, lowInclusive, high, highInclusive,
                descending);
    }

    // ---- navigation in key order (absolute), clipped to the range ----

    /** Receives the entry a primitive navigation found. */
    private static final class Hit implements LongLongConsumer {
        long key;
        long value;

        @Override
        public void accept(long k, long v) {
            key = k;
            value = v;
        }
    }

    private Hit lowest() {
        final Hit h = new Hit();
        final boolean found = loInclusive ? ordered.ceiling(lo, h) : ordered.higher(lo, h);
        return found && !tooHigh(h.key) ? h : null;
    }

    private Hit highest() {
        final Hit h = new Hit();
        final boolean found = hiInclusive ? ordered.floor(hi, h) : ordered.lower(hi, h);
        return found && !tooLow(h.key) ? h : null;
    }

    private Hit absCeiling(long key) {
        if (tooLow(key)) {
            return lowest();
        }
        final Hit h = new Hit();
        return ordered.ceiling(key, h) && !tooHigh(h.key) ? h : null;
    }

    private Hit absHigher(long key) {
        if (tooLow(key)) {
            return lowest();
        }
        final Hit h = new Hit();
        return ordered.higher(key, h) && !tooHigh(h.key) ? h : null;
    }

    private Hit absFloor(long key) {
        if (tooHigh(key)) {
            return highest();
        }
        final Hit h = new Hit();
        return ordered.floor(key, h) && !tooLow(h.key) ? h : null;
    }

    private Hit absLower(long key) {
        if (tooHigh(key)) {
            return highest();
        }
        final Hit h = new Hit();
        return ordered.lower(key, h) && !tooLow(h.key) ? h : null;
    }

    // ---- navigation in the view's direction ----

    private Hit first() {
        return descending ? highest() : lowest();
    }

    private Hit last() {
        return descending ? lowest() : highest();
    }

    private Hit lower(Long key) {
        final long k = key(key);
        return descending ? absHigher(k) : absLower(k);
    }

    private Hit floor(Long key) {
        final long k = key(key);
        return descending ? absCeiling(k) : absFloor(k);
    }

    private Hit ceiling(Long key) {
        final long k = key(key);
        return descending ? absFloor(k) : absCeiling(k);
    }

    private Hit higher(Long key) {
        final long k = key(key);
        return descending ? absLower(k) : absHigher(k);
    }

    private static Map.Entry<Long, Long> entry(Hit h) {
        return h == null ? null : new AbstractMap.SimpleImmutableEntry<>(h.key, h.value);
    }

    private static Long keyOf(Hit h) {
        return h == null ? null : h.key;
    }

    private static Long keyOrThrow(Hit h) {
        if (h == null) {
            throw new NoSuchElementException("the map (view) is empty");
        }
        return h.key;
    }

    private Map.Entry<Long, Long> poll(boolean fromFirst) {
        for (;;) {
            final Hit h = fromFirst ? first() : last();
            if (h == null) {
                return null;
            }
            if (map.remove(h.key, h.value)) {
                return entry(h);
            }
        }
    }

    @Override
    public Map.Entry<Long, Long> lowerEntry(Long key) {
        return entry(lower(key));
    }

    @Override
    public Long lowerKey(Long key) {
        return keyOf(lower(key));
    }

    @Override
    public Map.Entry<Long, Long> floorEntry(Long key) {
        return entry(floor(key));
    }

    @Override
    public Long floorKey(Long key) {
        return keyOf(floor(key));
    }

    @Override
    public Map.Entry<Long, Long> ceilingEntry(Long key) {
        return entry(ceiling(key));
    }

    @Override
    public Long ceilingKey(Long key) {
        return keyOf(ceiling(key));
    }

    @Override
    public Map.Entry<Long, Long> higherEntry(Long key) {
        return entry(higher(key));
    }

    @Override
    public Long higherKey(Long key) {
        return keyOf(higher(key));
    }

    @Override
    public Map.Entry<Long, Long> firstEntry() {
        return entry(first());
    }

    @Override
    public Map.Entry<Long, Long> lastEntry() {
        return entry(last());
    }

    @Override
    public Long firstKey() {
        return keyOrThrow(first());
    }

    @Override
    public Long lastKey() {
        return keyOrThrow(last());
    }

    @Override
    public Map.Entry<Long, Long> pollFirstEntry() {
        return poll(true);
    }

    @Override
    public Map.Entry<Long, Long> pollLastEntry() {
        return poll(false);
    }

    @Override
    public Comparator<? super Long> comparator() {
        return descending ? Collections.reverseOrder() : null;
    }

    // ---- sub-map and descending views ----

    @Override
    public ConcurrentNavigableMap<Long, Long> subMap(Long fromKey, boolean fromInclusive, Long toKey,
            boolean toInclusive) {
        final long from = key(fromKey);
        final long to = key(toKey);
        return descending
                ? restrict(true, to, toInclusive, true, from, fromInclusive)
                : restrict(true, from, fromInclusive, true, to, toInclusive);
    }

    @Override
    public ConcurrentNavigableMap<Long, Long> headMap(Long toKey, boolean inclusive) {
        final long to = key(toKey);
        return descending
                ? restrict(true, to, inclusive, false, 0, false)
                : restrict(false, 0, false, true, to, inclusive);
    }

    @Override
    public ConcurrentNavigableMap<Long, Long> tailMap(Long fromKey, boolean inclusive) {
        final long from = key(fromKey);
        return descending
                ? restrict(false, 0, false, true, from, inclusive)
                : restrict(true, from, inclusive, false, 0, false);
    }

    @Override
    public ConcurrentNavigableMap<Long, Long> subMap(Long fromKey, Long toKey) {
        return subMap(fromKey, true, toKey, false);
    }

    @Override
    public ConcurrentNavigableMap<Long, Long> headMap(Long toKey) {
        return headMap(toKey, false);
    }

    @Override
    public ConcurrentNavigableMap<Long, Long> tailMap(Long fromKey) {
        return tailMap(fromKey, true);
    }

    @Override
    public ConcurrentNavigableMap<Long, Long> descendingMap() {
        return new LongLongNavigableMapView(ordered, lo, loInclusive, hi, hiInclusive, !descending);
    }

    @Override
    public NavigableSet<Long> navigableKeySet() {
        return new NavigableKeySetView(this);
    }

    @Override
    public NavigableSet<Long> keySet() {
        return navigableKeySet();
    }

    @Override
    public NavigableSet<Long> descendingKeySet() {
        return descendingMap().navigableKeySet();
    }

    @Override
    <T> Iterator<T> iterator(EntryMaker<T> maker) {
        return new RangeIterator<>(this, maker, ordered, lo, loInclusive, hi, hiInclusive, descending);
    }

    @Override
    int order() {
        return Spliterator.ORDERED;
    }

    // ---- Map and ConcurrentMap ----

    @Override
    public int size() {
        final long n = whole ? map.size() : ordered.scan(lo, loInclusive, hi, hiInclusive, false, (k, v) -> true);
        return (int) Math.min(n, Integer.MAX_VALUE);
    }

    @Override
    public boolean isEmpty() {
        return whole ? map.isEmpty() : lowest() == null;
    }

    @Override
    public void clear() {
        if (whole) {
            map.clear();
            return;
        }
        for (Iterator<Long> keys = iterator((owner, key, value) -> key); keys.hasNext(); ) {
            map.remove(keys.next());
        }
    }
}
