package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.ReclaimStats;
import dev.limbo.reclaim.Scheme;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link BrownAbTree}: the sequential specification against a {@link TreeMap} (10^5 seeded
 * operations with edge keys and values, navigation and range scans both ways), the height and
 * occupancy invariants after quiescence, bulk load, concurrent stress with exact per-thread
 * partitions, weak consistency of scans under concurrent updates, memory back at its baseline
 * after close, and bad input. Small degrees (b = 4, a = 2) make every rebalancing step frequent.
 */
@Timeout(120)
class BrownAbTreeTest {

    private static final long MISSING = 0x5EED_0000_0000_0001L;
    /** Keys and values at the ends of the range and around zero. */
    private static final long[] EDGES = {Long.MIN_VALUE, Long.MIN_VALUE + 1, -1, 0, 1, Long.MAX_VALUE - 1,
            Long.MAX_VALUE};

    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
    }

    /** The schemes of the sequential tests: an epoch scheme, a validating one and a neutralizing one. */
    static Stream<Scheme> schemes() {
        return Stream.of(Scheme.DEBRA, Scheme.HP, Scheme.NBR);
    }

    private static ReclaimDomain domain(final Scheme scheme, final LimboAllocator alloc, final int degree,
                                        final boolean debug) {
        return ReclaimDomain.builder(scheme).allocator(alloc).recordBytes(BrownAbTree.recordBytes(degree))
                .slots(BrownAbTree.SLOTS).debug(debug).build();
    }

    private BrownAbTree tree(final Scheme scheme, final int degree) {
        final ReclaimDomain d = domain(scheme, LimboAllocator.create(), degree, false);
        toClose.add(d);
        final BrownAbTree t = new BrownAbTree(d, degree);
        toClose.add(t);
        return t;
    }

    /** The tree as a {@link LongMapChecks.Subject} (missing = RESERVED): leaves' entries as {key, value, 0, 0}. */
    static LongMapChecks.Subject subject(final BrownAbTree t) {
        return new LongMapChecks.Subject() {
            @Override
            public long putIfAbsent(final long key, final long value) {
                return t.putIfAbsent(key, value, OffHeapStructure.RESERVED);
            }

            @Override
            public long put(final long key, final long value) {
                return t.put(key, value, OffHeapStructure.RESERVED);
            }

            @Override
            public long get(final long key) {
                return t.get(key, OffHeapStructure.RESERVED);
            }

            @Override
            public boolean contains(final long key) {
                return t.containsKey(key);
            }

            @Override
            public long remove(final long key) {
                return t.remove(key, OffHeapStructure.RESERVED);
            }

            @Override
            public long size() {
                return t.size();
            }

            @Override
            public List<long[]> nodes() {
                final List<long[]> nodes = new ArrayList<>();
                for (final long k : scan(t, Long.MIN_VALUE, Long.MAX_VALUE, false)) {
                    nodes.add(new long[] {k, t.get(k, OffHeapStructure.RESERVED), 0, 0});
                }
                return nodes;
            }

            @Override
            public long[] checkShape() {
                t.checkInvariants();
                return scan(t, Long.MIN_VALUE, Long.MAX_VALUE, false).stream().mapToLong(Long::longValue).toArray();
            }

            @Override
            public void close() {
                t.close();
            }
        };
    }

    // ---------------------------------------------------------------- sequential specification

    private static long value(final SplittableRandom rnd) {
        return rnd.nextInt(4) == 0 ? EDGES[rnd.nextInt(EDGES.length)] : rnd.nextLong(-1000, 1000);
    }

    /** {@code ops} random operations, each compared with a TreeMap; the tree checked every {@code checkEvery}. */
    private static void sequential(final BrownAbTree t, final long seed, final int ops, final int checkEvery,
                                   final int keyRange) {
        final TreeMap<Long, Long> model = new TreeMap<>();
        final SplittableRandom rnd = new SplittableRandom(seed);
        final AbTreeLeafCopy c = new AbTreeLeafCopy(t.degree());
        for (int i = 0; i < ops; i++) {
            final long k = rnd.nextInt(10) == 0 ? EDGES[rnd.nextInt(EDGES.length)]
                    : rnd.nextInt(keyRange) - keyRange / 2;
            final long v = value(rnd);
            final String at = "seed " + seed + " op " + i + " key " + k;
            switch (rnd.nextInt(12)) {
                case 0, 1 -> assertEquals(orMissing(model.put(k, v)), t.put(k, v, MISSING), at + " put");
                case 2 -> assertEquals(model.putIfAbsent(k, v) == null, t.putIfAbsent(k, v), at + " putIfAbsent");
                case 3 -> assertEquals(model.replace(k, v) != null, t.replace(k, v), at + " replace");
                case 4 -> {
                    final long e = model.containsKey(k) && rnd.nextBoolean() ? model.get(k) : value(rnd);
                    assertEquals(model.replace(k, e, v), t.replace(k, e, v), at + " replace if");
                }
                case 5, 6 -> assertEquals(orMissing(model.remove(k)), t.remove(k, MISSING), at + " remove");
                case 7 -> {
                    final long e = model.containsKey(k) && rnd.nextBoolean() ? model.get(k) : value(rnd);
                    assertEquals(model.remove(k, e), t.removeIfEquals(k, e), at + " remove if");
                }
                case 8 -> assertEquals(orMissing(model.get(k)), t.get(k, MISSING), at + " get");
                case 9 -> assertEquals(model.containsKey(k), t.containsKey(k), at + " containsKey");
                case 10 -> {
                    assertEntry(model.ceilingEntry(k), t, t.ceiling(k, c), c, at + " ceiling");
                    assertEntry(model.floorEntry(k), t, t.floor(k, c), c, at + " floor");
                }
                default -> {
                    final long to = k + rnd.nextInt(keyRange / 4 + 1);
                    final long from = Math.min(k, to);
                    assertEquals(keys(model.subMap(from, true, to, true)), scan(t, from, to, false), at + " scan");
                    assertEquals(keys(model.subMap(from, true, to, true).descendingMap()), scan(t, from, to, true),
                            at + " descending scan");
                }
            }
            if (i % checkEvery == 0) {
                t.checkInvariants();
            }
        }
        assertContents(t, model);
        assertEquals(keys(model), scan(t, Long.MIN_VALUE, Long.MAX_VALUE, false));
        for (final long k : new ArrayList<>(model.keySet())) {
            assertEquals(model.remove(k), t.remove(k, MISSING));
        }
        assertContents(t, model);
    }

    private static long orMissing(final Long v) {
        return v == null ? MISSING : v;
    }

    private static void assertEntry(final Map.Entry<Long, Long> expected, final BrownAbTree t, final int i,
                                    final AbTreeLeafCopy c, final String at) {
        if (expected == null) {
            assertEquals(-1, i, at);
        } else {
            assertTrue(i >= 0, at + ": expected " + expected);
            assertEquals((long) expected.getKey(), c.key(i), at);
            assertEquals((long) expected.getValue(), c.value(i), at);
        }
    }

    private static List<Long> keys(final NavigableMap<Long, Long> m) {
        return new ArrayList<>(m.keySet());
    }

    /**
     * The keys in [from, to], leaf by leaf (ascending: from each leaf's {@code above()};
     * descending: from {@code below() - 1}), each checked against the leaf's bounds.
     */
    static List<Long> scan(final BrownAbTree t, final long from, final long to, final boolean descending) {
        final List<Long> out = new ArrayList<>();
        final AbTreeLeafCopy c = new AbTreeLeafCopy(t.degree());
        long k = descending ? to : from;
        while (true) {
            t.copyLeaf(k, c);
            if (descending) {
                for (int i = c.floorIndex(k); i >= 0 && c.key(i) >= from; i--) {
                    out.add(c.key(i));
                }
                if (!c.hasBelow() || c.below() <= from) {
                    return out;
                }
                assertTrue(c.below() > Long.MIN_VALUE);
                k = c.below() - 1;
            } else {
                for (int i = c.ceilingIndex(k); i < c.size() && c.key(i) <= to; i++) {
                    out.add(c.key(i));
                }
                if (!c.hasAbove() || c.above() > to) {
                    return out;
                }
                assertTrue(c.above() > k);
                k = c.above();
            }
        }
    }

    /** Quiescent: the invariants hold and the tree holds exactly {@code model}. */
    private static void assertContents(final BrownAbTree t, final Map<Long, Long> model) {
        t.checkInvariants();
        assertEquals(model.size(), t.size());
        for (final Map.Entry<Long, Long> e : model.entrySet()) {
            assertEquals((long) e.getValue(), t.get(e.getKey(), MISSING), "value of key " + e.getKey());
        }
    }

    /** 10^5 operations on a small key range (deep rebalancing at b = 4) with the edge keys. */
    @Test
    void sequentialAgainstTreeMap() {
        sequential(tree(Scheme.DEBRA, 4), 1, 100_000, 4_999, 400);
    }

    /** The same, shorter, where searches validate (hp) and where read phases restart (nbr). */
    @ParameterizedTest
    @EnumSource(value = Scheme.class, names = {"HP", "NBR"})
    void sequentialUnderValidatingAndNeutralizingSchemes(final Scheme scheme) {
        sequential(tree(scheme, 4), 3, 20_000, 1_999, 400);
    }

    /** The default degree, a larger key range. */
    @Test
    void sequentialDefaultDegree() {
        sequential(tree(Scheme.DEBRA, BrownAbTree.DEFAULT_DEGREE), 2, 30_000, 2_999, 5_000);
    }

    /**
     * Ascending and descending runs: splits at the right (left) edge again and again, then joins
     * and redistributions as every other key goes; after each phase no violation is left, and the
     * height is within the bound (checkInvariants).
     */
    @ParameterizedTest
    @MethodSource("schemes")
    void runsKeepTheHeightBound(final Scheme scheme) {
        final BrownAbTree t = tree(scheme, 4);
        final TreeMap<Long, Long> model = new TreeMap<>();
        for (long k = 0; k < 3_000; k++) {
            assertTrue(t.putIfAbsent(k, -k));
            model.put(k, -k);
        }
        for (long k = -1; k >= -3_000; k--) {
            assertTrue(t.putIfAbsent(k, k));
            model.put(k, k);
        }
        final int full = t.checkInvariants();
        assertContents(t, model);
        for (long k = -3_000; k < 3_000; k += 3) {
            assertEquals((long) model.remove(k), t.remove(k, MISSING));
        }
        assertContents(t, model);
        assertTrue(t.checkInvariants() <= full);
        for (long k = -2_999; k < 3_000; k++) {
            assertEquals(orMissing(model.remove(k)), t.remove(k, MISSING));
        }
        assertContents(t, model);
        assertEquals(1, t.checkInvariants(), "an empty tree is one leaf");
    }

    // ---------------------------------------------------------------- bulk load

    @ParameterizedTest
    @MethodSource("schemes")
    void bulkLoadBuildsFullNodes(final Scheme scheme) {
        for (final int n : new int[] {0, 1, 4, 5, 17, 1_000, 4_097}) {
            final BrownAbTree t = tree(scheme, 4);
            final long[] keys = new long[n];
            final long[] values = new long[n];
            for (int i = 0; i < n; i++) {
                keys[i] = i == 0 ? Long.MIN_VALUE : 3L * i - 500;
                values[i] = ~keys[i];
            }
            t.bulkLoad(keys, values);
            final int h = t.checkInvariants();
            assertEquals(n, t.size());
            int expectedHeight = 1;
            for (long nodes = Math.max(1, (n + 3) / 4); nodes > 1; nodes = (nodes + 3) / 4) {
                expectedHeight++;
            }
            assertEquals(expectedHeight, h, "height of full nodes, n = " + n);
            for (int i = 0; i < n; i++) {
                assertEquals(values[i], t.get(keys[i], MISSING));
            }
            assertTrue(t.putIfAbsent(Long.MAX_VALUE, 1));
            assertTrue(t.removeIfEquals(Long.MAX_VALUE, 1));
            t.checkInvariants();
        }
    }

    @Test
    void bulkLoadRejectsBadInput() {
        final BrownAbTree t = tree(Scheme.DEBRA, 4);
        final IllegalArgumentException unsorted = assertThrows(IllegalArgumentException.class,
                () -> t.bulkLoad(new long[] {1, 3, 2}, new long[3]));
        assertTrue(unsorted.getMessage().contains("strictly ascending"), unsorted.getMessage());
        assertThrows(IllegalArgumentException.class, () -> t.bulkLoad(new long[] {1, 1}, new long[2]));
        assertThrows(IllegalArgumentException.class, () -> t.bulkLoad(new long[] {1, 2}, new long[1]));
        assertTrue(t.putIfAbsent(5, 5));
        final IllegalStateException notEmpty = assertThrows(IllegalStateException.class,
                () -> t.bulkLoad(new long[] {1}, new long[1]));
        assertTrue(notEmpty.getMessage().contains("empty"), notEmpty.getMessage());
    }

    @Test
    void rejectsBadDegreesAndSmallDomains() {
        assertThrows(IllegalArgumentException.class, () -> BrownAbTree.recordBytes(3));
        assertThrows(IllegalArgumentException.class, () -> BrownAbTree.recordBytes(BrownAbTree.MAX_DEGREE + 1));
        final ReclaimDomain d = domain(Scheme.DEBRA, LimboAllocator.create(), 4, false);
        toClose.add(d);
        final IllegalArgumentException small = assertThrows(IllegalArgumentException.class,
                () -> new BrownAbTree(d, 16));
        assertTrue(small.getMessage().contains("recordBytes"), small.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new AbTreeLeafCopy(2));
        final BrownAbTree t = new BrownAbTree(d, 4);
        toClose.add(t);
        final BrownAbTree wide = tree(Scheme.DEBRA, 8);
        final IllegalArgumentException tooSmall = assertThrows(IllegalArgumentException.class,
                () -> wide.copyLeaf(0, new AbTreeLeafCopy(4)));
        assertTrue(tooSmall.getMessage().contains("LeafCopy"), tooSmall.getMessage());
    }

    // ---------------------------------------------------------------- concurrency

    /**
     * Threads update their own keys (exact per-thread models) and a shared range; afterwards the
     * invariants hold, every own key has the thread's last value, and the size matches.
     */
    @ParameterizedTest
    @MethodSource("schemes")
    void concurrentStressKeepsInvariants(final Scheme scheme) throws InterruptedException {
        final BrownAbTree t = tree(scheme, 4);
        final int threads = 3;
        final List<TreeMap<Long, Long>> models = Workers.run(threads, false, id -> {
            final SplittableRandom rnd = new SplittableRandom(id);
            final TreeMap<Long, Long> own = new TreeMap<>();
            final AbTreeLeafCopy c = new AbTreeLeafCopy(4);
            for (int i = 0; i < 20_000; i++) {
                final long k = rnd.nextInt(300) * threads + id; // own keys
                final long shared = -1 - rnd.nextInt(200);
                switch (rnd.nextInt(6)) {
                    case 0, 1 -> assertEquals(orMissing(own.put(k, (long) i)), t.put(k, i, MISSING));
                    case 2 -> assertEquals(orMissing(own.remove(k)), t.remove(k, MISSING));
                    case 3 -> t.put(shared, i, MISSING);
                    case 4 -> t.remove(shared, MISSING);
                    default -> {
                        final int at = t.ceiling(k, c);
                        final Long expected = own.ceilingKey(k);
                        assertTrue(at >= 0 || expected == null);
                        if (expected != null && c.key(at) % threads == id) { // ceiling among own keys
                            assertEquals((long) expected, c.key(at));
                        }
                    }
                }
            }
            return own;
        });
        t.checkInvariants();
        long own = 0;
        for (int id = 0; id < threads; id++) {
            for (final Map.Entry<Long, Long> e : models.get(id).entrySet()) {
                assertEquals((long) e.getValue(), t.get(e.getKey(), MISSING));
            }
            own += models.get(id).size();
        }
        final List<Long> all = scan(t, Long.MIN_VALUE, Long.MAX_VALUE, false);
        assertEquals(t.size(), all.size());
        assertEquals(own, all.stream().filter(k -> k >= 0).count());
    }

    /**
     * Weak consistency: while writers insert and remove the odd keys, scans in both directions see
     * every even key (present throughout) and no key outside the written set (absent throughout).
     * Writers stop once the scanner has done its scans.
     */
    @ParameterizedTest
    @MethodSource("schemes")
    void scansAreWeaklyConsistent(final Scheme scheme) throws InterruptedException {
        final BrownAbTree t = tree(scheme, 4);
        final List<Long> evens = new ArrayList<>();
        for (long k = 0; k < 2_000; k += 2) {
            t.put(k, k, MISSING);
            evens.add(k);
        }
        final java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        Workers.run(3, false, id -> {
            if (id == 0) {
                for (int round = 0; round < 60; round++) {
                    final boolean descending = round % 2 == 1;
                    final List<Long> seen = scan(t, 0, 2_000, descending);
                    final List<Long> even = seen.stream().filter(k -> k % 2 == 0).toList();
                    assertEquals(descending ? evens.reversed() : evens, even, "round " + round);
                    for (int i = 1; i < seen.size(); i++) {
                        assertTrue(descending ? seen.get(i) < seen.get(i - 1) : seen.get(i) > seen.get(i - 1));
                    }
                    assertTrue(seen.stream().allMatch(k -> k >= 0 && k < 2_000));
                }
                done.set(true);
                return null;
            }
            final SplittableRandom rnd = new SplittableRandom(id);
            while (!done.get()) {
                final long k = 2L * rnd.nextInt(1_000) + 1;
                if (rnd.nextBoolean()) {
                    t.put(k, k, MISSING);
                } else {
                    t.remove(k, MISSING);
                }
            }
            return null;
        });
        t.checkInvariants();
    }

    /**
     * Deterministic helping: a put of key 10 stalls at each step of its SCX (V = {p, l}): before
     * any freeze, after freezing p, after both freezes, after marking l. While it stalls, a put of
     * the same key on this thread (nested in the stalled creator's section) sees the old value
     * (the stalled update is not linearized before its update CAS); once p is frozen it meets the
     * frozen node, completes the stalled SCX and then applies its own value; before that it wins
     * and the stalled SCX aborts and retries. The creator then finds its SCX done (or retries).
     * A helper that took the marked word U | MARK for "not frozen for U" livelocked here.
     */
    @ParameterizedTest
    @MethodSource("schemes")
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a livelock fails, not hangs
    void stalledScxIsHelped(final Scheme scheme) {
        final BrownAbTree t = tree(scheme, 4);
        for (int stallAt = 0; stallAt <= 3; stallAt++) {
            for (long k = 0; k < 40; k++) {
                t.put(k, k, MISSING);
            }
            final int at = stallAt;
            final long[] nested = new long[2];
            t.stallNextScx(at, () -> {
                nested[0] = t.get(10, MISSING);
                nested[1] = t.put(10, 77, MISSING);
            });
            final long stalled = t.put(10, -10, MISSING);
            assertEquals(10, nested[0], "stall at " + at + ": the stalled update is not visible yet");
            if (at == 0) {
                assertEquals(10, nested[1], "nothing frozen: the nested put wins");
                assertEquals(77, stalled, "the stalled put aborted and retried after the nested one");
                assertEquals(-10, t.get(10, MISSING));
            } else {
                assertEquals(-10, nested[1], "the nested put helped the stalled SCX first");
                assertEquals(10, stalled);
                assertEquals(77, t.get(10, MISSING));
            }
            t.checkInvariants();
            assertEquals(40, t.size());
        }
    }

    // ---------------------------------------------------------------- memory

    /** After close, every node and SCX record is freed (schemes that free; none leaks what it retired). */
    @ParameterizedTest
    @MethodSource("schemes")
    void liveBytesBackAtBaselineAfterClose(final Scheme scheme) throws InterruptedException {
        final LimboAllocator alloc = LimboAllocator.builder().debug(true).build();
        final long baseline = alloc.stats().bytesInUse();
        final ReclaimDomain d = domain(scheme, alloc, 4, true);
        final BrownAbTree t = new BrownAbTree(d, 4);
        churn(t, 4_000, 500);
        t.checkInvariants();
        assertTrue(t.liveRecords() > 0);
        t.close();
        assertThrows(IllegalStateException.class, () -> t.get(1, 0));
        d.flush();
        final ReclaimStats stats = d.stats();
        assertEquals(stats.retired(), stats.freed(), () -> "retired records left after a flush: " + stats);
        d.close();
        alloc.trim();
        assertEquals(baseline, alloc.stats().bytesInUse(), "bytes in use after close");
    }

    /** Every scheme that can serve the tree: a short mixed run, invariants, and a clean close. */
    @ParameterizedTest
    @MethodSource("everyScheme")
    void everySchemeServesTheTree(final Scheme scheme) throws InterruptedException {
        final BrownAbTree t = tree(scheme, 4);
        churn(t, 3_000, 100);
        t.checkInvariants();
        assertFalse(t.isClosed());
    }

    /** Two threads put and remove {@code ops} random keys of [0, range) each. */
    private static void churn(final BrownAbTree t, final int ops, final int range) throws InterruptedException {
        Workers.run(2, false, id -> {
            final SplittableRandom rnd = new SplittableRandom(id);
            for (int i = 0; i < ops; i++) {
                final long k = rnd.nextInt(range);
                if (rnd.nextBoolean()) {
                    t.put(k, i, MISSING);
                } else {
                    t.remove(k, MISSING);
                }
            }
            return null;
        });
    }

    static Stream<Scheme> everyScheme() {
        return Arrays.stream(Scheme.values()).filter(Kind.ABTREE::servedBy);
    }
}
