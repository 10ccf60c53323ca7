package dev.limbo.structures;

import dev.limbo.core.Words;
import dev.limbo.reclaim.rc.Cdrc;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.HashMap;
import java.util.List;
import java.util.TreeMap;

import static dev.limbo.structures.StructureLifecycle.RESERVED;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The CDRC Harris-Michael list in both modes, through {@link LongMapChecks}, on a debug allocator. */
class CdrcHarrisMichaelListTest {

    @ParameterizedTest(name = "snapshots {0}")
    @ValueSource(booleans = {true, false})
    void sequentialMatchesTreeMap(final boolean snapshots) {
        final CdrcFixture f = new CdrcFixture(CdrcKind.LIST, snapshots);
        final TreeMap<Long, Long> model = new TreeMap<>();
        final LongMapChecks.Subject s = f.keyed();
        try (CdrcFixture.Held spare = CdrcFixture.holdSpareSnapshots(f.rc, CdrcKind.LIST)) {
            LongMapChecks.sequential(s, model, 42, 6_000, -10, 30);
            assertEquals(0, spare.evictions(), "an operation held more than SNAPSHOTS snapshots");
        }
        // the list is ordered: its node order is the TreeMap's key order
        assertArrayEquals(model.keySet().stream().mapToLong(Long::longValue).toArray(), s.checkShape());
        assertFalse(model.isEmpty(), "the workload should leave keys behind, to be freed by close");
        f.closeAndCheckMemory();
    }

    @ParameterizedTest(name = "snapshots {0}")
    @ValueSource(booleans = {true, false})
    void setViewAndExtremeKeys(final boolean snapshots) {
        final CdrcFixture f = new CdrcFixture(CdrcKind.LIST, snapshots);
        final CdrcHarrisMichaelList l = (CdrcHarrisMichaelList) f.structure;
        assertTrue(l.insert(3));
        assertFalse(l.insert(3));
        assertEquals(0, l.get(3));
        assertTrue(l.contains(3));
        assertEquals(0, l.remove(3));
        assertFalse(l.contains(3));
        assertTrue(l.insert(3));
        assertEquals(0, l.putIfAbsent(3, 9));
        assertEquals(0, l.put(3, 9));
        assertEquals(9, l.remove(3));
        assertEquals(0, l.size());
        LongMapChecks.extremes(f.keyed());
        f.closeAndCheckMemory();
    }

    /**
     * A remover that stalls after its mark (5) and tombstone (9) leaves a marked node linked: every
     * operation treats it as absent, the first traversal that meets it unlinks it (its count drops
     * to the traversal's protection, then it is freed), and an insert of its key links a fresh node.
     */
    @ParameterizedTest(name = "snapshots {0}")
    @ValueSource(booleans = {true, false})
    void markedNodesAreUnlinkedByTraversals(final boolean snapshots) {
        final CdrcFixture f = new CdrcFixture(CdrcKind.LIST, snapshots);
        final CdrcHarrisMichaelList l = (CdrcHarrisMichaelList) f.structure;
        for (long k = 1; k <= 5; k++) {
            assertTrue(l.insert(k));
        }
        final List<long[]> nodes = l.nodesQuiescent();
        for (final long[] n : nodes) {
            assertEquals(1, f.rc.count(n[3]), "a linked node is counted once, by its predecessor");
        }
        markAsStalledRemover(nodes.get(0)); // the head link's target
        markAsStalledRemover(nodes.get(2)); // key 3
        markAsStalledRemover(nodes.get(3)); // key 4: two marked in a row
        assertFalse(l.contains(1));
        assertEquals(RESERVED, l.get(4));
        assertEquals(2, l.size());
        assertArrayEquals(new long[] {2, 5}, LongMapChecks.checkList(l.nodesQuiescent()));
        f.rc.flush();
        final long live = f.allocator.stats().bytesInUse();
        markAsStalledRemover(l.nodesQuiescent().get(1)); // key 5, the last node
        assertEquals(RESERVED, l.putIfAbsent(5, 50));
        markAsStalledRemover(l.nodesQuiescent().get(0)); // key 2
        assertEquals(RESERVED, l.remove(2), "a marked node is already removed");
        assertEquals(RESERVED, l.put(2, 20));
        assertArrayEquals(new long[] {2, 5}, LongMapChecks.checkList(l.nodesQuiescent()));
        assertEquals(20, l.get(2));
        assertEquals(50, l.get(5));
        f.rc.flush();
        assertEquals(live, f.allocator.stats().bytesInUse(), "the two unlinked nodes were freed, the two new ones live");
        f.closeAndCheckMemory();
    }

