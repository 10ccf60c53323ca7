package dev.limbo.bench.index;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.index.LongLongNavigableMap;
import dev.limbo.index.OffHeapLongMap;
import dev.limbo.reclaim.Scheme;

/**
 * Limbo's {@link OffHeapLongMap} over an allocator of its own, whose bytes in use are the map's
 * off-heap memory. {@link IndexAdapter#MISSING} is the map's missing value.
 */
final class LimboOrderedAdapter implements OrderedAdapter {

    private final LimboAllocator allocator;
    private final LongLongNavigableMap map;

    /** The map with the builder's defaults, or with {@code scheme} where it is not null. */
    LimboOrderedAdapter(final Scheme scheme) {
        allocator = LimboAllocator.create();
        final OffHeapLongMap.Builder b = OffHeapLongMap.builder().allocator(allocator).missingValue(MISSING);
        map = (scheme == null ? b : b.scheme(scheme)).build();
    }

    @Override
    public long get(final long key) {
        return map.get(key);
    }

    @Override
    public long put(final long key, final long value) {
        return map.put(key, value);
    }

    @Override
    public long remove(final long key) {
        return map.remove(key);
    }

    @Override
    public long scan(final long from, final RangeScan scan) {
        scan.start();
        return map.scan(from, true, Long.MAX_VALUE, true, false, scan);
    }

    @Override
    public long offHeapBytes() {
        return allocator.stats().bytesInUse();
    }

    @Override
    public void close() {
        map.close();
        allocator.close();
    }
}
