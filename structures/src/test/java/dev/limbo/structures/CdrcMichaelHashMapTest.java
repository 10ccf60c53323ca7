package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.rc.Cdrc;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.HashMap;

import static dev.limbo.structures.StructureLifecycle.RESERVED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The CDRC Michael hash map in both modes, through {@link LongMapChecks}, on a debug allocator. */
class CdrcMichaelHashMapTest {

    @ParameterizedTest(name = "snapshots {0}")
    @ValueSource(booleans = {true, false})
    void sequentialMatchesHashMap(final boolean snapshots) {
        final CdrcFixture f = new CdrcFixture(CdrcKind.HASH_MAP, snapshots);
        final HashMap<Long, Long> model = new HashMap<>();
        try (CdrcFixture.Held spare = CdrcFixture.holdSpareSnapshots(f.rc, CdrcKind.HASH_MAP)) {
            LongMapChecks.sequential(f.keyed(), model, 43, 6_000, -10, 60);
            assertEquals(0, spare.evictions(), "an operation held more than SNAPSHOTS snapshots");
        }
        assertTrue(model.size() > 0, "the workload should leave keys behind, to be freed by close");
        f.closeAndCheckMemory();
    }

    @ParameterizedTest(name = "snapshots {0}")
    @ValueSource(booleans = {true, false})
    void singleBucketAndExtremeKeys(final boolean snapshots) {
        final LimboAllocator allocator = LimboAllocator.builder().debug(true).build();
        final long baseline = allocator.stats().bytesInUse();
        final Cdrc rc = new Cdrc(allocator);
        final CdrcMichaelHashMap one = new CdrcMichaelHashMap(rc, 1, snapshots);
        assertEquals(1, one.buckets());
        LongMapChecks.sequential(CdrcKind.map(one), new HashMap<>(), 44, 2_000, 0, 16);
        final CdrcMichaelHashMap many = new CdrcMichaelHashMap(rc, 1 << 10, snapshots);
        LongMapChecks.extremes(CdrcKind.map(many));
        one.close();
        many.close();
        rc.close();
        allocator.trim();
        assertEquals(baseline, allocator.stats().bytesInUse());
    }

    @ParameterizedTest(name = "snapshots {0}")
    @ValueSource(booleans = {true, false})
    @Timeout(60)
    void concurrentStressThenNothingLeaks(final boolean snapshots) throws Exception {
        final CdrcFixture f = new CdrcFixture(CdrcKind.HASH_MAP, snapshots);
        LongMapChecks.concurrent(f.keyed(), 3, 20_000, snapshots ? 3 : 4);
        f.closeAndCheckMemory();
    }

    @Test
    void badInputAndClosed() {
        final Cdrc rc = new Cdrc(LimboAllocator.create());
        for (final int bad : new int[] {0, -4, 3, 12}) {
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new CdrcMichaelHashMap(rc, bad, true));
            assertEquals("the number of buckets must be a positive power of two, was " + bad, e.getMessage());
        }
        assertThrows(NullPointerException.class, () -> new CdrcMichaelHashMap(null, 4, true));
        final CdrcMichaelHashMap m = new CdrcMichaelHashMap(rc, 4, true);
        assertThrows(IllegalArgumentException.class, () -> m.put(Long.MAX_VALUE, 1));
        assertThrows(IllegalArgumentException.class, () -> m.put(1, RESERVED));
        assertThrows(IllegalArgumentException.class, () -> m.putIfAbsent(1, RESERVED));
        assertThrows(IllegalArgumentException.class, () -> m.get(Long.MAX_VALUE));
        assertThrows(IllegalArgumentException.class, () -> m.contains(Long.MAX_VALUE));
        assertThrows(IllegalArgumentException.class, () -> m.remove(Long.MAX_VALUE));
        assertEquals(0, m.size());
        m.put(1, 1);
        m.close();
        final IllegalStateException closed = assertThrows(IllegalStateException.class, () -> m.get(1));
        assertEquals("CdrcMichaelHashMap is closed", closed.getMessage());
        assertThrows(IllegalStateException.class, () -> m.put(1, 2));
        assertThrows(IllegalStateException.class, () -> m.putIfAbsent(1, 2));
        assertThrows(IllegalStateException.class, () -> m.contains(1));
        assertThrows(IllegalStateException.class, () -> m.remove(1));
        assertThrows(IllegalStateException.class, m::size);
        rc.close();
    }
}
