package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Scheme;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;

import static dev.limbo.structures.OffHeapStructure.RESERVED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MichaelHashMapTest {

    /** Debug allocator: freed records are poisoned and quarantined, so a use after free shows. */
    private final LimboAllocator alloc = LimboAllocator.builder().debug(true).build();
    private ReclaimDomain domain;

    @AfterEach
    void closeDomain() {
        if (domain != null) {
            domain.close();
        }
    }

    /** The map seen as a {@link LongMapChecks.Subject}; its shape: every bucket a valid list of its own keys. */
    static LongMapChecks.Subject subject(final MichaelHashMap m) {
        return new LongMapChecks.Subject() {
            @Override
            public long putIfAbsent(final long key, final long value) {
                return m.putIfAbsent(key, value);
            }

            @Override
            public long put(final long key, final long value) {
                return m.put(key, value);
            }

            @Override
            public long get(final long key) {
                return m.get(key);
            }

            @Override
            public boolean contains(final long key) {
                return m.contains(key);
            }

            @Override
            public long remove(final long key) {
                return m.remove(key);
            }

            @Override
            public long size() {
                return m.size();
            }

            @Override
            public List<long[]> nodes() {
                final List<long[]> all = new ArrayList<>();
                m.bucketsQuiescent().forEach(all::addAll);
                return all;
            }

            @Override
            public long[] checkShape() {
                final List<List<long[]>> buckets = m.bucketsQuiescent();
                assertEquals(m.buckets(), buckets.size());
                final List<Long> keys = new ArrayList<>();
                for (int b = 0; b < buckets.size(); b++) {
                    for (final long k : LongMapChecks.checkList(buckets.get(b))) {
                        assertEquals(b, m.bucketOf(k), "key " + k + " linked in the wrong bucket");
                        keys.add(k);
                    }
                }
                return keys.stream().mapToLong(Long::longValue).toArray();
            }

            @Override
            public void close() {
                m.close();
            }
        };
    }

    @ParameterizedTest
    @EnumSource(Scheme.class)
    void sequentialMatchesHashMap(final Scheme scheme) {
        domain = LongMapChecks.domain(scheme, alloc, true);
        try (MichaelHashMap m = new MichaelHashMap(domain, 8)) {
            LongMapChecks.sequential(subject(m), new HashMap<>(), 43, 6_000, -10, 60);
        }
    }

    @ParameterizedTest
    @EnumSource(Scheme.class)
    void singleBucketAndExtremeKeys(final Scheme scheme) {
        domain = LongMapChecks.domain(scheme, alloc, true);
        try (MichaelHashMap one = new MichaelHashMap(domain, 1)) {
            LongMapChecks.sequential(subject(one), new HashMap<>(), 44, 2_000, 0, 16);
        }
        try (MichaelHashMap m = new MichaelHashMap(domain, 4)) {
            LongMapChecks.extremes(subject(m));
        }
    }

    @Test
    void hashSpreadsSequentialKeys() {
        domain = LongMapChecks.domain(Scheme.HP, alloc, false);
        try (MichaelHashMap m = new MichaelHashMap(domain, 64)) {
            final int[] load = new int[64];
            for (long k = 0; k < 64 * 64; k++) {
                load[m.bucketOf(k)]++;
            }
            for (final int n : load) {
                assertTrue(n > 32 && n < 96, "bucket load " + n + " for 64 expected");
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Scheme.class)
    void concurrentStress(final Scheme scheme) throws Exception {
        domain = LongMapChecks.domain(scheme, alloc, true);
        try (MichaelHashMap m = new MichaelHashMap(domain, 16)) {
            LongMapChecks.concurrent(subject(m), 4, 200_000, 100 + scheme.ordinal());
        }
    }

    @ParameterizedTest
    @EnumSource(Scheme.class)
    void memoryReturnsToBaseline(final Scheme scheme) throws Exception {
        LongMapChecks.memory(scheme, d -> subject(new MichaelHashMap(d, 64)));
    }

    @ParameterizedTest
    @EnumSource(Scheme.class)
    void badInputAndClosed(final Scheme scheme) {
        domain = LongMapChecks.domain(scheme, alloc, true);
        final MichaelHashMap m = new MichaelHashMap(domain, 2);
        assertThrows(IllegalArgumentException.class, () -> m.put(Long.MAX_VALUE, 1));
        assertThrows(IllegalArgumentException.class, () -> m.put(1, RESERVED));
        assertThrows(IllegalArgumentException.class, () -> m.putIfAbsent(Long.MAX_VALUE, 1));
        assertThrows(IllegalArgumentException.class, () -> m.putIfAbsent(1, RESERVED));
        assertThrows(IllegalArgumentException.class, () -> m.get(Long.MAX_VALUE));
        assertThrows(IllegalArgumentException.class, () -> m.contains(Long.MAX_VALUE));
        assertThrows(IllegalArgumentException.class, () -> m.remove(Long.MAX_VALUE));
        assertEquals(0, m.size(), "rejected operations changed the map");
        assertEquals(RESERVED, m.put(1, 2));
        m.close();
        assertTrue(m.isClosed());
        m.close(); // idempotent
        assertThrows(IllegalStateException.class, () -> m.put(1, 1));
        assertThrows(IllegalStateException.class, () -> m.putIfAbsent(1, 1));
        assertThrows(IllegalStateException.class, () -> m.get(1));
        assertThrows(IllegalStateException.class, () -> m.contains(1));
        assertThrows(IllegalStateException.class, () -> m.remove(1));
        assertThrows(IllegalStateException.class, m::size);
    }

    @Test
    void constructorChecksBucketsAndDomain() {
        domain = LongMapChecks.domain(Scheme.DEBRA, alloc, false);
        for (final int bad : new int[] {0, -4, 3, 6, 100, Integer.MIN_VALUE}) {
            assertThrows(IllegalArgumentException.class, () -> new MichaelHashMap(domain, bad), "buckets " + bad);
        }
        try (MichaelHashMap m = new MichaelHashMap(domain, 1 << 10)) {
            assertEquals(1 << 10, m.buckets());
            assertFalse(m.contains(5));
        }
        try (ReclaimDomain twoSlots = ReclaimDomain.builder(Scheme.HP).allocator(alloc).recordBytes(24).slots(2).build();
             ReclaimDomain small = ReclaimDomain.builder(Scheme.HP).allocator(alloc).recordBytes(16).slots(3).build()) {
            assertThrows(IllegalArgumentException.class, () -> new MichaelHashMap(twoSlots, 4));
            assertThrows(IllegalArgumentException.class, () -> new MichaelHashMap(small, 4));
        }
    }
}
