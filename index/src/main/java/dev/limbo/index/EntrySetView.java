package dev.limbo.index;

import java.util.AbstractSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Spliterator;
import java.util.Spliterators;

/**
 * The entry set of a map view: backed by it, weakly consistent iteration (see
 * {@link BatchIterator}) with {@link ViewEntry} entries that write through, removal, no addition.
 */
final class EntrySetView extends AbstractSet<Map.Entry<Long, Long>> {

    private final AbstractLongLongView map;

    EntrySetView(AbstractLongLongView map) {
        this.map = map;
    }

    @Override
    public Iterator<Map.Entry<Long, Long>> iterator() {
        return map.iterator(ViewEntry::new);
    }

    @Override
    public int size() {
        return map.size();
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
    public boolean contains(Object o) {
        return o instanceof Map.Entry<?, ?> e
                && e.getKey() instanceof Long key
                && e.getValue() instanceof Long value
                && value.equals(map.get(key));
    }

    @Override
    public boolean remove(Object o) {
        return o instanceof Map.Entry<?, ?> e
                && e.getKey() instanceof Long key
                && e.getValue() instanceof Long value
                && map.remove(key, value);
    }

    @Override
    public Spliterator<Map.Entry<Long, Long>> spliterator() {
        return Spliterators.spliteratorUnknownSize(iterator(),
                map.order() | Spliterator.DISTINCT | Spliterator.NONNULL | Spliterator.CONCURRENT);
    }
}
