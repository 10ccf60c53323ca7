package dev.limbo.bench.index;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.index.LongLongNavigableMap;
import dev.limbo.index.OffHeapLongMap;
import dev.limbo.reclaim.Scheme;

/** Limbo's {@link OffHeapLongMap}, which also scans. */
final class LimboOrderedAdapter extends LimboMapAdapter implements OrderedAdapter {

    private final LongLongNavigableMap map;

    private LimboOrderedAdapter(final LimboAllocator allocator, final LongLongNavigableMap map) {
        super(allocator, map);
        this.map = map;
    }

    /** The map with the builder's defaults, or with {@code scheme} where it is not null. */
    static LimboOrderedAdapter create(final Scheme scheme) {
        final LimboAllocator allocator = LimboAllocator.create();
        final OffHeapLongMap.Builder b = OffHeapLongMap.builder().allocator(allocator).missingValue(MISSING);
        return new LimboOrderedAdapter(allocator, (scheme == null ? b : b.scheme(scheme)).build());
    }

    @Override
    public long scan(final long from, final RangeScan scan) {
        scan.start();
        return map.scan(from, true, Long.MAX_VALUE, true, false, scan);
    }
}
