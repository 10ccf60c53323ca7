package dev.limbo.index;

import java.util.Iterator;
import java.util.Set;
import java.util.Spliterator;
import java.util.concurrent.ConcurrentMap;

/**
 * The {@link ConcurrentMap} view of a {@link LongLongMap} ({@link LongLongMap#asMap()}): every key;
 * the exact, linearizable, lock-free operations of {@link AbstractLongLongView} (its class notes).
 *
 * <p>Iterators are weakly consistent (see {@link BatchIterator}): a {@link RangeIterator} in key
 * order when the map is a {@link LongLongNavigableMap}, otherwise a {@link SnapshotIterator} that
 * copies every entry with {@link LongLongMap#scan(LongLongPredicate)}. {@link #size()} is the map's
 * (an estimate while updates run), capped at {@link Integer#MAX_VALUE}.
 */
final class LongLongMapView extends AbstractLongLongView {

    LongLongMapView(LongLongMap map) {
        super(map);
    }

    @Override
    Long readKey(Object key) {
        return queryKey(key);
    }

    @Override
    long writeKey(Long key) {
        return key(key);
    }

    @Override
    public int size() {
        return (int) Math.min(map.size(), Integer.MAX_VALUE);
    }

    @Override
    public boolean isEmpty() {
        return map.isEmpty();
    }

    @Override
    public void clear() {
        map.clear();
    }

    @Override
    public Set<Long> keySet() {
        return new KeySetView(this);
    }

    @Override
    <T> Iterator<T> iterator(EntryMaker<T> maker) {
        if (map instanceof LongLongNavigableMap ordered) {
            return new RangeIterator<>(this, maker, ordered, Long.MIN_VALUE, true, Long.MAX_VALUE, true,
                    false);
        }
        return new SnapshotIterator<>(this, maker, map);
    }

    @Override
    int order() {
        return map instanceof LongLongNavigableMap ? Spliterator.ORDERED : 0;
    }
}
