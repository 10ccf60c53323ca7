package dev.limbo.bench.index;

import java.util.concurrent.ConcurrentMap;
import java.util.function.LongSupplier;

/**
 * A {@link ConcurrentMap} of boxed longs: {@code ConcurrentHashMap}, Chronicle Map and MapDB's
 * {@code HTreeMap}, each with its own way to close and to count its off-heap memory (and, through
 * {@link NavigableMapAdapter}, the ordered ones).
 */
class BoxedMapAdapter implements IndexAdapter {

    private final ConcurrentMap<Long, Long> map;
    private final LongSupplier offHeap;
    private final Runnable close;

    BoxedMapAdapter(final ConcurrentMap<Long, Long> map, final LongSupplier offHeap, final Runnable close) {
        this.map = map;
        this.offHeap = offHeap;
        this.close = close;
    }

    static long unbox(final Long v) {
        return v == null ? MISSING : v;
    }

    @Override
    public final long get(final long key) {
        return unbox(map.get(key));
    }

    @Override
    public final long put(final long key, final long value) {
        return unbox(map.put(key, value));
    }

    @Override
    public final long remove(final long key) {
        return unbox(map.remove(key));
    }

    @Override
    public final long offHeapBytes() {
        return offHeap.getAsLong();
    }

    @Override
    public final void close() {
        close.run();
    }
}
