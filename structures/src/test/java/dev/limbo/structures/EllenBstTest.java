package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.testing.Progress;
import dev.limbo.reclaim.Capability;
import dev.limbo.reclaim.Guard;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.ReclaimStats;
import dev.limbo.reclaim.Scheme;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.function.ToLongFunction;
import java.util.stream.Stream;

import static dev.limbo.structures.OffHeapStructure.RESERVED;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link EllenBst} over every {@link Scheme}: the sequential specification against a
 * {@link TreeMap} (10^5 seeded operations, edge keys included), deterministic helping of stalled
 * removers, concurrent stress with exact per-thread partitions and the structure's invariants
 * checked after quiescence, memory back at its baseline after close, bad input.
 */
@Timeout(600)
class EllenBstTest {

    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
    }

    /**
     * The schemes that can serve the tree: every scheme but the counting ones
     * ({@link Capability#COUNTED_LINKS}), which refuse it ({@link #countingSchemesRefuseTheTree}).
     */
    static Stream<Scheme> schemes() {
        return Arrays.stream(Scheme.values()).filter(Kind.ELLEN::servedBy);
    }

    /**
     * Its records have two layouts (nodes and info records), so the tree declares no links, and a
     * counting scheme, which must release a reclaimed record's links, refuses it with a clear
     * exception before the tree allocates anything; the domain stays usable and leaks nothing.
     */
    @ParameterizedTest
    @MethodSource("countingSchemes")
    void countingSchemesRefuseTheTree(final Scheme scheme) {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = domain(scheme, a, false);
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> new EllenBst(d));
        assertTrue(refused.getMessage().contains("declares none"), refused.getMessage());
        assertNull(d.links(), "a refused declaration is not kept");
        d.close();
        assertEquals(baseline, a.stats().bytesInUse(), "bytes in use after close");
    }

    /** The schemes that refuse the tree. */
    static Stream<Scheme> countingSchemes() {
        return Arrays.stream(Scheme.values()).filter(s -> !Kind.ELLEN.servedBy(s));
    }

    private static ReclaimDomain domain(final Scheme scheme, final LimboAllocator alloc, final boolean debug) {
        return ReclaimDomain.builder(scheme).allocator(alloc).recordBytes(EllenBst.RECORD_BYTES)
                .slots(EllenBst.SLOTS).debug(debug).build();
    }

    /** A tree on a fresh allocator and domain, closed after the test (tree first). */
    private EllenBst tree(final Scheme scheme, final boolean debug) {
        final LimboAllocator alloc = debug ? LimboAllocator.builder().debug(true).build() : LimboAllocator.create();
        final ReclaimDomain d = domain(scheme, alloc, debug);
        toClose.add(d);
        final EllenBst t = new EllenBst(d);
        toClose.add(t);
        return t;
    }

    /**
     * The tree seen as a {@link LongMapChecks.Subject}: it has no put (throws), its nodes are its
     * leaves as {key, value, 0, 0}, its shape the structure checks.
     */
    static LongMapChecks.Subject subject(final EllenBst t) {
        return new LongMapChecks.Subject() {
            @Override
            public long putIfAbsent(final long key, final long value) {
                return t.putIfAbsent(key, value);
            }

            @Override
            public long put(final long key, final long value) {
                throw new AssertionError("EllenBst has no put: tests of it never replace (Kind.replaces() is false)");
            }

            @Override
            public long get(final long key) {
                return t.get(key);
            }

            @Override
            public boolean contains(final long key) {
                return t.contains(key);
            }

            @Override
            public long remove(final long key) {
                return t.remove(key);
            }

            @Override
            public long size() {
                return t.size();
            }

            @Override
            public List<long[]> nodes() {
                final List<long[]> nodes = new ArrayList<>();
                for (final long k : t.keysInOrder()) {
                    nodes.add(new long[] {k, t.get(k), 0, 0});
                }
                return nodes;
            }

            @Override
            public long[] checkShape() {
                assertEquals(List.of(), t.checkInvariants());
                return t.keysInOrder();
            }

            @Override
            public void close() {
                t.close();
            }
        };
    }

    private static long orReserved(final Long v) {
        return v == null ? RESERVED : v;
    }

    /** Quiescent: structure checks pass and the tree holds exactly {@code model}. */
    private static void assertContents(final EllenBst t, final Map<Long, Long> model) {
        assertEquals(List.of(), t.checkInvariants());
        final long[] expected = model.keySet().stream().mapToLong(Long::longValue).sorted().toArray();
        assertArrayEquals(expected, t.keysInOrder());
        assertEquals(model.size(), t.size());
        for (final Map.Entry<Long, Long> e : model.entrySet()) {
            assertEquals(e.getValue(), t.get(e.getKey()), "value of key " + e.getKey());
        }
    }

    // ---------------------------------------------------------------- (a) sequential specification

    /** Keys at the ends of the legal range and around zero. */
    private static final long[] EDGE_KEYS = {Long.MIN_VALUE, Long.MIN_VALUE + 1, -1, 0, 1, Long.MAX_VALUE - 2,
            Long.MAX_VALUE - 1};

    /**
     * {@code ops} random operations with keys from {@code nextKey}, every result compared with a
     * TreeMap, the structure checked every {@code checkEvery} operations; then emptied.
     */
    private static void sequential(final EllenBst t, final long seed, final int ops, final int checkEvery,
                                   final ToLongFunction<SplittableRandom> nextKey) {
        final TreeMap<Long, Long> model = new TreeMap<>();
        final SplittableRandom rnd = new SplittableRandom(seed);
        for (int i = 0; i < ops; i++) {
            final long k = nextKey.applyAsLong(rnd);
            final long v = rnd.nextInt(3) == 0 ? (rnd.nextBoolean() ? Long.MAX_VALUE : Long.MIN_VALUE + 1)
                    : rnd.nextLong(-1000, 1000);
            final String at = "seed " + seed + " op " + i + " key " + k;
            switch (rnd.nextInt(6)) {
                case 0 -> assertEquals(model.putIfAbsent(k, v) == null, t.insert(k, v), at + " insert");
                case 1 -> assertEquals(orReserved(model.putIfAbsent(k, v)), t.putIfAbsent(k, v), at + " putIfAbsent");
                case 2 -> assertEquals(orReserved(model.get(k)), t.get(k), at + " get");
                case 3 -> assertEquals(model.containsKey(k), t.contains(k), at + " contains");
                default -> assertEquals(orReserved(model.remove(k)), t.remove(k), at + " remove");
            }
            if (i % checkEvery == 0) {
                assertEquals(List.of(), t.checkInvariants(), at);
                assertEquals(model.size(), t.size(), at + " size");
            }
        }
        assertContents(t, model);
        for (final long k : new ArrayList<>(model.keySet())) {
            assertEquals(model.remove(k), t.remove(k));
        }
        assertContents(t, model);
        assertEquals(0, t.size());
    }

    /** 10^5 operations: a small key range (hits, deep helping-free churn) mixed with the edge keys. */
    @ParameterizedTest
    @MethodSource("schemes")
    void sequentialAgainstTreeMap(final Scheme scheme) {
        final EllenBst t = tree(scheme, false);
        sequential(t, 1, 100_000, 4_999, rnd -> rnd.nextInt(8) == 0
                ? EDGE_KEYS[rnd.nextInt(EDGE_KEYS.length)] : rnd.nextInt(200) - 100L);
    }

    /** Keys anywhere in the range (extremes included), half of them reused so that get and remove hit. */
    @ParameterizedTest
    @MethodSource("schemes")
    void sequentialLargeKeyRange(final Scheme scheme) {
        final EllenBst t = tree(scheme, true);
        final long[] used = new long[512];
        final int[] n = {0};
        sequential(t, 2, 20_000, 997, rnd -> {
            if (n[0] > 0 && rnd.nextBoolean()) {
                return used[rnd.nextInt(n[0])];
            }
            final long k = switch (rnd.nextInt(8)) {
                case 0 -> Long.MIN_VALUE + rnd.nextInt(4);
                case 1 -> Long.MAX_VALUE - 1 - rnd.nextInt(4);
                default -> {
                    final long r = rnd.nextLong();
                    yield r == Long.MAX_VALUE ? 0 : r;
                }
            };
            used[n[0] < used.length ? n[0]++ : rnd.nextInt(used.length)] = k;
            return k;
        });
    }

    @ParameterizedTest
    @MethodSource("schemes")
    void ascendingAndDescendingRuns(final Scheme scheme) {
        // degenerate (list-shaped) trees: deep paths
        final EllenBst t = tree(scheme, false);
        final Map<Long, Long> model = new HashMap<>();
        for (long k = 0; k < 1_000; k++) {
            assertTrue(t.insert(k, k * 3));
            model.put(k, k * 3);
        }
        for (long k = -1; k >= -1_000; k--) {
            assertEquals(RESERVED, t.putIfAbsent(k, k));
            model.put(k, k);
        }
        assertContents(t, model);
        for (long k = 0; k < 1_000; k += 2) {
            assertEquals(k * 3, t.remove(k));
            assertFalse(t.insert(k + 1, 7));
            model.remove(k);
        }
        assertContents(t, model);
        assertEquals(RESERVED, t.remove(0));
        assertEquals(RESERVED, t.get(1_000));
    }

    @ParameterizedTest
    @MethodSource("schemes")
    void extremeKeysAndValues(final Scheme scheme) {
        final EllenBst t = tree(scheme, false);
        final long[] keys = {Long.MIN_VALUE, -1, 0, 1, Long.MAX_VALUE - 1};
        for (final long k : keys) {
            assertTrue(t.insert(k, k == Long.MIN_VALUE ? 5 : k));
            assertFalse(t.insert(k, 9));
        }
        assertEquals(5, t.get(Long.MIN_VALUE));
        assertEquals(Long.MAX_VALUE - 1, t.get(Long.MAX_VALUE - 1));
        assertEquals(RESERVED, t.putIfAbsent(7, Long.MAX_VALUE));
        assertEquals(Long.MAX_VALUE, t.putIfAbsent(7, 1));
        assertEquals(keys.length + 1, t.size());
        assertArrayEquals(new long[] {Long.MIN_VALUE, -1, 0, 1, 7, Long.MAX_VALUE - 1}, t.keysInOrder());
        assertEquals(Long.MAX_VALUE - 1, t.remove(Long.MAX_VALUE - 1));
        assertEquals(5, t.remove(Long.MIN_VALUE));
        assertEquals(List.of(), t.checkInvariants());
        assertEquals(4, t.size());
        LongMapChecks.extremes(new LongMapChecks.Subject() { // the shared edge-key check, without put
            private final LongMapChecks.Subject s = subject(tree(scheme, false));

            @Override
            public long putIfAbsent(final long key, final long value) {
                return s.putIfAbsent(key, value);
            }

            @Override
            public long put(final long key, final long value) {
                final long old = s.remove(key);
                assertEquals(RESERVED, s.putIfAbsent(key, value));
                return old;
            }

            @Override
            public long get(final long key) {
                return s.get(key);
            }

            @Override
            public boolean contains(final long key) {
                return s.contains(key);
            }

            @Override
            public long remove(final long key) {
                return s.remove(key);
            }

            @Override
            public long size() {
                return s.size();
            }

            @Override
            public List<long[]> nodes() {
                return s.nodes();
            }

            @Override
            public long[] checkShape() {
                return s.checkShape();
            }

            @Override
            public void close() {
                s.close();
            }
        });
    }

    /**
     * Deterministic helping: three removers stall (nested, on this thread, each inside its pinned
     * section) after their flag, one also after its mark. While they stall: their keys are still
     * in the map (a key leaves at its dchild) and the checker sees the flags; a remove that meets
     * the marked node completes the stalled remove of 50; a remove of 120 meets the flag at 120's
     * gp and completes that stalled remove; an insert of 151 under the stalled remove of 150's p
     * flags p first, so that remove's mark loses and it backs out. The debug domain turns a node
     * or info record retired twice into a failure, and the memory check at the end one never
     * retired.
     *
     * <p>Keys 10, 20, .., 200 inserted ascending make a right spine: leaf k hangs left of the
     * internal node keyed k + 10, whose right child continues the spine; leaf k's gp is the node
     * keyed k.
     */
    @ParameterizedTest
    @MethodSource("schemes")
    void stalledRemoversAreHelped(final Scheme scheme) {
        final LimboAllocator alloc = LimboAllocator.builder().debug(true).build();
        final long baseline = alloc.stats().bytesInUse();
        final ReclaimDomain d = domain(scheme, alloc, true);
        final EllenBst t = new EllenBst(d);
        final TreeMap<Long, Long> model = new TreeMap<>();
        for (long k = 10; k <= 200; k += 10) {
            assertTrue(t.insert(k, k + 1));
            model.put(k, k + 1);
        }
        final long[] keysBefore = t.keysInOrder();
        final int[] results = new int[3];
        results[0] = t.stalledRemove(120, false, () -> results[1] = t.stalledRemove(150, false, () -> {
            // flags only so far: every key is present, and no search helps a flag
            for (long k = 10; k <= 200; k += 10) {
                assertEquals(k + 1, t.get(k), "get " + k);
            }
            assertEquals(-1, t.stalledRemove(120, false, () -> { }), "a flagged gp cannot be flagged again");
            results[2] = t.stalledRemove(50, true, () -> {
                assertArrayEquals(keysBefore, t.keysInOrder(), "nothing unlinked while the removers stall");
                assertFalse(t.checkInvariants().isEmpty(), "flags and the mark are visible to the checker");
                assertEquals(41, t.get(40));
                final long retired = d.stats().retired();
                // meets the marked node: completes the stalled remove of 50, then finds 50 absent
                assertEquals(RESERVED, t.remove(50));
                assertEquals(RESERVED, t.get(50));
                assertTrue(d.stats().retired() >= retired + 2, "the helper retired p and leaf 50");
                // meets the flag at 120's gp: completes the stalled remove of 120
                assertEquals(RESERVED, t.remove(120));
                assertEquals(RESERVED, t.get(120));
                // flags the stalled remove of 150's p: that remove's mark will lose
                assertTrue(t.insert(151, 9));
                assertEquals(151, t.get(150));
            });
        }));
        assertArrayEquals(new int[] {1, 0, 1}, results, "120 and 50 removed (helped), 150 backed out");
        model.remove(50L);
        model.remove(120L);
        model.put(151L, 9L);
        assertContents(t, model);
        assertEquals(151, t.remove(150)); // the real remove retries
        model.remove(150L);
        for (final long k : new long[] {50, 120, 150}) { // the removed keys can be inserted again
            assertTrue(t.insert(k, -k));
            model.put(k, -k);
        }
        assertContents(t, model);
        t.close();
        d.flush();
        final ReclaimStats stats = d.stats();
        final long leaked = scheme == Scheme.NONE
                ? stats.retired() * (EllenBst.RECORD_BYTES + ReclaimDomain.TRAILER_BYTES) : 0;
        if (scheme != Scheme.NONE) {
            assertEquals(stats.retired(), stats.freed(), () -> "retired records left after a flush: " + stats);
        }
        d.close();
        alloc.trim();
        assertEquals(baseline + leaked, alloc.stats().bytesInUse(), "bytes in use after close");
    }

    /**
     * The ABA guard of the mark CAS: a pending delete holds the info record that its mark expects
     * (p's CLEAN word), so when another operation overwrites that word the record is not retired
     * until the delete is resolved. Keys 10..50 ascending: leaf 30's gp is the node keyed 30, its
     * p the node keyed 40, whose CLEAN word names the IInfo of the insert of 50.
     */
    @ParameterizedTest
    @MethodSource("schemes")
    void aPendingDeleteHoldsTheInfoRecordItsMarkExpects(final Scheme scheme) {
        final EllenBst t = tree(scheme, true);
        for (long k = 10; k <= 50; k += 10) {
            assertTrue(t.insert(k, k));
        }
        final ReclaimDomain d = t.domain();
        final long[] retired = new long[3];
        assertEquals(0, t.stalledRemove(30, false, () -> {
            retired[0] = d.stats().retired();
            // flags p (overwriting the word the stalled mark expects), replaces leaf 30
            assertTrue(t.insert(35, 35));
            retired[1] = d.stats().retired();
        }), "the stalled remove's mark loses to the insert under p");
        retired[2] = d.stats().retired();
        assertEquals(1, retired[1] - retired[0], "the insert retired the replaced leaf only: p's old info is held");
        assertEquals(1, retired[2] - retired[1], "the resolved delete dropped its hold: the info record retired");
        assertEquals(30, t.remove(30));
        assertArrayEquals(new long[] {10, 20, 35, 40, 50}, t.keysInOrder());
        assertEquals(List.of(), t.checkInvariants());
    }

    // ---------------------------------------------------------------- (b) concurrent stress

    /** Keys [0, SHARED) are contended; key k >= SHARED belongs to thread (k - SHARED) % threads. */
    private static final int KEYS = 1_000;
    private static final int SHARED = 64;

    /**
     * {@code threads} threads run at least {@code ops} operations each, until every thread has
     * (a {@link Progress} per thread, so a thread the scheduler starves keeps the others running):
     * on their own keys, every result checked exactly against a per-thread model, and on shared
     * keys, values checked to belong to the key and per key successful inserts minus removes
     * ending at 1 iff present. Afterwards, quiescent: the structure's invariants (routing, order,
     * external shape, every update word clean, every info record held once), the private keys
     * equal the union of the models, every shared key's value was written for it.
     */
    static void stress(final EllenBst t, final int threads, final int ops, final long seed) throws Exception {
        final Object[] sides = new Object[2 * threads];
        for (int w = 0; w < threads; w++) {
            sides[2 * w] = "worker-" + w;
            sides[2 * w + 1] = ops;
        }
        final Progress progress = new Progress(Workers.TIMEOUT_SECONDS - 20, sides);
        final int privatePerThread = (KEYS - SHARED) / threads;
        final List<long[]> nets = new ArrayList<>();
        final List<Map<Long, Long>> models = Workers.run(threads, false, id -> {
            final Map<Long, Long> model = new HashMap<>();
            final long[] net = new long[SHARED];
            synchronized (nets) {
                nets.add(net);
            }
            final SplittableRandom rnd = new SplittableRandom(seed * 1_000_003 + id);
            try {
                for (int i = 0; !progress.done(); i++) {
                    final boolean shared = rnd.nextInt(4) == 0;
                    final long k = shared ? rnd.nextInt(SHARED)
                            : SHARED + id + (long) threads * rnd.nextInt(privatePerThread);
                    final long v = k * 1_000_000L + (long) id * 100_000 + (i % 100_000);
                    final String at = "thread " + id + " op " + i + " key " + k;
                    final int op = rnd.nextInt(10);
                    long r = RESERVED;
                    if (op < 4) {
                        r = t.putIfAbsent(k, v);
                        if (!shared) {
                            assertEquals(orReserved(model.putIfAbsent(k, v)), r, at + " putIfAbsent");
                        } else if (r == RESERVED) {
                            net[(int) k]++;
                        }
                    } else if (op < 8) {
                        r = t.remove(k);
                        if (!shared) {
                            assertEquals(orReserved(model.remove(k)), r, at + " remove");
                        } else if (r != RESERVED) {
                            net[(int) k]--;
                        }
                    } else if (op == 8) {
                        r = t.get(k);
                        if (!shared) {
                            assertEquals(orReserved(model.get(k)), r, at + " get");
                        }
                    } else {
                        final boolean present = t.contains(k);
                        if (!shared) {
                            assertEquals(model.containsKey(k), present, at + " contains");
                        }
                    }
                    if (r != RESERVED) {
                        assertEquals(k, r / 1_000_000L, at + ": value " + r + " was written for another key");
                    }
                    if ((i & 4095) == 0) {
                        final long size = t.size();
                        assertTrue(size >= 0 && size <= KEYS, at + ": size " + size);
                    }
                    progress.add(id, 1);
                }
            } catch (final Throwable e) {
                progress.stop();
                throw e;
            }
            return model;
        });

        assertEquals(List.of(), t.checkInvariants(), "structure after quiescence");
        final long[] keys = t.keysInOrder();
        final Map<Long, Long> expectedPrivate = new HashMap<>();
        models.forEach(expectedPrivate::putAll);
        final Map<Long, Long> actualPrivate = new HashMap<>();
        for (final long k : keys) {
            final long v = t.get(k);
            assertEquals(k, v / 1_000_000L, "value of key " + k);
            if (k >= SHARED) {
                actualPrivate.put(k, v);
            }
        }
        assertEquals(expectedPrivate, actualPrivate, "private keys");
        for (int k = 0; k < SHARED; k++) {
            long n = 0;
            for (final long[] net : nets) {
                n += net[k];
            }
            assertEquals(t.contains(k) ? 1 : 0, n, "net successful inserts - removes of shared key " + k);
        }
        assertEquals(keys.length, t.size());
    }

    @ParameterizedTest
    @MethodSource("schemes")
    void concurrentStress(final Scheme scheme) throws Exception {
        final EllenBst t = tree(scheme, false);
        stress(t, 3, 60_000, 42);
        for (final long k : t.keysInOrder()) {
            assertEquals(k, t.remove(k) / 1_000_000L);
        }
        assertEquals(0, t.size());
        assertEquals(List.of(), t.checkInvariants());
        stress(t, 4, 20_000, 43);
    }

    /**
     * Debug domain and debug allocator: a record retired twice throws, freed records are poisoned,
     * so a use after free reads garbage (wrong results, or an offset outside the region).
     */
    @ParameterizedTest
    @MethodSource("schemes")
    void concurrentStressDebug(final Scheme scheme) throws Exception {
        final EllenBst t = tree(scheme, true);
        stress(t, 4, 15_000, 44);
    }

    /** All threads on a tiny shared range: maximal helping, flags met at every step. */
    @ParameterizedTest
    @MethodSource("schemes")
    void contendedSmallRange(final Scheme scheme) throws Exception {
        final EllenBst t = tree(scheme, true);
        final int threads = 4;
        final Object[] sides = new Object[2 * threads];
        for (int w = 0; w < threads; w++) {
            sides[2 * w] = "worker-" + w;
            sides[2 * w + 1] = 30_000;
        }
        final Progress progress = new Progress(Workers.TIMEOUT_SECONDS - 20, sides);
        final List<long[]> nets = Workers.run(threads, false, id -> {
            final long[] net = new long[8];
            final SplittableRandom rnd = new SplittableRandom(id);
            try {
                while (!progress.done()) {
                    final int k = rnd.nextInt(8);
                    if (rnd.nextBoolean()) {
                        if (t.insert(k, k + 100)) {
                            net[k]++;
                        }
                    } else {
                        final long r = t.remove(k);
                        if (r != RESERVED) {
                            assertEquals(k + 100, r);
                            net[k]--;
                        }
                    }
                    progress.add(id, 1);
                }
            } catch (final Throwable e) {
                progress.stop();
                throw e;
            }
            return net;
        });
        assertEquals(List.of(), t.checkInvariants());
        for (int k = 0; k < 8; k++) {
            long n = 0;
            for (final long[] net : nets) {
                n += net[k];
            }
            assertEquals(t.contains(k) ? 1 : 0, n, "key " + k);
        }
    }

    // ---------------------------------------------------------------- (c) memory accounting

    /**
     * Concurrent then sequential work, then close: every retired record (nodes and info records)
     * was freed by a flush, and the allocator's bytes in use are back at the baseline (scheme none:
     * plus exactly the records it retired and leaks by design).
     */
    @ParameterizedTest
    @MethodSource("schemes")
    void memoryReturnsToBaseline(final Scheme scheme) throws Exception {
        final LimboAllocator alloc = LimboAllocator.create();
        final long baseline = alloc.stats().bytesInUse();
        final ReclaimDomain domain = domain(scheme, alloc, false);
        final EllenBst t = new EllenBst(domain);
        stress(t, 3, 15_000, 7);
        final SplittableRandom rnd = new SplittableRandom(8);
        for (int i = 0; i < 20_000; i++) {
            final long k = rnd.nextInt(2_000);
            if (rnd.nextBoolean()) {
                t.insert(k, k);
            } else {
                t.remove(k);
            }
        }
        assertTrue(t.size() > 0);
        assertTrue(alloc.stats().bytesInUse() > baseline);
        t.close();
        domain.flush();
        final ReclaimStats stats = domain.stats();
        assertTrue(stats.retired() > 0, "the workload retired nothing: " + stats);
        final long leaked;
        if (scheme == Scheme.NONE) {
            leaked = stats.retired() * (EllenBst.RECORD_BYTES + ReclaimDomain.TRAILER_BYTES);
        } else {
            assertEquals(stats.retired(), stats.freed(),
                    "flush after all threads ended left retired records: " + stats);
            leaked = 0;
        }
        domain.close();
        alloc.trim();
        assertEquals(baseline + leaked, alloc.stats().bytesInUse(), () -> "bytes in use after close, " + stats);
    }

    /**
     * Sequentially, each operation's records are exact: an insert allocates four (leaf, copy,
     * internal, IInfo) and retires one (the replaced leaf) now and the info record it overwrote;
     * live records equal the tree's nodes plus the info records in its update words.
     */
    @Test
    void liveRecordsAreTheTreeAndItsInfoRecords() {
        final LimboAllocator alloc = LimboAllocator.create();
        final ReclaimDomain d = domain(Scheme.EBR, alloc, false);
        final EllenBst t = new EllenBst(d);
        final long record = EllenBst.RECORD_BYTES + ReclaimDomain.TRAILER_BYTES;
        final SplittableRandom rnd = new SplittableRandom(3);
        for (int i = 0; i < 5_000; i++) {
            final long k = rnd.nextInt(300);
            if (rnd.nextBoolean()) {
                t.insert(k, k);
            } else {
                t.remove(k);
            }
        }
        d.flush();
        final ReclaimStats stats = d.stats();
        assertEquals(stats.retired(), stats.freed());
        final long keys = t.keysInOrder().length;
        // nodes: root, its right inf leaf, and under its left child 2n + 1 nodes (n + 1 leaves);
        // info records: at most one per internal node (n + 1 of them)
        final long nodes = 2 + 2 * keys + 1;
        final long live = alloc.stats().bytesInUse();
        t.close();
        final long afterClose = alloc.stats().bytesInUse();
        final long freedByClose = (live - afterClose) / record;
        assertTrue(freedByClose >= nodes && freedByClose <= nodes + keys + 1,
                () -> "close freed " + freedByClose + " records for " + keys + " keys");
        d.close();
    }

    // ---------------------------------------------------------------- (d) capabilities, bad input, layout

    /** The tree follows the domain's capability, never the scheme; a declared capability makes it validate. */
    @Test
    void validationFollowsTheCapability() throws Exception {
        final LimboAllocator a = LimboAllocator.create();
        for (final Scheme scheme : (Iterable<Scheme>) schemes()::iterator) {
            try (ReclaimDomain d = domain(scheme, a, false); EllenBst t = new EllenBst(d)) {
                assertEquals(d.has(Capability.PROTECTION_NEEDS_VALIDATION), t.validates, scheme.id());
            }
        }
        try (ReclaimDomain d = ReclaimDomain.builder(Scheme.EBR).allocator(a).recordBytes(EllenBst.RECORD_BYTES)
                .slots(EllenBst.SLOTS).capability(Capability.PROTECTION_NEEDS_VALIDATION).build();
             EllenBst t = new EllenBst(d)) {
            assertTrue(t.validates);
            stress(t, 3, 10_000, 45);
        }
    }

    @ParameterizedTest
    @MethodSource("schemes")
    void reservedKeyAndValueAreRejected(final Scheme scheme) {
        final EllenBst t = tree(scheme, false);
        final long k = OffHeapStructure.RESERVED_KEY;
        assertThrows(IllegalArgumentException.class, () -> t.get(k));
        assertThrows(IllegalArgumentException.class, () -> t.contains(k));
        assertThrows(IllegalArgumentException.class, () -> t.insert(k, 1));
        assertThrows(IllegalArgumentException.class, () -> t.putIfAbsent(k, 1));
        assertThrows(IllegalArgumentException.class, () -> t.remove(k));
        assertThrows(IllegalArgumentException.class, () -> t.insert(1, RESERVED));
        assertThrows(IllegalArgumentException.class, () -> t.putIfAbsent(1, RESERVED));
        assertEquals(0, t.size());
        assertEquals(List.of(), t.checkInvariants());
    }

    @Test
    void layouts() {
        assertEquals(40, EllenNodeLayout.SIZE);
        assertArrayEquals(new long[] {0, 8, 16, 24, 32}, new long[] {EllenNodeLayout.KEY, EllenNodeLayout.VALUE,
                EllenNodeLayout.LEFT, EllenNodeLayout.RIGHT, EllenNodeLayout.UPDATE});
        assertEquals(32, EllenInfoLayout.SIZE);
        assertArrayEquals(new long[] {0, 8, 16, 24},
                new long[] {EllenInfoLayout.REFS, EllenInfoLayout.A, EllenInfoLayout.B, EllenInfoLayout.C});
        assertEquals(40, EllenBst.RECORD_BYTES);
        assertTrue(Arrays.stream(new long[] {EllenBst.STATE, EllenBst.DIR})
                .allMatch(b -> (b & ~Guard.MARK_BITS) == 0));
    }
}