    /** What a remover does before its unlink: mark cur.next (5), then swap the value to the tombstone (9). */
    private static void markAsStalledRemover(final long[] node) {
        final long address = node[3];
        assertTrue(Words.cas(address + CdrcHarrisMichaelList.NEXT, node[2], node[2] | CdrcHarrisMichaelList.MARK));
        Words.xchg(address + CdrcHarrisMichaelList.VALUE, CdrcHarrisMichaelList.TOMBSTONE);
    }

    /** Private and shared keys under contention (LongMapChecks.concurrent), then the memory check. */
    @ParameterizedTest(name = "snapshots {0}")
    @ValueSource(booleans = {true, false})
    @Timeout(60)
    void concurrentStressThenNothingLeaks(final boolean snapshots) throws Exception {
        final CdrcFixture f = new CdrcFixture(CdrcKind.LIST, snapshots);
        final LongMapChecks.Subject s = f.keyed();
        LongMapChecks.concurrent(s, 3, 20_000, snapshots ? 1 : 2);
        LongMapChecks.sequential(s, new HashMap<>(LongMapChecks.snapshot(s)), 11, 2_000, -4, 40);
        f.closeAndCheckMemory();
    }

    @Test
    void badInputAndClosed() {
        final CdrcFixture f = new CdrcFixture(CdrcKind.LIST, true);
        final CdrcHarrisMichaelList l = (CdrcHarrisMichaelList) f.structure;
        final IllegalArgumentException key = assertThrows(IllegalArgumentException.class, () -> l.insert(Long.MAX_VALUE));
        assertTrue(key.getMessage().contains("reserved"), key.getMessage());
        assertThrows(IllegalArgumentException.class, () -> l.put(Long.MAX_VALUE, 1));
        final IllegalArgumentException value = assertThrows(IllegalArgumentException.class, () -> l.put(1, RESERVED));
        assertTrue(value.getMessage().contains("reserved"), value.getMessage());
        assertThrows(IllegalArgumentException.class, () -> l.putIfAbsent(Long.MAX_VALUE, 1));
        assertThrows(IllegalArgumentException.class, () -> l.putIfAbsent(1, RESERVED));
        assertThrows(IllegalArgumentException.class, () -> l.get(Long.MAX_VALUE));
        assertThrows(IllegalArgumentException.class, () -> l.contains(Long.MAX_VALUE));
        assertThrows(IllegalArgumentException.class, () -> l.remove(Long.MAX_VALUE));
        assertEquals(0, l.size(), "rejected operations changed the list");
        assertEquals(RESERVED, l.put(1, 2));
        l.close();
        assertTrue(l.isClosed());
        l.close(); // idempotent
        final IllegalStateException closed = assertThrows(IllegalStateException.class, () -> l.insert(1));
        assertEquals("CdrcHarrisMichaelList is closed", closed.getMessage());
        assertThrows(IllegalStateException.class, () -> l.put(1, 1));
        assertThrows(IllegalStateException.class, () -> l.putIfAbsent(1, 1));
        assertThrows(IllegalStateException.class, () -> l.get(1));
        assertThrows(IllegalStateException.class, () -> l.contains(1));
        assertThrows(IllegalStateException.class, () -> l.remove(1));
        assertThrows(IllegalStateException.class, l::size);
        f.closeAndCheckMemory();
        assertThrows(NullPointerException.class, () -> new CdrcHarrisMichaelList(null, false));
    }

    @Test
    void layout() {
        assertEquals(Cdrc.HEADER, CdrcHarrisMichaelList.KEY);
        assertEquals(Cdrc.HEADER + 8, CdrcHarrisMichaelList.VALUE);
        assertEquals(Cdrc.HEADER + 16, CdrcHarrisMichaelList.NEXT);
        assertEquals(Cdrc.HEADER + 24, CdrcHarrisMichaelList.NODE.bytes());
        assertArrayEquals(new long[] {CdrcHarrisMichaelList.NEXT}, CdrcHarrisMichaelList.NODE.countedFields());
        assertEquals(HarrisMichaelList.MARK, CdrcHarrisMichaelList.MARK);
        assertEquals(HarrisMichaelList.TOMBSTONE, CdrcHarrisMichaelList.TOMBSTONE);
        assertEquals(3, CdrcHarrisMichaelList.SNAPSHOTS);
    }
}
