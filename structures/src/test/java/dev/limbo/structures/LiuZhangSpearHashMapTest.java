package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Scheme;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;

import static dev.limbo.structures.OffHeapStructure.RESERVED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LiuZhangSpearHashMap}: sequential runs against {@link HashMap} (edge keys and values
 * included) with the table growing and shrinking under them, memory given back by shrinking and
 * by close, and concurrent runs whose resizes happen while the threads update.
 */
class LiuZhangSpearHashMapTest {

    /** Keys and values at the ends of the range, mixed into the random ones. */
    private static final long[] EDGES = {Long.MIN_VALUE, Long.MAX_VALUE, 0, -1, 1, Long.MIN_VALUE + 1, Long.MAX_VALUE - 1};

    private Fixture fixture;

    @AfterEach
    void closeFixture() {
        if (fixture != null) {
            fixture.closeAndCheckMemory();
        }
    }

    /** Every scheme that can serve the map. */
    static Stream<Arguments> schemes() {
        return Kind.withEveryScheme().filter(a -> a.get()[0] == Kind.LZS_HASH_MAP).map(a -> Arguments.of(a.get()[1]));
    }

    /**
     * The map seen as a {@link LongMapChecks.Subject} (RESERVED for "absent"); its shape: every key
     * once, in its own bucket, and no bucket of the head table frozen or dead.
     */
    static LongMapChecks.Subject subject(final LiuZhangSpearHashMap m) {
        return new LongMapChecks.Subject() {
            @Override
            public long putIfAbsent(final long key, final long value) {
                // not atomic: the tests call it on shared keys only to learn whether it inserted
                return m.putIfAbsent(key, value) ? RESERVED : m.getOrDefault(key, Long.MAX_VALUE);
            }

            @Override
            public long put(final long key, final long value) {
                return m.put(key, value, RESERVED);
            }

            @Override
            public long get(final long key) {
                return m.getOrDefault(key, RESERVED);
            }

            @Override
            public boolean contains(final long key) {
                return m.containsKey(key);
            }

            @Override
            public long remove(final long key) {
                return m.remove(key, RESERVED);
            }

            @Override
            public long size() {
                return m.size();
            }

            @Override
            public List<long[]> nodes() {
                return m.pairsQuiescent();
            }

            @Override
            public long[] checkShape() {
                final long buckets = m.buckets();
                final List<long[]> pairs = m.pairsQuiescent();
                final Set<Long> seen = new HashSet<>();
                final long[] keys = new long[pairs.size()];
                for (int i = 0; i < keys.length; i++) {
                    final long[] p = pairs.get(i);
                    keys[i] = p[0];
                    assertTrue(seen.add(p[0]), "key held twice: " + p[0]);
                    assertEquals(LiuZhangSpearHashMap.bucketOf(p[0], buckets), p[2], "key " + p[0] + " in the wrong bucket");
                }
                return keys;
            }

            @Override
            public void close() {
                m.close();
            }
        };
    }

    private LiuZhangSpearHashMap map(final Scheme scheme, final boolean debug, final long capacity,
                                     final double growLoad, final double shrinkLoad, final long growCheck) {
        fixture = new Fixture(Kind.LZS_HASH_MAP, scheme, debug);
        fixture.structure.close();
        return new LiuZhangSpearHashMap(fixture.domain, capacity, growLoad, shrinkLoad, growCheck);
    }

    private static long orMissing(final Long value, final long missing) {
        return value == null ? missing : value;
    }

    private static long pick(final Random rnd, final int range) {
        return rnd.nextInt(8) == 0 ? EDGES[rnd.nextInt(EDGES.length)] : rnd.nextInt(range) - range / 2;
    }

    /**
     * {@code ops} random operations, each result compared with a {@link HashMap}: inserts dominate
     * the first 40 %, removes the rest, so that the table grows and then shrinks. Returns the
     * largest bucket count seen.
     */
    private static long sequential(final LiuZhangSpearHashMap m, final long seed, final int ops, final int range) {
        final Map<Long, Long> model = new HashMap<>();
        final Random rnd = new Random(seed);
        long most = m.buckets();
        for (int i = 0; i < ops; i++) {
            final boolean growing = i < ops * 2 / 5;
            final long k = pick(rnd, range);
            final long v = pick(rnd, 1000);
            final long e = rnd.nextBoolean() ? v : pick(rnd, 1000);
            final String at = "op " + i + " key " + k;
            final int op = rnd.nextInt(10);
            final boolean insert = growing ? op < 6 : op < 1 && (i & 3) == 0;
            if (insert) {
                switch (op & 1) {
                    case 0 -> assertEquals(orMissing(model.put(k, v), 7), m.put(k, v, 7), at + " put");
                    default -> assertEquals(model.putIfAbsent(k, v) == null, m.putIfAbsent(k, v), at + " putIfAbsent");
                }
            } else {
                switch (op) {
                    case 2, 3 -> assertEquals(orMissing(model.remove(k), 9), m.remove(k, 9), at + " remove");
                    case 4 -> assertEquals(model.remove(k, e), m.removeIfEquals(k, e), at + " removeIfEquals");
                    case 5 -> assertEquals(model.replace(k, v) != null, m.replace(k, v), at + " replace");
                    case 6 -> assertEquals(model.replace(k, e, v), m.replace(k, e, v), at + " replace(expected)");
                    case 7 -> assertEquals(model.getOrDefault(k, 11L), m.getOrDefault(k, 11), at + " getOrDefault");
                    case 8 -> assertEquals(model.containsKey(k), m.containsKey(k), at + " containsKey");
                    default -> assertEquals(model.size(), m.size(), at + " size");
                }
            }
            if ((i & 255) == 0) {
                most = Math.max(most, m.buckets());
            }
        }
        LongMapChecks.assertContents(subject(m), model);
        return most;
    }

