package dev.limbo.bench.index;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.index.LongLongMap;

/**
 * One of Limbo's maps over an allocator of its own, whose bytes in use are the map's off-heap
 * memory. {@link IndexAdapter#MISSING} is the map's missing value.
 */
class LimboMapAdapter implements IndexAdapter {

    private final LimboAllocator allocator;
    private final LongLongMap map;

    /** Takes over {@code map} and {@code allocator}, the map's own: {@link #close()} closes both. */
    LimboMapAdapter(final LimboAllocator allocator, final LongLongMap map) {
        this.allocator = allocator;
        this.map = map;
    }

    @Override
    public final long get(final long key) {
        return map.get(key);
    }

    @Override
    public final long put(final long key, final long value) {
        return map.put(key, value);
    }

    @Override
    public final long remove(final long key) {
        return map.remove(key);
    }

    @Override
    public final long offHeapBytes() {
        return allocator.stats().bytesInUse();
    }

    @Override
    public final void close() {
        map.close();
        allocator.close();
    }
}
