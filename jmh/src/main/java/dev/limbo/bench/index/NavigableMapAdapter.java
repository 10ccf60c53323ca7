package dev.limbo.bench.index;

import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.function.LongSupplier;

/**
 * A {@link ConcurrentNavigableMap} of boxed longs: {@code ConcurrentSkipListMap} and MapDB's
 * {@code BTreeMap}. A range scan iterates the tail map from the scan's first key, as their users do.
 */
final class NavigableMapAdapter extends BoxedMapAdapter implements OrderedAdapter {

    private final ConcurrentNavigableMap<Long, Long> map;

    NavigableMapAdapter(final ConcurrentNavigableMap<Long, Long> map, final LongSupplier offHeap,
                        final Runnable close) {
        super(map, offHeap, close);
        this.map = map;
    }

    @Override
    public long scan(final long from, final RangeScan scan) {
        scan.start();
        long visited = 0;
        final Iterator<Map.Entry<Long, Long>> it = map.tailMap(from, true).entrySet().iterator();
        while (it.hasNext()) {
            visited++;
            if (!scan.add(it.next().getValue())) {
                break;
            }
        }
        return visited;
    }
}
