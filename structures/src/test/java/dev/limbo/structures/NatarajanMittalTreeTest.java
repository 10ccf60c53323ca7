package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.ReclaimStats;
import dev.limbo.reclaim.Scheme;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import static dev.limbo.structures.OffHeapStructure.RESERVED;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link NatarajanMittalTree} over every {@link Scheme}: sequential specification against a
 * {@link TreeMap}, concurrent stress with exact per-thread partitions, memory accounting, bad
 * input.
 */
class NatarajanMittalTreeTest {

    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
    }

    private static ReclaimDomain domain(final Scheme scheme, final LimboAllocator alloc, final boolean debug) {
        return ReclaimDomain.builder(scheme).allocator(alloc).recordBytes(NatarajanMittalTree.NODE_BYTES)
                .slots(NatarajanMittalTree.SLOTS).debug(debug).build();
    }

    /** A tree on a fresh allocator and domain, closed after the test (tree first). */
    private NatarajanMittalTree tree(final Scheme scheme, final boolean debug) {
        final LimboAllocator alloc = debug ? LimboAllocator.builder().debug(true).build() : LimboAllocator.create();
        final ReclaimDomain d = domain(scheme, alloc, debug);
        toClose.add(d);
        final NatarajanMittalTree t = new NatarajanMittalTree(d);
        toClose.add(t);
        return t;
    }

    /**
     * The tree seen as a {@link LongMapChecks.Subject}: it has no put (throws), its nodes are its
     * leaves as {key, value, 0, 0}, its shape the structure checks.
     */
    static LongMapChecks.Subject subject(final NatarajanMittalTree t) {
        return new LongMapChecks.Subject() {
            @Override
            public long putIfAbsent(final long key, final long value) {
                return t.putIfAbsent(key, value);
            }

            @Override
            public long put(final long key, final long value) {
                throw new UnsupportedOperationException("NatarajanMittalTree has no put");
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
    private static void assertContents(final NatarajanMittalTree t, final Map<Long, Long> model) {
        assertEquals(List.of(), t.checkInvariants());
        final long[] expected = model.keySet().stream().mapToLong(Long::longValue).sorted().toArray();
        assertArrayEquals(expected, t.keysInOrder());
        assertEquals(model.size(), t.size());
        for (final Map.Entry<Long, Long> e : model.entrySet()) {
            assertEquals(e.getValue(), t.get(e.getKey()), "value of key " + e.getKey());
        }
    }

    // ---------------------------------------------------------------- (a) sequential specification

    /**
     * {@code ops} random operations; keys drawn by {@code nextKey}; every result compared with a
     * TreeMap, the structure checked every {@code checkEvery} operations.
     */
    private static void sequential(final NatarajanMittalTree t, final long seed, final int ops, final int checkEvery,
                                   final java.util.function.Function<Random, Long> nextKey) {
        final TreeMap<Long, Long> model = new TreeMap<>();
        final Random rnd = new Random(seed);
        for (int i = 0; i < ops; i++) {
            final long k = nextKey.apply(rnd);
            final long v = rnd.nextLong(-1000, 1000);
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

    @ParameterizedTest
    @EnumSource(Scheme.class)
    void sequentialSmallKeyRange(final Scheme scheme) {
        final NatarajanMittalTree t = tree(scheme, false);
        sequential(t, 1, 8_000, 97, rnd -> (long) rnd.nextInt(48) - 8);
    }

    @ParameterizedTest
    @EnumSource(Scheme.class)
    void sequentialLargeKeyRange(final Scheme scheme) {
        final NatarajanMittalTree t = tree(scheme, false);
        final long[] used = new long[512];
        final int[] n = {0};
        // half fresh keys anywhere in the range (extremes included), half reused ones, so that
        // get/remove hit
        sequential(t, 2, 8_000, 997, rnd -> {
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
    @EnumSource(Scheme.class)
    void ascendingAndDescendingRuns(final Scheme scheme) {
        // degenerate (list-shaped) trees: deep paths, long chains on removal
        final NatarajanMittalTree t = tree(scheme, false);
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
    @EnumSource(Scheme.class)
    void extremeKeys(final Scheme scheme) {
        final NatarajanMittalTree t = tree(scheme, false);
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
        assertArrayEquals(new long[]{Long.MIN_VALUE, -1, 0, 1, 7, Long.MAX_VALUE - 1}, t.keysInOrder());
        assertEquals(Long.MAX_VALUE - 1, t.remove(Long.MAX_VALUE - 1));
        assertEquals(5, t.remove(Long.MIN_VALUE));
        assertEquals(List.of(), t.checkInvariants());
        assertEquals(4, t.size());
    }

    /**
     * Deterministic helping: removers that stall after flagging (and tagging) leave flagged leaves
     * and a chain of tagged edges; reads must see the stalled keys as absent and read the others
     * through the tagged chain (with hp: the anchor validation), and inserts and removes must
     * complete the stalled cleanups, retiring every removed node exactly once (debug domain).
     *
     * <p>Keys 10, 20, .., 200 inserted ascending make a right spine: leaf k is the left child of
     * the internal node keyed k + 10, whose right edge leads down the spine.
     */
    @ParameterizedTest
    @EnumSource(Scheme.class)
    void stalledRemoversAreHelped(final Scheme scheme) {
        final NatarajanMittalTree t = tree(scheme, true);
        final TreeMap<Long, Long> model = new TreeMap<>();
        for (long k = 10; k <= 200; k += 10) {
            assertTrue(t.insert(k, k + 1));
            model.put(k, k + 1);
        }
        final long retired0 = t.domain().stats().retired();
        // flag 50..80 and tag their spine edges: a chain of tagged edges from the node keyed 60 down
        for (long k = 50; k <= 80; k += 10) {
            assertTrue(t.stalledRemove(k, true), "stall " + k);
            model.remove(k);
        }
        assertTrue(t.stalledRemove(120, false));
        model.remove(120L);
        assertTrue(t.stalledRemove(200, true)); // tags the edge to leaf 190
        model.remove(200L);
        assertFalse(t.stalledRemove(120, false), "a flagged leaf cannot be flagged again");

        // the checker sees the marks; physically the leaves are all still there
        final List<String> problems = t.checkInvariants();
        assertFalse(problems.isEmpty());
        assertTrue(problems.stream().allMatch(p -> p.startsWith("reachable marked edge")), problems::toString);
        assertEquals(20, t.keysInOrder().length);
        // logically they are gone: get, contains, size; the rest is read through the tagged chain
        for (long k = 10; k <= 200; k += 10) {
            assertEquals(orReserved(model.get(k)), t.get(k), "get " + k);
            assertEquals(model.containsKey(k), t.contains(k), "contains " + k);
        }
        assertEquals(model.size(), t.size());
        assertEquals(0, t.domain().stats().retired() - retired0, "nothing unlinked yet");

        // insert over a flagged leaf: helps unlink it (node 130 and leaf 120), then inserts
        assertTrue(t.insert(120, 7));
        model.put(120L, 7L);
        assertEquals(7, t.get(120));
        assertEquals(2, t.domain().stats().retired() - retired0);

        // insert whose CAS meets the tagged edge to leaf 190: helps unlink node 200 and leaf 200
        assertEquals(RESERVED, t.putIfAbsent(195, 9));
        model.put(195L, 9L);
        assertEquals(4, t.domain().stats().retired() - retired0);

        // remove of 70: seek ends at flagged leaf 70 below the chain 60 -> 70 -> 80 (tagged
        // edges); its cleanup unlinks nodes 60, 70, 80 and leaves 50, 60, 70 in one CAS
        assertEquals(RESERVED, t.remove(70));
        assertEquals(10, t.domain().stats().retired() - retired0);
        // remove of 80 (flagged, under node 90 whose spine edge is tagged): helps, then absent
        assertEquals(RESERVED, t.remove(80));
        assertEquals(12, t.domain().stats().retired() - retired0);

        assertContents(t, model);
        // the helped removers' keys can be inserted again
        for (long k = 50; k <= 80; k += 10) {
            assertTrue(t.insert(k, -k));
            model.put(k, -k);
        }
        assertContents(t, model);
    }

    // ---------------------------------------------------------------- (b) concurrent stress

    /** Keys [0, SHARED) are contended; key k >= SHARED belongs to thread (k - SHARED) % threads. */
    private static final int KEYS = 1_000;
    private static final int SHARED = 64;

    /**
     * {@code threads} threads run {@code ops} operations each (half inserts, half removes, with a
     * read mix), on their own keys (every result checked exactly against a per-thread model) and on
     * the shared keys (values checked to belong to the key; per key, successful inserts minus
     * successful removes must end at 1 iff present). Afterwards, quiescent: the structure checks
     * (routing, order, no reachable flagged or tagged edge), the private keys equal the union of
     * the models, and every shared key's value was written for it.
     */
    static void stress(final NatarajanMittalTree t, final int threads, final int ops, final long seed)
            throws Exception {
        final List<Map<Long, Long>> models = new ArrayList<>();
        final long[][] net = new long[threads][SHARED];
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final CountDownLatch start = new CountDownLatch(1);
        final Thread[] workers = new Thread[threads];
        final int privatePerThread = (KEYS - SHARED) / threads;
        for (int w = 0; w < threads; w++) {
            final int id = w;
            final Map<Long, Long> model = new HashMap<>();
            models.add(model);
            workers[w] = new Thread(() -> {
                try {
                    start.await();
                    final Random rnd = new Random(seed * 1_000_003 + id);
                    for (int i = 0; i < ops && failure.get() == null; i++) {
                        final boolean shared = rnd.nextInt(4) == 0;
                        final long k = shared ? rnd.nextInt(SHARED)
                                : SHARED + id + (long) threads * rnd.nextInt(privatePerThread);
                        final long v = k * 1_000_000L + (long) id * 100_000 + (i % 100_000);
                        final String at = "thread " + id + " op " + i + " key " + k;
                        final int op = rnd.nextInt(10);
                        long r = RESERVED;
                        if (op < 4) { // insert
                            if (rnd.nextBoolean()) {
                                final boolean ok = t.insert(k, v);
                                if (!shared) {
                                    assertEquals(!model.containsKey(k), ok, at + " insert");
                                }
                                if (ok) {
                                    if (shared) {
                                        net[id][(int) k]++;
                                    } else {
                                        model.put(k, v);
                                    }
                                }
                            } else {
                                r = t.putIfAbsent(k, v);
                                if (!shared) {
                                    assertEquals(orReserved(model.putIfAbsent(k, v)), r, at + " putIfAbsent");
                                } else if (r == RESERVED) {
                                    net[id][(int) k]++;
                                }
                            }
                        } else if (op < 8) { // remove
                            r = t.remove(k);
                            if (!shared) {
                                assertEquals(orReserved(model.remove(k)), r, at + " remove");
                            } else if (r != RESERVED) {
                                net[id][(int) k]--;
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
                    }
                } catch (final Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "nm-worker-" + w);
            workers[w].start();
        }
        start.countDown();
        for (final Thread w : workers) {
            w.join();
        }
        if (failure.get() != null) {
            throw new AssertionError("worker failed", failure.get());
        }

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
            for (int w = 0; w < threads; w++) {
                n += net[w][k];
            }
            assertEquals(t.contains(k) ? 1 : 0, n, "net successful inserts - removes of shared key " + k);
        }
        assertEquals(keys.length, t.size());
    }

    @ParameterizedTest
    @EnumSource(Scheme.class)
    void concurrentStress(final Scheme scheme) throws Exception {
        final NatarajanMittalTree t = tree(scheme, false);
        stress(t, 3, 150_000, 42);
        // empty it, then a second round with another partition on the same tree
        for (final long k : t.keysInOrder()) {
            assertEquals(k, t.remove(k) / 1_000_000L);
        }
        assertEquals(0, t.size());
        assertEquals(List.of(), t.checkInvariants());
        stress(t, 4, 40_000, 43);
    }

    /**
     * Debug domain and debug allocator: a node retired twice throws, freed nodes are poisoned, so
     * a use after free reads garbage (wrong results, or an offset outside the region) and a write
     * after free is reported.
     */
    @ParameterizedTest
    @EnumSource(Scheme.class)
    void concurrentStressDebug(final Scheme scheme) throws Exception {
        final NatarajanMittalTree t = tree(scheme, true);
        stress(t, 4, 40_000, 44);
    }

    /** All threads on a tiny shared range: maximal helping, chains of tagged edges. */
    @ParameterizedTest
    @EnumSource(Scheme.class)
    void contendedSmallRange(final Scheme scheme) throws Exception {
        final NatarajanMittalTree t = tree(scheme, true);
        final int threads = 4;
        final long[][] net = new long[threads][8];
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread[] workers = new Thread[threads];
        for (int w = 0; w < threads; w++) {
            final int id = w;
            workers[w] = new Thread(() -> {
                try {
                    final Random rnd = new Random(id);
                    for (int i = 0; i < 60_000; i++) {
                        final int k = rnd.nextInt(8);
                        if (rnd.nextBoolean()) {
                            if (t.insert(k, k + 100)) {
                                net[id][k]++;
                            }
                        } else {
                            final long r = t.remove(k);
                            if (r != RESERVED) {
                                assertEquals(k + 100, r);
                                net[id][k]--;
                            }
                        }
                    }
                } catch (final Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            workers[w].start();
        }
        for (final Thread w : workers) {
            w.join();
        }
        if (failure.get() != null) {
            throw new AssertionError("worker failed", failure.get());
        }
        assertEquals(List.of(), t.checkInvariants());
        for (int k = 0; k < 8; k++) {
            long n = 0;
            for (int w = 0; w < threads; w++) {
                n += net[w][k];
            }
            assertEquals(t.contains(k) ? 1 : 0, n, "key " + k);
        }
    }

    // ---------------------------------------------------------------- (c) memory accounting

    @ParameterizedTest
    @EnumSource(Scheme.class)
    void memoryReturnsToBaseline(final Scheme scheme) throws Exception {
        final LimboAllocator alloc = LimboAllocator.create();
        final long baseline = alloc.stats().bytesInUse();
        final ReclaimDomain domain = domain(scheme, alloc, false);
        final NatarajanMittalTree t = new NatarajanMittalTree(domain);
        stress(t, 3, 30_000, 7);
        // and some sequential work by the main thread
        final Random rnd = new Random(8);
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
        assertEquals(0, stats.retired() % 2, "nodes are removed in pairs (internal + leaf): " + stats);
        final long leaked;
        if (scheme == Scheme.NONE) {
            leaked = stats.retired() * (NatarajanMittalTree.NODE_BYTES + ReclaimDomain.TRAILER_BYTES);
        } else {
            assertEquals(stats.retired(), stats.freed(), "flush after all threads ended left retired nodes: " + stats);
            leaked = 0;
        }
        domain.close();
        alloc.trim();
        assertEquals(baseline + leaked, alloc.stats().bytesInUse(), () -> "bytes in use after close, " + stats);
    }

    // ---------------------------------------------------------------- (d) bad input

    @ParameterizedTest
    @EnumSource(Scheme.class)
    void reservedKeyAndValueAreRejected(final Scheme scheme) {
        final NatarajanMittalTree t = tree(scheme, false);
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

    @ParameterizedTest
    @EnumSource(Scheme.class)
    void operationsAfterCloseThrow(final Scheme scheme) {
        final NatarajanMittalTree t = tree(scheme, false);
        assertTrue(t.insert(1, 2));
        t.close();
        assertTrue(t.isClosed());
        t.close(); // idempotent
        assertThrows(IllegalStateException.class, () -> t.get(1));
        assertThrows(IllegalStateException.class, () -> t.contains(1));
        assertThrows(IllegalStateException.class, () -> t.insert(2, 2));
        assertThrows(IllegalStateException.class, () -> t.putIfAbsent(2, 2));
        assertThrows(IllegalStateException.class, () -> t.remove(1));
        assertThrows(IllegalStateException.class, t::size);
    }

    @ParameterizedTest
    @EnumSource(Scheme.class)
    void unsuitableDomainsAreRejected(final Scheme scheme) {
        final LimboAllocator alloc = LimboAllocator.create();
        final ReclaimDomain fewSlots = ReclaimDomain.builder(scheme).allocator(alloc)
                .recordBytes(NatarajanMittalTree.NODE_BYTES).slots(NatarajanMittalTree.SLOTS - 1).build();
        toClose.add(fewSlots);
        final IllegalArgumentException e1 = assertThrows(IllegalArgumentException.class,
                () -> new NatarajanMittalTree(fewSlots));
        assertTrue(e1.getMessage().contains("slots"), e1.getMessage());
        final ReclaimDomain smallRecords = ReclaimDomain.builder(scheme).allocator(alloc)
                .recordBytes(NatarajanMittalTree.NODE_BYTES - 8).slots(NatarajanMittalTree.SLOTS).build();
        toClose.add(smallRecords);
        final IllegalArgumentException e2 = assertThrows(IllegalArgumentException.class,
                () -> new NatarajanMittalTree(smallRecords));
        assertTrue(e2.getMessage().contains("bytes"), e2.getMessage());
    }

    @Test
    void layoutIsThirtyTwoBytes() {
        assertEquals(32, TreeNodeLayout.SIZE);
        assertArrayEquals(new long[]{0, 8, 16, 24},
                new long[]{TreeNodeLayout.KEY, TreeNodeLayout.VALUE, TreeNodeLayout.LEFT, TreeNodeLayout.RIGHT});
        assertTrue(Arrays.stream(new long[]{NatarajanMittalTree.FLAG, NatarajanMittalTree.TAG})
                .allMatch(b -> (b & ~dev.limbo.reclaim.Guard.MARK_BITS) == 0));
    }
}
