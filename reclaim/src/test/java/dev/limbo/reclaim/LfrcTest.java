package dev.limbo.reclaim;

import static dev.limbo.reclaim.ReclaimTestSupport.POISON;
import static dev.limbo.reclaim.ReclaimTestSupport.RECORD;
import static dev.limbo.reclaim.ReclaimTestSupport.checkNode;
import static dev.limbo.reclaim.ReclaimTestSupport.closeAndMeasure;
import static dev.limbo.reclaim.ReclaimTestSupport.runThreads;
import static dev.limbo.reclaim.ReclaimTestSupport.seq;
import static dev.limbo.reclaim.ReclaimTestSupport.writeNode;
import static dev.limbo.reclaim.SchemeSuiteTest.LINK;
import static dev.limbo.reclaim.ReclaimTestSupport.exchange;
import static dev.limbo.reclaim.SchemeSuiteTest.writeLinked;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Participants;
import dev.limbo.core.Words;

import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lock-free reference counting ({@link LockFreeRefCounting}) beyond the shared suite (whose linked
 * nodes, {@link SchemeSuiteTest#writeLinked}, these tests use: word 0 a sequence number, word 1 the
 * link, the rest a pattern): the counts
 * equal the references once quiescent, a long chain goes with one release and no deep stack, a
 * counted record is never freed, freeExclusive frees into the scheme's own pool and releases what
 * the record links, an empty link set is refused, the garbage bound K * (1 + R) holds under a
 * stalled thread, and a thread that dies pinned leaves nothing behind.
 */
@Timeout(120)
class LfrcTest {

    private static ReclaimDomain.Builder lfrc(final LimboAllocator a) {
        return ReclaimDomain.builder(Scheme.LFRC).allocator(a).recordBytes(RECORD);
    }

    /** The references counted on {@code ptr} (its count word without FREED). */
    private static long count(final ReclaimDomain d, final long ptr) {
        return Words.lv(((LockFreeRefCounting) d).countWord(ptr)) / LockFreeRefCounting.ONE;
    }

    /** Whether words 0, 2 and 3 of {@code node} still hold {@code seq}'s pattern. */
    private static boolean intact(final long node, final long seq) {
        boolean ok = Words.lp(node) == seq;
        for (int i = 2; i < ReclaimTestSupport.WORDS; i++) {
            ok &= Words.lp(node + (long) i * Long.BYTES) == ReclaimTestSupport.patternWord(seq, i);
        }
        return ok;
    }

    /**
     * Once quiescent, a record's count is its owner's unit (until retire) plus one per link and
     * per slot that holds it: a root and a record's link each count, a mark changes nothing, a
     * protect counts until the section ends (once per slot, not per call), and the release of the
     * last reference frees the record and releases what it links.
     */
    @Test
    void countsAfterQuiescenceEqualTheReferences() {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = lfrc(a).build();
        d.declareLinks(LINK);
        final long cells = a.allocateZeroed(2 * Long.BYTES);
        final long cellA = cells;
        final long cellB = cells + Long.BYTES;
        final long nodeA = d.allocateExclusive();
        final long nodeB = d.allocateExclusive();
        assertEquals(1, count(d, nodeA), "owner");
        try (Guard g = d.pin()) {
            writeLinked(g, nodeB, seq(0, 2), 0);
            writeLinked(g, nodeA, seq(0, 1), nodeB);
            g.store(cellA, nodeA);
            g.store(cellB, nodeB | 1);
            g.store(cellB, nodeB); // a mark flip: the same target
        }
        assertEquals(2, count(d, nodeA), "owner + cell A");
        assertEquals(3, count(d, nodeB), "owner + A's link + cell B");
        try (Guard g = d.pin()) {
            assertEquals(nodeA, g.protect(0, cellA));
            assertEquals(nodeA, g.protect(0, cellA));
            assertEquals(nodeB, g.protect(1, nodeA + LINK));
            assertEquals(3, count(d, nodeA), "+ slot 0, once");
            assertEquals(4, count(d, nodeB), "+ slot 1");
            assertTrue(g.protectIfEqual(1, cellB, nodeB));
            assertEquals(4, count(d, nodeB), "slot 1 holds B already");
            g.retire(nodeA);
            assertEquals(2, count(d, nodeA), "cell A + slot 0");
        }
        assertEquals(1, count(d, nodeA), "cell A");
        assertEquals(3, count(d, nodeB));
        assertEquals(0, d.stats().freed());
        try (Guard g = d.pin()) {
            assertEquals(nodeA, exchange(g, cellA, 0));
        }
        assertEquals(1, d.stats().freed(), "A went with the last reference");
        assertEquals(2, count(d, nodeB), "A's destructor released its link: owner + cell B");
        try (Guard g = d.pin()) {
            g.retire(nodeB);
            assertTrue(g.cas(cellB, nodeB, 0));
        }
        assertEquals(2, d.stats().freed());
        assertEquals(0, d.stats().inLimbo());
        assertEquals(baseline, closeAndMeasure(d, a, cells));
    }

    /**
     * A chain of 10^5 retired nodes, each held only by its successor's link and the first by a
     * root, goes with the root's one release: the destructor releases iteratively, so even a
     * thread with a 256 KiB stack (far too small for a recursion 10^5 deep) frees them all.
     */
    @Test
    void aChainOf100kNodesGoesWithOneReleaseOnASmallStack() throws InterruptedException {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = lfrc(a).build();
        d.declareLinks(LINK);
        final long cell = a.allocateZeroed(Long.BYTES);
        final int n = 100_000;
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread t = Thread.ofPlatform().stackSize(256 * 1024).start(() -> {
            try {
                try (Guard g = d.pin()) {
                    long prev = 0;
                    for (int i = 0; i < n; i++) {
                        final long node = g.allocate();
                        writeLinked(g, node, seq(0, i), prev);
                        if (prev != 0) {
                            g.retire(prev); // held by node's link from now on
                        }
                        prev = node;
                    }
                    g.store(cell, prev);
                    g.retire(prev);
                }
                assertEquals(n, d.stats().retired());
                assertEquals(0, d.stats().freed(), "a linked node was freed");
                try (Guard g = d.pin()) {
                    g.store(cell, 0);
                }
                assertEquals(n, d.stats().freed(), "one release frees the whole chain");
            } catch (final Throwable e) {
                failure.set(e);
            }
        });
        t.join();
        assertNull(failure.get(), () -> "the chain's release failed: " + failure.get());
        assertEquals(baseline, closeAndMeasure(d, a, cell));
    }

    /**
     * A record is never freed while a slot counts it: a reader protects a node and stays pinned
     * while another thread replaces and retires it; the node keeps its pattern. Once the reader
     * unpins, the node is freed, and debug mode's poison shows it (type-stable memory: the
     * record is still readable, poisoned), which is what a premature free would have shown.
     */
    @Test
    void aCountedRecordIsNeverFreedAndAFreedOneIsPoisoned() throws InterruptedException {
        final LimboAllocator a = ReclaimTestSupport.debugAllocator();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = lfrc(a).debug(true).build();
        final long cell = a.allocateZeroed(Long.BYTES);
        final long node;
        try (Guard g = d.pin()) {
            node = g.allocate();
            writeNode(node, seq(0, 5));
            g.store(cell, node);
        }
        try (Guard g = d.pin()) {
            assertEquals(node, g.protect(0, cell));
            runThreads(1, t -> {
                try (Guard h = d.pin()) {
                    final long fresh = h.allocate();
                    writeNode(fresh, seq(1, 1));
                    h.retire(exchange(h, cell, fresh));
                }
                assertEquals(0, d.stats().freed(), "freed while a slot counts it");
            });
            assertNull(checkNode(node, seq(0, 5)));
        }
        assertEquals(1, d.stats().freed(), "the unpin released the last reference");
        assertEquals(POISON, Words.lp(node + 2 * Long.BYTES), "debug mode poisons what it frees");
        try (Guard g = d.pin()) {
            g.retire(exchange(g, cell, 0));
        }
        assertEquals(0, d.stats().inLimbo());
        assertEquals(baseline, closeAndMeasure(d, a, cell));
    }

    /**
     * freeExclusive of a node that was never published: it releases what the node's links hold
     * (initLink counted them: here a retired node held by nothing else, freed and counted with
     * it), and both records go to the scheme's own pool, not the allocator (type-stable memory),
     * from which the next allocations take them back with a fresh count. A retired record is
     * refused.
     */
    @Test
    void freeExclusiveReleasesTheLinksAndKeepsTheRecord() {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = lfrc(a).build();
        d.declareLinks(LINK);
        final long unpublished;
        final long linked;
        try (Guard g = d.pin()) {
            unpublished = g.allocate();
            linked = g.allocate();
            writeLinked(g, linked, seq(0, 1), 0);
            writeLinked(g, unpublished, seq(0, 2), linked);
            g.retire(linked);
            assertEquals(1, count(d, linked), "the unpublished node's link");
        }
        d.freeExclusive(unpublished);
        assertEquals(1, d.stats().freed(), "the linked node went with its last reference");
        assertEquals(1, d.stats().retired());
        assertThrows(IllegalArgumentException.class, () -> d.freeExclusive(unpublished), "freed twice");
        try (Guard g = d.pin()) {
            final long[] again = {g.allocate(), g.allocate()};
            Arrays.sort(again);
            final long[] freed = {Math.min(unpublished, linked), Math.max(unpublished, linked)};
            assertArrayEquals(freed, again, "the pool hands the freed records out again");
            assertEquals(1, count(d, again[0]), "a fresh owner's unit");
            assertEquals(1, count(d, again[1]));
            g.retire(again[0]);
            assertThrows(IllegalStateException.class, () -> d.freeExclusive(again[0]), "retired already");
            d.freeExclusive(again[1]);
        }
        assertEquals(baseline, closeAndMeasure(d, a));
    }

    /**
     * A counting scheme releases a reclaimed record's links, so it cannot serve a structure whose
     * records have several layouts and which therefore declares an empty link set: refused, with
     * nothing kept; a declaration with links is accepted afterwards.
     */
    @Test
    void anEmptyLinkSetIsRefused() {
        final LimboAllocator a = LimboAllocator.create();
        try (ReclaimDomain d = lfrc(a).build()) {
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, d::declareLinks);
            assertTrue(e.getMessage().contains("declares none"), e.getMessage());
            assertNull(d.links());
            d.declareLinks(LINK);
            assertArrayEquals(new long[] {LINK}, d.links());
            assertTrue(d.has(Capability.COUNTED_LINKS));
            assertEquals(Long.MAX_VALUE, ((LockFreeRefCounting) d).garbageBound(1),
                    "with links, retired chains are unbounded in general");
        }
        try (ReclaimDomain d = lfrc(a).slots(3).maxNesting(2).build()) {
            assertEquals(6, ((LockFreeRefCounting) d).garbageBound(1), "without links: K = slots * maxNesting");
        }
    }

    /**
     * The garbage bound K * (1 + R): a stalled thread holds K = 4 slots (one window), each on the
     * head of a pair in its own cell, whose link holds its tail (R = 1: a replaced pair's head and
     * tail are retired together, and the tail goes with its head). Another thread replaces the
     * pairs 10^5 times.
     * Unreclaimed records never exceed K * (1 + R) = 8 (checked after every 1000 updates), and
     * once every cell was replaced they are exactly the stalled thread's 4 heads and their 4
     * tails; everything else was freed at once. After the stalled thread unpins, nothing is left.
     */
    @Test
    void aStalledThreadHoldsAtMostKTimesOnePlusRRecords() throws InterruptedException {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        final int k = 4;
        final ReclaimDomain d = lfrc(a).slots(k).maxNesting(1).build();
        d.declareLinks(LINK);
        final long cells = a.allocateZeroed(k * (long) Long.BYTES);
        final long bound = (long) k * (1 + 1);
        final int updates = 100_000;
        final CountDownLatch stalled = new CountDownLatch(1);
        final CountDownLatch updated = new CountDownLatch(1);
        final AtomicLong maxInLimbo = new AtomicLong();
        final AtomicLong inLimboAtEnd = new AtomicLong(-1);
        for (int c = 0; c < k; c++) {
            replacePair(d, cells + (long) c * Long.BYTES, seq(9, c));
        }
        runThreads(2, t -> {
            try {
                if (t == 0) {
                    try (Guard g = d.pin()) {
                        final long[] heads = new long[k];
                        for (int s = 0; s < k; s++) {
                            heads[s] = g.protect(s, cells + (long) s * Long.BYTES);
                        }
                        stalled.countDown();
                        await(updated);
                        for (int s = 0; s < k; s++) {
                            assertTrue(intact(heads[s], seq(9, s)), "a held head was freed");
                            assertTrue(intact(Words.lp(heads[s] + LINK), seq(9, s) + (1L << 32)),
                                    "a held head's tail was freed");
                        }
                    }
                } else {
                    await(stalled);
                    for (int i = 0; i < updates; i++) {
                        replacePair(d, cells + (long) (i % k) * Long.BYTES, seq(1, i));
                        if (i % 1000 == 999) {
                            maxInLimbo.accumulateAndGet(d.stats().inLimbo(), Math::max);
                        }
                    }
                    inLimboAtEnd.set(d.stats().inLimbo());
                    updated.countDown();
                }
            } catch (final InterruptedException e) {
                throw new AssertionError(e);
            } finally {
                stalled.countDown();
                updated.countDown();
            }
        });
        assertTrue(maxInLimbo.get() <= bound, "unreclaimed " + maxInLimbo.get() + " > K * (1 + R) = " + bound);
        assertEquals(bound, inLimboAtEnd.get(), "the stalled thread's heads and tails, nothing else");
        assertEquals(0, d.stats().inLimbo(), "the unpin released them");
        try (Guard g = d.pin()) {
            for (int c = 0; c < k; c++) {
                retirePair(g, exchange(g, cells + (long) c * Long.BYTES, 0));
            }
        }
        assertEquals(0, d.stats().inLimbo());
        assertEquals(d.stats().retired(), d.stats().freed());
        assertEquals(baseline, closeAndMeasure(d, a, cells));
    }

    /** Publishes a new pair (head {@code seq}, tail {@code seq + 2^32}) and retires the pair it replaces. */
    private static void replacePair(final ReclaimDomain d, final long cell, final long seq) {
        try (Guard g = d.pin()) {
            final long tail = g.allocate();
            writeLinked(g, tail, seq + (1L << 32), 0);
            final long head = g.allocate();
            writeLinked(g, head, seq, tail);
            retirePair(g, exchange(g, cell, head));
        }
    }

    /** Retires {@code head} (if any) and the tail it links; the tail goes when its head does. */
    private static void retirePair(final Guard g, final long head) {
        if (head != 0) {
            final long tail = Words.lp(head + LINK);
            g.retire(head);
            g.retire(tail);
        }
    }

    /**
     * Orphans: a thread frees hundreds of records (its pool bag fills), then protects a node and
     * dies pinned. The node, retired meanwhile by another thread, stays until the dead thread's
     * departure releases its slot; its pool bag goes to the shared stack (nothing returns to the
     * allocator while the domain lives); after close the allocator is back to its baseline.
     */
    @Test
    void aThreadThatDiesPinnedReleasesItsCountsAndHandsOverItsPool() throws InterruptedException {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = lfrc(a).build();
        final long cells = a.allocateZeroed(2 * Long.BYTES);
        final long cell = cells;
        final long other = cells + Long.BYTES;
        final long node;
        try (Guard g = d.pin()) {
            node = g.allocate();
            writeNode(node, seq(0, 1));
            g.store(cell, node);
        }
        final CountDownLatch pinned = new CountDownLatch(1);
        final CountDownLatch die = new CountDownLatch(1);
        final Thread t = Thread.ofPlatform().start(() -> {
            for (int i = 0; i < 600; i++) {
                try (Guard g = d.pin()) {
                    final long fresh = g.allocate();
                    writeNode(fresh, seq(2, i));
                    final long old = exchange(g, other, fresh);
                    if (old != 0) {
                        g.retire(old);
                    }
                }
            }
            final Guard g = d.pin(); // never closed: the thread dies pinned
            if (g.protect(0, cell) == node) {
                pinned.countDown();
            }
            try {
                die.await(); // alive until the main thread has checked that the slot holds the node
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            await(pinned);
            try (Guard g = d.pin()) {
                g.retire(exchange(g, cell, 0));
                g.retire(exchange(g, other, 0));
            }
            assertEquals(1, d.stats().inLimbo(), "the pinned thread's slot holds the node");
            assertNull(checkNode(node, seq(0, 1)));
        } finally {
            die.countDown();
            t.join();
        }
        Participants.reapTerminated();
        Participants.awaitReleases();
        assertEquals(0, d.stats().inLimbo(), "the departure released the dead thread's slot");
        assertEquals(d.stats().retired(), d.stats().freed());
        assertTrue(d.stats().pooled() >= 256, "the dead thread's pool bag went to the shared stack: " + d.stats());
        assertEquals(baseline, closeAndMeasure(d, a, cells));
    }

    private static void await(final CountDownLatch latch) throws InterruptedException {
        if (!latch.await(60, TimeUnit.SECONDS)) {
            fail("timed out waiting for the other thread");
        }
    }
}
