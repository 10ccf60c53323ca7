package dev.limbo.index;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.limbo.allocator.LimboAllocator;

/**
 * One map of an {@link IndexMap} on a checked allocator of its own (a block freed twice throws),
 * with the allocator's bytes in use from before the map existed: the baseline that closing the map
 * must restore.
 */
final class MapFixture {

    final IndexMap kind;
    final LimboAllocator allocator;
    final long baseline;
    final LongLongMap map;

    MapFixture(IndexMap kind, long missingValue) {
        this.kind = kind;
        this.allocator = LimboAllocator.builder().checked(true).build();
        this.baseline = allocator.stats().bytesInUse();
        this.map = kind.create(allocator, missingValue);
    }

    LongLongNavigableMap ordered() {
        return (LongLongNavigableMap) map;
    }

    /** Closes the map (which closes its domain) and checks the allocator is back at the baseline. */
    void closeAndCheckMemory() {
        map.close();
        allocator.trim();
        assertEquals(baseline, allocator.stats().bytesInUse(), () -> kind + ": bytes in use after close");
        allocator.close();
    }
}
