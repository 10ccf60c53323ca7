package dev.limbo.index;

import java.util.AbstractCollection;
import java.util.Iterator;
import java.util.Spliterator;
import java.util.Spliterators;

/**
 * The values of a map view: backed by it, weakly consistent iteration (see
 * {@link BatchIterator}), removal (of the first entry with the value), no addition.
 */
final class ValuesView extends AbstractCollection<Long> {

    private final AbstractLongLongView map;

    ValuesView(AbstractLongLongView map) {
        this.map = map;
    }

    @Override
    public Iterator<Long> iterator() {
        return map.iterator((owner, key, value) -> value);
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
        return map.containsValue(o);
    }

    @Override
    public Spliterator<Long> spliterator() {
        return Spliterators.spliteratorUnknownSize(iterator(),
                map.order() | Spliterator.NONNULL | Spliterator.CONCURRENT);
    }
}
