package dev.limbo.index;

import java.util.Comparator;
import java.util.Iterator;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Spliterator;
import java.util.Spliterators;

/**
 * The navigable key set of a {@link LongLongNavigableMapView}: every operation goes to the map view
 * (its navigation, its sub-map and descending views), so it has the same bounds, direction and
 * consistency.
 */
final class NavigableKeySetView extends KeySetView implements NavigableSet<Long> {

    private final LongLongNavigableMapView map;

    NavigableKeySetView(LongLongNavigableMapView map) {
        super(map);
        this.map = map;
    }

    @Override
    public Long lower(Long e) {
        return map.lowerKey(e);
    }

    @Override
    public Long floor(Long e) {
        return map.floorKey(e);
    }

    @Override
    public Long ceiling(Long e) {
        return map.ceilingKey(e);
    }

    @Override
    public Long higher(Long e) {
        return map.higherKey(e);
    }

    @Override
    public Long pollFirst() {
        final Map.Entry<Long, Long> e = map.pollFirstEntry();
        return e == null ? null : e.getKey();
    }

    @Override
    public Long pollLast() {
        final Map.Entry<Long, Long> e = map.pollLastEntry();
        return e == null ? null : e.getKey();
    }

    @Override
    public Long first() {
        return map.firstKey();
    }

    @Override
    public Long last() {
        return map.lastKey();
    }

    @Override
    public Comparator<? super Long> comparator() {
        return map.comparator();
    }

    @Override
    public NavigableSet<Long> descendingSet() {
        return map.descendingMap().navigableKeySet();
    }

    @Override
    public Iterator<Long> descendingIterator() {
        return descendingSet().iterator();
    }

    @Override
    public NavigableSet<Long> subSet(Long fromElement, boolean fromInclusive, Long toElement,
            boolean toInclusive) {
        return map.subMap(fromElement, fromInclusive, toElement, toInclusive).navigableKeySet();
    }

    @Override
    public NavigableSet<Long> headSet(Long toElement, boolean inclusive) {
        return map.headMap(toElement, inclusive).navigableKeySet();
    }

    @Override
    public NavigableSet<Long> tailSet(Long fromElement, boolean inclusive) {
        return map.tailMap(fromElement, inclusive).navigableKeySet();
    }

    @Override
    public NavigableSet<Long> subSet(Long fromElement, Long toElement) {
        return subSet(fromElement, true, toElement, false);
    }

    @Override
    public NavigableSet<Long> headSet(Long toElement) {
        return headSet(toElement, false);
    }

    @Override
    public NavigableSet<Long> tailSet(Long fromElement) {
        return tailSet(fromElement, true);
    }

    /** Sorted (natural order, comparator {@code null}) when ascending; ordered either way. */
    @Override
    public Spliterator<Long> spliterator() {
        final int sorted = map.comparator() == null ? Spliterator.SORTED : 0;
        return Spliterators.spliteratorUnknownSize(iterator(), sorted | Spliterator.ORDERED
                | Spliterator.DISTINCT | Spliterator.NONNULL | Spliterator.CONCURRENT);
    }
}
