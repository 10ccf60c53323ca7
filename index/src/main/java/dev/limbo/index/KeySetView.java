package dev.limbo.index;

import java.util.AbstractSet;
import java.util.Iterator;
import java.util.Spliterator;
import java.util.Spliterators;

/**
 * The key set of a map view: backed by it, weakly consistent iteration (see
 * {@link BatchIterator}), removal, no addition. {@link NavigableKeySetView} adds navigation.
 */
class KeySetView extends AbstractSet<Long> {

    private final AbstractLongLongView map;

    KeySetView(AbstractLongLongView map) {
        this.map = map;
    }

    @Override
    public final Iterator<Long> iterator() {
        return map.iterator((owner, key, value) -> key);
    }

    @Override
    public final int size() {
        return map.size();
    }

    @Override
    public final boolean isEmpty() {
        return map.isEmpty();
    }

    @Override
    public final void clear() {
        map.clear();
    }

    @Override
    public final boolean contains(Object o) {
        return map.containsKey(o);
    }

    @Override
    public final boolean remove(Object o) {
        return map.remove(o) != null;
    }

    @Override
    public Spliterator<Long> spliterator() {
        return Spliterators.spliteratorUnknownSize(iterator(),
                map.order() | Spliterator.DISTINCT | Spliterator.NONNULL | Spliterator.CONCURRENT);
    }
}
