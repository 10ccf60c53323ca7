package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Words;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Scheme;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.List;
import java.util.TreeMap;

import static dev.limbo.structures.OffHeapStructure.RESERVED;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HarrisMichaelListTest {

    /** Debug allocator: freed records are poisoned and quarantined, so a use after free shows. */
    private final LimboAllocator alloc = LimboAllocator.builder().debug(true).build();
    private ReclaimDomain domain;

    @AfterEach
    void closeDomain() {
        if (domain != null) {
            domain.close();
        }
    }

    /** The list seen as a {@link LongMapChecks.Subject}. */
    static LongMapChecks.Subject subject(final HarrisMichaelList l) {
        return new LongMapChecks.Subject() {
            @Override
            public long putIfAbsent(final long key, final long value) {
                return l.putIfAbsent(key, value);
            }

            @Override
            public long put(final long key, final long value) {
                return l.put(key, value);
            }

            @Override
            public long get(final long key) {
                return l.get(key);
            }

            @Override
            public boolean contains(final long key) {
                return l.contains(key);
            }

            @Override
            public long remove(final long key) {
                return l.remove(key);
            }

            @Override
            public long size() {
                return l.size();
            }

            @Override
            public List<long[]> nodes() {
                return l.nodesQuiescent();
            }

            @Override
            public long[] checkShape() {
                return LongMapChecks.checkList(l.nodesQuiescent());
            }

            @Override
            public void close() {
                l.close();
            }
        };
    }

    @ParameterizedTest
    @EnumSource(Scheme.class)
    void sequentialMatchesTreeMap(final Scheme scheme) {
        domain = LongMapChecks.domain(scheme, alloc, true);
        try (HarrisMichaelList l = new HarrisMichaelList(domain)) {
            final TreeMap<Long, Long> model = new TreeMap<>();
            final LongMapChecks.Subject s = subject(l);
            LongMapChecks.sequential(s, model, 42, 6_000, -10, 30);
            // the list is ordered: its node order is the TreeMap's key order
            assertArrayEquals(model.keySet().stream().mapToLong(Long::longValue).toArray(), s.checkShape());
        }
    }

    @ParameterizedTest
    @EnumSource(Scheme.class)
    void setViewAndExtremeKeys(final Scheme scheme) {
        domain = LongMapChecks.domain(scheme, alloc, true);
        try (HarrisMichaelList l = new HarrisMichaelList(domain)) {
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
            LongMapChecks.extremes(subject(l));
        }
    }

    /**
     * A remover that stalls after its mark (5) and tombstone (9) leaves a marked node linked: every
     * operation treats it as absent, the first traversal that meets it unlinks and retires it
     * (exactly once), and an insert of its key links a fresh node.
     */
    @ParameterizedTest
    @EnumSource(Scheme.class)
    void markedNodesAreUnlinkedByTraversals(final Scheme scheme) {
        domain = LongMapChecks.domain(scheme, alloc, true);
        try (HarrisMichaelList l = new HarrisMichaelList(domain)) {
            for (long k = 1; k <= 5; k++) {
                assertTrue(l.insert(k));
            }
            final List<long[]> nodes = l.nodesQuiescent();
            markAsStalledRemover(nodes.get(0)); // the head link's target
            markAsStalledRemover(nodes.get(2)); // key 3
            markAsStalledRemover(nodes.get(3)); // key 4: two marked in a row
            final long retired = domain.stats().retired();
            assertFalse(l.contains(1));
            assertEquals(retired + 1, domain.stats().retired(), "contains(1) unlinked key 1");
            assertEquals(RESERVED, l.get(4));
            assertEquals(retired + 3, domain.stats().retired(), "get(4) unlinked keys 3 and 4");
            assertEquals(2, l.size());
            assertEquals(retired + 3, domain.stats().retired());
            assertArrayEquals(new long[] {2, 5}, LongMapChecks.checkList(l.nodesQuiescent()));

            markAsStalledRemover(l.nodesQuiescent().get(1)); // key 5, the last node
            assertEquals(RESERVED, l.putIfAbsent(5, 50));
            assertEquals(retired + 4, domain.stats().retired());
            markAsStalledRemover(l.nodesQuiescent().get(0)); // key 2
            assertEquals(RESERVED, l.remove(2), "a marked node is already removed");
            assertEquals(RESERVED, l.put(2, 20));
            assertEquals(retired + 5, domain.stats().retired());
            assertArrayEquals(new long[] {2, 5}, LongMapChecks.checkList(l.nodesQuiescent()));
            assertEquals(20, l.get(2));
            assertEquals(50, l.get(5));
        }
    }

    /** What a remover does before its unlink: mark cur.next (5), then swap the value to the tombstone (9). */
    private static void markAsStalledRemover(final long[] node) {
        final long address = node[3];
        assertTrue(Words.cas(address + ListNodeLayout.NEXT, node[2], node[2] | HarrisMichaelList.MARK));
        Words.xchg(address + ListNodeLayout.VALUE, HarrisMichaelList.TOMBSTONE);
    }

    @ParameterizedTest
    @EnumSource(Scheme.class)
    void concurrentStress(final Scheme scheme) throws Exception {
        domain = LongMapChecks.domain(scheme, alloc, true);
        try (HarrisMichaelList l = new HarrisMichaelList(domain)) {
            LongMapChecks.concurrent(subject(l), 4, 100_000, scheme.ordinal());
        }
    }

    @ParameterizedTest
    @EnumSource(Scheme.class)
    void memoryReturnsToBaseline(final Scheme scheme) throws Exception {
        LongMapChecks.memory(scheme, d -> subject(new HarrisMichaelList(d)));
    }

    @ParameterizedTest
    @EnumSource(Scheme.class)
    void badInputAndClosed(final Scheme scheme) {
        domain = LongMapChecks.domain(scheme, alloc, true);
        final HarrisMichaelList l = new HarrisMichaelList(domain);
        assertThrows(IllegalArgumentException.class, () -> l.insert(Long.MAX_VALUE));
        assertThrows(IllegalArgumentException.class, () -> l.put(Long.MAX_VALUE, 1));
        assertThrows(IllegalArgumentException.class, () -> l.put(1, RESERVED));
        assertThrows(IllegalArgumentException.class, () -> l.putIfAbsent(Long.MAX_VALUE, 1));
        assertThrows(IllegalArgumentException.class, () -> l.putIfAbsent(1, RESERVED));
        assertThrows(IllegalArgumentException.class, () -> l.get(Long.MAX_VALUE));
        assertThrows(IllegalArgumentException.class, () -> l.contains(Long.MAX_VALUE));
        assertThrows(IllegalArgumentException.class, () -> l.remove(Long.MAX_VALUE));
        assertEquals(0, l.size(), "rejected operations changed the list");
        assertEquals(RESERVED, l.put(1, 2));
        assertFalse(l.isClosed());
        l.close();
        assertTrue(l.isClosed());
        l.close(); // idempotent
        assertThrows(IllegalStateException.class, () -> l.insert(1));
        assertThrows(IllegalStateException.class, () -> l.put(1, 1));
        assertThrows(IllegalStateException.class, () -> l.putIfAbsent(1, 1));
        assertThrows(IllegalStateException.class, () -> l.get(1));
        assertThrows(IllegalStateException.class, () -> l.contains(1));
        assertThrows(IllegalStateException.class, () -> l.remove(1));
        assertThrows(IllegalStateException.class, l::size);
    }

    @Test
    void constructorChecksTheDomain() {
        try (ReclaimDomain twoSlots = ReclaimDomain.builder(Scheme.HP).allocator(alloc).recordBytes(24).slots(2).build();
             ReclaimDomain small = ReclaimDomain.builder(Scheme.HP).allocator(alloc).recordBytes(16).slots(3).build()) {
            assertThrows(IllegalArgumentException.class, () -> new HarrisMichaelList(twoSlots));
            assertThrows(IllegalArgumentException.class, () -> new HarrisMichaelList(small));
        }
        assertEquals(24, ListNodeLayout.SIZE);
        assertEquals(0, ListNodeLayout.KEY);
        assertEquals(8, ListNodeLayout.VALUE);
        assertEquals(16, ListNodeLayout.NEXT);
    }
}
