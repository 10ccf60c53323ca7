package dev.limbo.index;

import dev.limbo.allocator.LimboAllocator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A map the map-level tests and the view suites run over: a name, whether it is ordered (a
 * {@link LongLongNavigableMap}), and how to make one on a given allocator with a given missing value.
 *
 * @param name the name tests show
 * @param ordered whether {@link #create} returns a {@link LongLongNavigableMap}
 * @param maker makes one
 */
record IndexMap(String name, boolean ordered, Maker maker) {

    /** The reference map: {@link ReferenceLongLongMap}. */
    static final IndexMap REFERENCE = new IndexMap("reference", true,
            (allocator, missing) -> new ReferenceLongLongMap(missing));

    private static final List<IndexMap> OFF_HEAP = List.of(
            new IndexMap("OffHeapLongMap", true, (allocator, missing) ->
                    OffHeapLongMap.builder().allocator(allocator).missingValue(missing).build()),
            new IndexMap("OffHeapLongHashMap", false, (allocator, missing) ->
                    OffHeapLongHashMap.builder().allocator(allocator).missingValue(missing).build()));

    /** Makes a map. */
    @FunctionalInterface
    interface Maker {
        LongLongMap create(LimboAllocator allocator, long missingValue);
    }

    LongLongMap create(LimboAllocator allocator, long missingValue) {
        return maker.create(allocator, missingValue);
    }

    @Override
    public String toString() {
        return name;
    }

    /**
     * Every map under test: the reference map (a test double over {@code ConcurrentSkipListMap},
     * a control for the tests' own expectations) and the off-heap maps. The ordered ones also serve
     * as plain {@link LongLongMap}s.
     */
    static List<IndexMap> all() {
        return Stream.concat(Stream.of(REFERENCE), offHeap().stream()).toList();
    }

    /** The off-heap maps, each with its builder's default scheme. */
    static List<IndexMap> offHeap() {
        return OFF_HEAP;
    }

    /** The ordered maps under test. */
    static List<IndexMap> orderedMaps() {
        return all().stream().filter(IndexMap::ordered).toList();
    }
}
