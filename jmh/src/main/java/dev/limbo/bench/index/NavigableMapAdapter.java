package dev.limbo.bench.index;

import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.function.LongSupplier;

/**
 * A {@link ConcurrentNavigableMap} of boxed longs: {@code ConcurrentSkipListMap} and MapDB's
 * {@code BTreeMap}. A range scan iterates the tail map from the scan's first key, as their users do.
 */
final class NavigableMapAdapter implements OrderedAdapter {

    private final ConcurrentNavigableMap<Long, Long> map;
    private final LongSupplier offHeap;
    private final Runnable close;

    NavigableMapAdapter(final ConcurrentNavigableMap<Long, Long> map, final LongSupplier offHeap,
                        final Runnable close) {
        this.map = map;
        this.offHeap = offHeap;
        this.close = close;
    }

    @Override
    public long get(final long key) {
        return BoxedMapAdapter.unbox(map.get(key));
    }

    @Override
    public long put(final long key, final long value) {
        return BoxedMapAdapter.unbox(map.put(key, value));
    }

    @Override
    public long remove(final long key) {
        return BoxedMapAdapter.unbox(map.remove(key));
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

    @Override
    public long offHeapBytes() {
        return offHeap.getAsLong();
    }

    @Override
    public void close() {
        close.run();
    }
}
