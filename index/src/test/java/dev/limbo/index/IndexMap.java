package dev.limbo.index;

import dev.limbo.allocator.LimboAllocator;
import java.util.List;

/**
 * A map the map-level tests and the view suites run over: a name, whether it is ordered (a
 * {@link LongLongNavigableMap}), and how to make one on a given allocator with a given missing value.
 *
 * @param name the name tests show
 * @param ordered whether {@link #create} returns a {@link LongLongNavigableMap}
 * @param maker makes one
 */
record IndexMap(String name, boolean ordered, Maker maker) {

    /** Makes a map. */
    @FunctionalInterface
    interface Maker {
        LongLongMap create(LimboAllocator allocator, long missingValue);
    }

    LongLongMap create(LimboAllocator allocator, long missingValue) {
        return maker.create(allocator, missingValue);
    }

    LongLongNavigableMap createOrdered(LimboAllocator allocator, long missingValue) {
        return (LongLongNavigableMap) maker.create(allocator, missingValue);
    }

    @Override
    public String toString() {
        return name;
    }

    /** Every map under test; the ordered ones also serve as plain {@link LongLongMap}s. */
    static List<IndexMap> all() {
        return List.of(
                new IndexMap("reference", true, (allocator, missing) -> new ReferenceLongLongMap(missing)));
    }

    /** The ordered maps under test. */
    static List<IndexMap> orderedMaps() {
        return all().stream().filter(IndexMap::ordered).toList();
    }
}
