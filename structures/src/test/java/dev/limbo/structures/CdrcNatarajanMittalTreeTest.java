package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.rc.Cdrc;
import dev.limbo.reclaim.rc.RcType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Function;

import static dev.limbo.structures.StructureLifecycle.RESERVED;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link CdrcNatarajanMittalTree} in both modes (snapshots, and counted loads only): sequential
 * specification against a {@link TreeMap}, stalled removers helped and a removed chain freed by one
 * cleanup CAS, concurrent stress with structure and count checks, memory back to the baseline on a
 * poisoning allocator, snapshots never left held (also when an operation throws), bad input and
 * use after close.
 */
@Timeout(60)
class CdrcNatarajanMittalTreeTest {

    /** A tree on a domain and allocator of its own, with the allocator's bytes in use from before. */
    private record Setup(LimboAllocator alloc, long baseline, Cdrc rc, CdrcNatarajanMittalTree tree) {

        /** Closes tree and domain, and checks that every node was freed. */
        void closeAndCheckMemory() {
            tree.close();
            rc.close();
            alloc.trim();
            assertEquals(baseline, alloc.stats().bytesInUse(), "bytes in use after closing tree and domain");
        }
    }

    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
    }

    /** A tree on a debug (poisoning) allocator, closed after the test (tree first). */
    private Setup setup(final boolean snapshots) {
        final LimboAllocator alloc = LimboAllocator.builder().debug(true).build();
        final long baseline = alloc.stats().bytesInUse();
        final Cdrc rc = new Cdrc(alloc);
        toClose.add(rc);
        final CdrcNatarajanMittalTree t = new CdrcNatarajanMittalTree(rc, snapshots);
        toClose.add(t);
        return new Setup(alloc, baseline, rc, t);
    }

    /**
     * A counted word holding a probe object, and snapshots of it that the test thread holds: with
     * {@link Cdrc#SNAPSHOT_SLOTS} - {@link CdrcNatarajanMittalTree#SNAPSHOTS} of them held, a tree
     * operation that holds more than its {@code SNAPSHOTS} evicts one.
     */
    private static final class Probe {
        final Setup s;
        final long field;
        final long[] held = new long[Cdrc.SNAPSHOT_SLOTS - CdrcNatarajanMittalTree.SNAPSHOTS];
        final long evictions;

        Probe(final Setup s) {
            this.s = s;
            final Cdrc rc = s.rc();
            field = s.alloc().allocateZeroed(Long.BYTES);
            rc.storeMove(field, rc.allocate(rc.register(new RcType("probe", Cdrc.HEADER))));
            for (int i = 0; i < held.length; i++) {
                held[i] = rc.snapshot(field);
            }
            evictions = rc.evictions();
        }

        /** Checks that nothing was evicted meanwhile, then releases the snapshots and the probe. */
        void close() {
            final Cdrc rc = s.rc();
            assertEquals(evictions, rc.evictions(),
                    "a tree operation held more than " + CdrcNatarajanMittalTree.SNAPSHOTS + " snapshots");
            for (final long p : held) {
                rc.releaseSnapshot(p);
            }
            rc.store(field, 0);
            s.alloc().free(field);
        }
    }

    private static long orReserved(final Long v) {
        return v == null ? RESERVED : v;
    }

    /**
     * The tree seen as a {@link LongMapChecks.Subject}: it has no put (throws), its nodes are its
     * leaves as {key, value, 0, 0}, its shape the structure checks.
     */
    static LongMapChecks.Subject subject(final CdrcNatarajanMittalTree t) {
        return new LongMapChecks.Subject() {
            @Override
            public long putIfAbsent(final long key, final long value) {
                return t.putIfAbsent(key, value);
            }

            @Override
            public long put(final long key, final long value) {
                throw new UnsupportedOperationException("CdrcNatarajanMittalTree has no put");
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

    /**
     * Quiescent: structure checks pass, the tree holds exactly {@code model} in key order, and after
     * a flush every reachable node's count is 1.
     */
    private static void assertContents(final CdrcNatarajanMittalTree t, final Map<Long, Long> model) {
        LongMapChecks.assertContents(subject(t), model);
        final long[] expected = model.keySet().stream().mapToLong(Long::longValue).sorted().toArray();
        assertArrayEquals(expected, t.keysInOrder());
        t.rc().flush();
        assertEquals(List.of(), t.checkCounts());
    }

    // ---------------------------------------------------------------- sequential specification

    /** {@code ops} random operations compared with a TreeMap; structure checked every {@code checkEvery}. */
    private static void sequential(final CdrcNatarajanMittalTree t, final long seed, final int ops, final int checkEvery,
                                   final Function<Random, Long> nextKey) {
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
    @ValueSource(booleans = {true, false})
    void sequentialSmallKeyRange(final boolean snapshots) {
        final Setup s = setup(snapshots);
        sequential(s.tree(), 1, 8_000, 97, rnd -> (long) rnd.nextInt(48) - 8);
        s.closeAndCheckMemory();
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void sequentialLargeKeyRange(final boolean snapshots) {
        final Setup s = setup(snapshots);
        final long[] used = new long[512];
        final int[] n = {0};
        // half fresh keys anywhere in the range (extremes included), half reused ones
        sequential(s.tree(), 2, 8_000, 997, rnd -> {
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
        s.closeAndCheckMemory();
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void ascendingAndDescendingRuns(final boolean snapshots) {
        // degenerate (list-shaped) trees: deep paths
        final Setup s = setup(snapshots);
        final CdrcNatarajanMittalTree t = s.tree();
        final Map<Long, Long> model = new HashMap<>();
        final Probe probe = new Probe(s);
        for (long k = 0; k < 500; k++) {
            assertTrue(t.insert(k, k * 3));
            model.put(k, k * 3);
        }
        for (long k = -1; k >= -500; k--) {
            assertEquals(RESERVED, t.putIfAbsent(k, k));
            model.put(k, k);
        }
        assertContents(t, model);
        for (long k = 0; k < 500; k += 2) {
            assertEquals(k * 3, t.remove(k));
            assertFalse(t.insert(k + 1, 7));
            model.remove(k);
        }
        assertContents(t, model);
        assertEquals(RESERVED, t.remove(0));
        assertEquals(RESERVED, t.get(500));
        probe.close();
        s.closeAndCheckMemory();
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void extremeKeys(final boolean snapshots) {
        final CdrcNatarajanMittalTree t = setup(snapshots).tree();
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

    // ---------------------------------------------------------------- helping, and the chain

    /** Bytes in use after this thread applied its delayed decrements. */
    private static long liveBytes(final Setup s) {
        s.rc().flush();
        return s.alloc().stats().bytesInUse();
    }

    /** The block size of a node: what the allocator counts per node. */
    private static long nodeBlock(final LimboAllocator alloc) {
        final long probe = alloc.allocate(CdrcNatarajanMittalTree.NODE_BYTES);
        final long block = alloc.usableSize(probe);
        alloc.free(probe);
        return block;
    }

    /**
     * Removers that stall after flagging (and tagging) leave flagged leaves and a chain of tagged
     * edges; reads see the stalled keys absent and read the others through the chain; inserts and
     * removes complete the stalled cleanups. Keys 10, 20, .., 200 inserted ascending make a right
     * spine: leaf k is the left child of the internal node keyed k + 10. Each cleanup frees
     * exactly the nodes its CAS unlinked, and the one CAS that unlinks the chain 60 -> 70 -> 80
     * frees its three internal nodes and three flagged leaves, with no retire of this class.
     */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void stalledRemoversAreHelpedAndChainsFreed(final boolean snapshots) {
        final Setup s = setup(snapshots);
        final CdrcNatarajanMittalTree t = s.tree();
        final long block = nodeBlock(s.alloc());
        final Probe probe = new Probe(s); // seeks through the tagged chain hold SNAPSHOTS nodes
        final TreeMap<Long, Long> model = new TreeMap<>();
        for (long k = 10; k <= 200; k += 10) {
            assertTrue(t.insert(k, k + 1));
            model.put(k, k + 1);
        }
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

        final List<String> problems = t.checkInvariants();
        assertFalse(problems.isEmpty());
        assertTrue(problems.stream().allMatch(p -> p.startsWith("reachable marked edge")), problems::toString);
        assertEquals(20, t.keysInOrder().length);
        for (long k = 10; k <= 200; k += 10) {
            assertEquals(orReserved(model.get(k)), t.get(k), "get " + k);
            assertEquals(model.containsKey(k), t.contains(k), "contains " + k);
        }
        assertEquals(model.size(), t.size());

        // insert over a flagged leaf: unlinks node 130 and leaf 120 (2 freed), then inserts 2 nodes
        long live = liveBytes(s);
        assertTrue(t.insert(120, 7));
        model.put(120L, 7L);
        assertEquals(7, t.get(120));
        assertEquals(live, liveBytes(s), "two nodes unlinked and freed, two inserted");

        // insert whose CAS meets the tagged edge to leaf 190: unlinks node 200 and leaf 200
        live = liveBytes(s);
        assertEquals(RESERVED, t.putIfAbsent(195, 9));
        model.put(195L, 9L);
        assertEquals(live, liveBytes(s), "two nodes unlinked and freed, two inserted");

        // remove of 70: one cleanup CAS unlinks nodes 60, 70, 80 and leaves 50, 60, 70
        live = liveBytes(s);
        assertEquals(RESERVED, t.remove(70));
        assertEquals(live - 6 * block, liveBytes(s), "the chain unlinked by one CAS is freed");
        // remove of 80 (flagged, under node 90 whose spine edge is tagged): helps, then absent
        live = liveBytes(s);
        assertEquals(RESERVED, t.remove(80));
        assertEquals(live - 2 * block, liveBytes(s));
        probe.close();

        assertContents(t, model);
        for (long k = 50; k <= 80; k += 10) {
            assertTrue(t.insert(k, -k));
            model.put(k, -k);
        }
        assertContents(t, model);
        s.closeAndCheckMemory();
    }

    // ---------------------------------------------------------------- concurrent stress

    /** Keys [0, SHARED) are contended; key k >= SHARED belongs to thread (k - SHARED) % threads. */
    private static final int KEYS = 1_000;
    private static final int SHARED = 64;

    /**
     * {@code threads} workers run {@code ops} operations each, on their own keys (every result
     * checked against a per-thread model) and on the shared keys (values checked to belong to the
     * key; per key, successful inserts minus successful removes end at 1 iff present). Then,
     * quiescent: the structure and count checks, the private keys equal the union of the models.
     */
    private static void stress(final CdrcNatarajanMittalTree t, final int threads, final int ops, final long seed)
            throws Exception {
        final int privatePerThread = (KEYS - SHARED) / threads;
        final List<Object[]> results = Workers.run(threads, false, id -> {
            final Map<Long, Long> model = new HashMap<>();
            final long[] net = new long[SHARED];
            final Random rnd = new Random(seed * 1_000_003 + id);
            for (int i = 0; i < ops; i++) {
                final boolean shared = rnd.nextInt(4) == 0;
                final long k = shared ? rnd.nextInt(SHARED) : SHARED + id + (long) threads * rnd.nextInt(privatePerThread);
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
                if ((i & 2047) == 0) {
                    final long size = t.size();
                    assertTrue(size >= 0 && size <= KEYS, at + ": size " + size);
                }
            }
            return new Object[]{model, net};
        });
        assertEquals(List.of(), t.checkInvariants(), "structure after quiescence");
        t.rc().flush(); // adopts the departed workers' delayed decrements
        assertEquals(List.of(), t.checkCounts(), "counts after quiescence and a flush");
        final Map<Long, Long> expectedPrivate = new HashMap<>();
        final long[] net = new long[SHARED];
        for (final Object[] r : results) {
            @SuppressWarnings("unchecked") final Map<Long, Long> model = (Map<Long, Long>) r[0];
            expectedPrivate.putAll(model);
            final long[] n = (long[]) r[1];
            for (int k = 0; k < SHARED; k++) {
                net[k] += n[k];
            }
        }
        final long[] keys = t.keysInOrder();
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
            assertEquals(t.contains(k) ? 1 : 0, net[k], "net successful inserts - removes of shared key " + k);
        }
        assertEquals(keys.length, t.size());
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void concurrentStressFreesEverything(final boolean snapshots) throws Exception {
        final Setup s = setup(snapshots);
        stress(s.tree(), 3, 20_000, 42);
        for (final long k : s.tree().keysInOrder()) {
            assertEquals(k, s.tree().remove(k) / 1_000_000L);
        }
        assertEquals(0, s.tree().size());
        stress(s.tree(), 4, 6_000, 43);
        s.closeAndCheckMemory();
    }

    /** All threads on a tiny shared range: maximal helping, chains of tagged edges. */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void contendedSmallRange(final boolean snapshots) throws Exception {
        final Setup s = setup(snapshots);
        final CdrcNatarajanMittalTree t = s.tree();
        final List<long[]> nets = Workers.run(4, false, id -> {
            final long[] net = new long[8];
            final Random rnd = new Random(id);
            for (int i = 0; i < 20_000; i++) {
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
            }
            return net;
        });
        assertEquals(List.of(), t.checkInvariants());
        t.rc().flush();
        assertEquals(List.of(), t.checkCounts());
        for (int k = 0; k < 8; k++) {
            long n = 0;
            for (final long[] net : nets) {
                n += net[k];
            }
            assertEquals(t.contains(k) ? 1 : 0, n, "key " + k);
        }
        s.closeAndCheckMemory();
    }

    // ---------------------------------------------------------------- snapshots are always released

    /**
     * Checks that every snapshot slot of this thread is free: taking {@link Cdrc#SNAPSHOT_SLOTS}
     * snapshots of the counted word at {@code field} evicts none.
     */
    private static void assertNoSnapshotHeld(final Cdrc rc, final long field) {
        final long before = rc.evictions();
        final long[] taken = new long[Cdrc.SNAPSHOT_SLOTS];
        for (int i = 0; i < taken.length; i++) {
            taken[i] = rc.snapshot(field);
        }
        final long evicted = rc.evictions() - before;
        for (final long p : taken) {
            rc.releaseSnapshot(p);
        }
        assertEquals(0, evicted, "snapshot slots still held after the tree's operations");
    }

    /**
     * An insert that throws after its seek (the domain is closed, so allocating fails) leaves no
     * snapshot held and no count taken; the tree stays usable for reads.
     */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void operationsReleaseTheirProtectionsAlsoWhenThrowing(final boolean snapshots) {
        final Setup s = setup(snapshots);
        final CdrcNatarajanMittalTree t = s.tree();
        final Cdrc rc = s.rc();
        final long field = s.alloc().allocateZeroed(Long.BYTES); // a counted word holding a probe object
        rc.storeMove(field, rc.allocate(rc.register(new RcType("probe", Cdrc.HEADER))));
        for (long k = 0; k < 200; k++) {
            assertTrue(t.insert(k * 7 % 200, k));
        }
        for (long k = 0; k < 200; k += 3) {
            t.remove(k);
            t.get(k + 1);
        }
        t.size();
        assertNoSnapshotHeld(rc, field);
        rc.flush();
        assertEquals(List.of(), t.checkCounts());

        rc.close();
        final IllegalStateException e = assertThrows(IllegalStateException.class, () -> t.insert(1_000, 1));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        // checked before any other operation of this thread, whose seek would reset the record
        assertNoSnapshotHeld(rc, field);
        assertEquals(List.of(), t.checkCounts(), "a count taken by the failed insert was not given back");
        assertEquals(RESERVED, t.get(1_000));
        assertEquals(List.of(), t.checkInvariants());
        rc.store(field, 0);
        s.alloc().free(field);
        s.closeAndCheckMemory();
    }

    // ---------------------------------------------------------------- bad input, closed

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void reservedKeyAndValueAreRejected(final boolean snapshots) {
        final CdrcNatarajanMittalTree t = setup(snapshots).tree();
        final long k = StructureLifecycle.RESERVED_KEY;
        assertThrows(IllegalArgumentException.class, () -> t.get(k));
        assertThrows(IllegalArgumentException.class, () -> t.contains(k));
        assertThrows(IllegalArgumentException.class, () -> t.insert(k, 1));
        assertThrows(IllegalArgumentException.class, () -> t.putIfAbsent(k, 1));
        assertThrows(IllegalArgumentException.class, () -> t.remove(k));
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> t.insert(1, RESERVED));
        assertTrue(e.getMessage().contains("reserved"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> t.putIfAbsent(1, RESERVED));
        assertEquals(0, t.size());
        assertEquals(List.of(), t.checkInvariants());
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void operationsAfterCloseThrowAndCloseFreesEverything(final boolean snapshots) {
        final Setup s = setup(snapshots);
        final CdrcNatarajanMittalTree t = s.tree();
        for (long k = 0; k < 100; k++) {
            assertTrue(t.insert(k, k));
        }
        assertTrue(t.stalledRemove(50, true)); // a flagged leaf and a tagged edge, still linked
        t.close();
        assertTrue(t.isClosed());
        t.close(); // idempotent
        final IllegalStateException e = assertThrows(IllegalStateException.class, () -> t.get(1));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> t.contains(1));
        assertThrows(IllegalStateException.class, () -> t.insert(2, 2));
        assertThrows(IllegalStateException.class, () -> t.putIfAbsent(2, 2));
        assertThrows(IllegalStateException.class, () -> t.remove(1));
        assertThrows(IllegalStateException.class, t::size);
        s.closeAndCheckMemory();
    }

    @Test
    void nullOrClosedDomainIsRejected() {
        final NullPointerException e = assertThrows(NullPointerException.class,
                () -> new CdrcNatarajanMittalTree(null, true));
        assertTrue(e.getMessage().contains("rc"), e.getMessage());
        final Setup s = setup(true);
        s.tree().close();
        s.rc().close();
        final IllegalStateException closed = assertThrows(IllegalStateException.class,
                () -> new CdrcNatarajanMittalTree(s.rc(), true));
        assertTrue(closed.getMessage().contains("closed"), closed.getMessage());
        s.alloc().trim();
        assertEquals(s.baseline(), s.alloc().stats().bytesInUse(), "a refused tree left nodes behind");
    }

    /** Two trees of both modes on one domain (the node type registered once) stay apart. */
    @Test
    void twoTreesShareADomain() {
        final Setup s = setup(true);
        final long x = s.rc().allocate(s.rc().register(new RcType("other", Cdrc.HEADER)));
        try (CdrcNatarajanMittalTree second = new CdrcNatarajanMittalTree(s.rc(), false)) {
            assertTrue(second.insert(1, 1));
            assertTrue(s.tree().insert(1, 2));
            assertEquals(1, second.get(1));
            assertEquals(2, s.tree().get(1));
        }
        s.rc().release(x);
        assertEquals(48, CdrcNatarajanMittalTree.NODE_BYTES);
        s.closeAndCheckMemory();
    }
}
