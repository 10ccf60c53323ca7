package dev.limbo.index;

import java.util.Iterator;
import java.util.concurrent.ConcurrentMap;

/**
 * What the collection views ({@link EntrySetView}, {@link KeySetView}, {@link ValuesView}) need
 * from a map view: its exact map operations and a weakly consistent iteration over its entries.
 * {@link LongLongMapView} and {@link LongLongNavigableMapView} implement it.
 */
interface LongLongView extends ConcurrentMap<Long, Long> {

    /**
     * A weakly consistent iterator over this view's entries (see {@link BatchIterator}); its
     * {@code remove()} removes the last key it returned from this view.
     *
     * @param <T> what the iterator returns
     * @param maker turns each entry into what the iterator returns
     * @return a new iterator
     */
    <T> Iterator<T> iterator(EntryMaker<T> maker);

    /**
     * The {@link java.util.Spliterator} characteristic that tells whether this view's iteration
     * order is defined.
     *
     * @return {@link java.util.Spliterator#ORDERED} for a view in key order, otherwise 0
     */
    int order();
}