    @Test
    void hundredThousandOperationsMatchHashMap() {
        final LiuZhangSpearHashMap m = map(Scheme.DEBRA, false, 0, LiuZhangSpearHashMap.GROW_LOAD,
                LiuZhangSpearHashMap.SHRINK_LOAD, LiuZhangSpearHashMap.GROW_CHECK);
        final long most = sequential(m, 42, 100_000, 1 << 12);
        assertTrue(most >= 256, "the table never grew: " + most + " buckets at most");
        assertTrue(m.buckets() < most, "the table never shrank: " + m.buckets() + " buckets of " + most);
        m.close();
    }

    /** Every scheme, with thresholds that make a small map resize all the time; a debug allocator and domain. */
    @ParameterizedTest
    @MethodSource("schemes")
    void resizingOftenMatchesHashMap(final Scheme scheme) {
        final LiuZhangSpearHashMap m = map(scheme, true, 0, 1, 0.5, 2);
        final long most = sequential(m, 43 + scheme.ordinal(), 6_000, 512);
        assertTrue(most >= 64, "the table never grew: " + most);
        m.close();
    }

    @Test
    void everyLongIsAKeyAndAValue() {
        final LiuZhangSpearHashMap m = map(Scheme.HP, true, 0, 1, 0.5, 2);
        for (final long k : EDGES) {
            assertTrue(m.putIfAbsent(k, k));
        }
        for (final long k : EDGES) {
            assertTrue(m.containsKey(k));
            assertEquals(k, m.getOrDefault(k, 3));
            assertFalse(m.putIfAbsent(k, 0));
            assertEquals(k, m.put(k, ~k, 3));
        }
        assertEquals(EDGES.length, m.size());
        for (final long k : EDGES) {
            assertTrue(m.removeIfEquals(k, ~k));
            assertEquals(5, m.remove(k, 5));
            assertFalse(m.containsKey(k));
        }
        assertEquals(0, m.size());
        m.close();
    }

    /**
     * 10^5 keys in, then all out: the table grows past 10^4 buckets and shrinks back, the records
     * it links come back to those of an empty map, every retired record is freed after a flush,
     * and close gives the allocator's bytes back (the fixture checks the baseline).
     */
    @Test
    void growsThenShrinksAndGivesMemoryBack() {
        final LiuZhangSpearHashMap m = map(Scheme.DEBRA, false, 0, LiuZhangSpearHashMap.GROW_LOAD,
                LiuZhangSpearHashMap.SHRINK_LOAD, LiuZhangSpearHashMap.GROW_CHECK);
        assertEquals(1, m.buckets());
        final long empty = m.offHeapBytes();
        final int n = 100_000;
        for (long k = 0; k < n; k++) {
            assertTrue(m.putIfAbsent(k * 0x9E3779B97F4A7C15L, k));
        }
        assertEquals(n, m.size());
        final long grown = m.buckets();
        assertTrue(grown >= n / 16, "only " + grown + " buckets for " + n + " keys");
        final long full = m.offHeapBytes();
        assertTrue(full > 20L * n, "the map links only " + full + " bytes for " + n + " keys");
        for (long k = 0; k < n; k++) {
            assertEquals(k, m.remove(k * 0x9E3779B97F4A7C15L, -1));
        }
        assertEquals(0, m.size());
        assertTrue(m.buckets() <= 2, m.buckets() + " buckets left for no key");
        assertTrue(m.offHeapBytes() <= 8 * empty, "the map still links " + m.offHeapBytes() + " bytes, " + empty + " when new");
        fixture.domain.flush();
        final var stats = fixture.domain.stats();
        assertEquals(stats.retired(), stats.freed(), "retired records not freed after a flush: " + stats);
        m.close();
    }

    /**
     * Threads insert disjoint key sets (each checks its own keys after every step), then remove
     * most of them again, with thresholds that make every few operations resize the table: no key
     * is lost or duplicated, and the contents at the end are exact.
     */
    @ParameterizedTest
    @MethodSource("schemes")
    void concurrentResizesLoseNoKey(final Scheme scheme) throws Exception {
        final LiuZhangSpearHashMap m = map(scheme, false, 0, 1, 0.5, 2);
        final int threads = 3;
        final int perThread = 1_500;
        final long[] grew = new long[threads];
        final List<Map<Long, Long>> models = Workers.run(threads, false, id -> {
            final Map<Long, Long> mine = new HashMap<>();
            final Random rnd = new Random(id);
            for (int round = 0; round < 2; round++) {
                for (long i = 0; i < perThread; i++) {
                    final long k = (i * threads + id) * 0xC2B2AE3D27D4EB4FL;
                    final long v = rnd.nextLong();
                    assertEquals(orMissing(mine.put(k, v), 1), m.put(k, v, 1));
                    final long probe = (rnd.nextInt((int) i + 1) * (long) threads + id) * 0xC2B2AE3D27D4EB4FL;
                    assertEquals(mine.getOrDefault(probe, 2L), m.getOrDefault(probe, 2));
                }
                grew[id] = Math.max(grew[id], m.buckets());
                for (long i = 0; i < perThread; i++) {
                    if (i % 7 != 0) {
                        final long k = (i * threads + id) * 0xC2B2AE3D27D4EB4FL;
                        assertEquals((long) mine.remove(k), m.remove(k, 3));
                        assertFalse(m.containsKey(k));
                    }
                }
            }
            return mine;
        });
        final Map<Long, Long> union = new HashMap<>();
        models.forEach(union::putAll);
        LongMapChecks.assertContents(subject(m), union);
        for (final long g : grew) {
            assertTrue(g >= 256, "the table did not grow under the threads: " + g);
        }
        m.close();
    }
}
