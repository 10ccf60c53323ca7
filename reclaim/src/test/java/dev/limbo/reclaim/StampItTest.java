package dev.limbo.reclaim;

import static dev.limbo.reclaim.ReclaimTestSupport.RECORD;
import static dev.limbo.reclaim.ReclaimTestSupport.checkNode;
import static dev.limbo.reclaim.ReclaimTestSupport.closeAndMeasure;
import static dev.limbo.reclaim.ReclaimTestSupport.debugAllocator;
import static dev.limbo.reclaim.ReclaimTestSupport.replaceAndRetire;
import static dev.limbo.reclaim.ReclaimTestSupport.runThreads;
import static dev.limbo.reclaim.ReclaimTestSupport.seq;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Participants;
import dev.limbo.core.Words;
import dev.limbo.core.testing.Progress;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What the scheme suite does not cover for {@code stampit}: the stamp queue's order and its
 * lowest and highest stamps, alone and under concurrent push and remove; reclamation by the last
 * thread out; the local list's thresholds; departed threads' leftovers handed to the global list
 * (inside or outside a region, and under churn); and the garbage after a stalled thread leaves.
 */
@Timeout(180)
class StampItTest {

    private static final int PROGRESS_TIMEOUT = 120;

    /**
     * Members are ordered by stamp, newest first; remove says whether the block held the lowest
     * stamp; lowest() is raised to the new oldest member's stamp when the oldest leaves, and to the
     * head stamp when the queue empties.
     */
    @Test
    void stampsOrderTheMembersAndTheOldestRaisesTheTail() {
        final StampQueue q = new StampQueue(8);
        final int a = StampQueue.blockOf(0);
        final int b = StampQueue.blockOf(1);
        final int c = StampQueue.blockOf(2);
        final long sa = q.push(a);
        final long sb = q.push(b);
        final long sc = q.push(c);
        assertTrue(sa < sb && sb < sc, "stamps grow: " + sa + ", " + sb + ", " + sc);
        assertArrayEquals(new long[] {sc, sb, sa}, q.members());
        assertTrue(q.lowest() <= sa, "lowest " + q.lowest() + " above the oldest member's stamp " + sa);
        assertTrue(q.highest() > sc, "highest() is the next stamp to hand out");
        assertFalse(q.remove(b), "b did not hold the lowest stamp");
        assertTrue(q.lowest() <= sa);
        assertTrue(q.remove(a), "a held the lowest stamp");
        assertEquals(sc, q.lowest(), "the tail stamp is the new oldest member's");
        assertTrue(q.remove(c), "c was the only member");
        assertArrayEquals(new long[0], q.members());
        assertEquals(q.highest(), q.lowest(), "an empty queue's lowest stamp catches up with the head stamp");
        final long again = q.push(b);
        assertTrue(again >= q.lowest() && again > sc, "a block pushed again takes a new, larger stamp");
        assertTrue(q.remove(b));
        assertEquals(0, q.retries(), "no contention, no retries");
    }

    /**
     * Threads push and remove their blocks concurrently. A thread's stamps strictly grow; while it
     * is a member, lowest() is at most its stamp (the safety invariant) and highest() above it.
     * At the end the queue is empty and lowest() equals highest().
     */
    @Test
    @Timeout(PROGRESS_TIMEOUT + 60)
    void lowestNeverPassesAMemberUnderConcurrentPushAndRemove() throws InterruptedException {
        final StampQueue q = new StampQueue(8);
        final int threads = 4;
        final AtomicLong violations = new AtomicLong();
        final Progress progress = new Progress(PROGRESS_TIMEOUT, "entries", 400_000);
        runThreads(threads, progress, t -> {
            final int block = StampQueue.blockOf(t);
            long previous = -1;
            while (!progress.done()) {
                final long s = q.push(block);
                if (s <= previous || q.stamp(block) != s) {
                    violations.incrementAndGet();
                }
                previous = s;
                for (int spin = 0; spin < (s & 7); spin++) {
                    Thread.onSpinWait();
                }
                if (q.lowest() > s || q.highest() <= s) {
                    violations.incrementAndGet();
                }
                q.remove(block);
                progress.add(0, 1);
            }
        });
        assertEquals(0, violations.get(), "stamps out of order, or lowest() above a member's stamp");
        assertArrayEquals(new long[0], q.members());
        assertEquals(q.highest(), q.lowest(), "the last thread out raised the tail stamp to the head's");
    }

    /**
     * The last thread out reclaims the global list; a thread that leaves while an older one stays
     * keeps up to MAX_REMAINING nodes on its local list, and pushes more to the global list.
     * Thresholds: a retire reclaims the local list only above TRY_RECLAIM nodes.
     */
    @Test
    void theLastThreadOutReclaimsTheGlobalListAndTheLocalListKeepsItsThresholds() throws InterruptedException {
        final LimboAllocator a = debugAllocator();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = ReclaimDomain.builder(Scheme.STAMPIT).allocator(a).recordBytes(RECORD).debug(true).build();
        final CountDownLatch pinned = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        try {
            final Thread older = olderInRegion(d, pinned, release);
            final StampIt.StampGuard mine;
            try (Guard g = d.pin()) {
                mine = (StampIt.StampGuard) g;
                for (int i = 0; i < StampIt.MAX_REMAINING; i++) {
                    g.retire(g.allocate());
                }
            }
            assertEquals(StampIt.MAX_REMAINING, mine.count, "at MAX_REMAINING the local list stays local");
            try (Guard g = d.pin()) {
                g.retire(g.allocate());
            }
            assertEquals(0, mine.count, "above MAX_REMAINING leaving pushes the local list to the global one");
            assertEquals(StampIt.MAX_REMAINING + 1, d.stats().inLimbo(), "nothing is safe while the older thread stays");
            release.countDown();
            older.join();
            assertEquals(0, d.stats().inLimbo(), "the older thread, last out, reclaimed the global list");

            // the thresholds: the local list is reclaimed by a retire only above TRY_RECLAIM
            final CountDownLatch pinned2 = new CountDownLatch(1);
            final CountDownLatch release2 = new CountDownLatch(1);
            final Thread older2 = olderInRegion(d, pinned2, release2);
            try (Guard g = d.pin()) {
                for (int i = 0; i < StampIt.MAX_REMAINING; i++) {
                    g.retire(g.allocate());
                }
            }
            release2.countDown();
            older2.join();
            assertEquals(StampIt.MAX_REMAINING, d.stats().inLimbo(), "a local list is reclaimed by its owner only");
            try (Guard g = d.pin()) {
                for (int i = StampIt.MAX_REMAINING; i < StampIt.TRY_RECLAIM; i++) {
                    g.retire(g.allocate());
                }
                assertEquals(StampIt.TRY_RECLAIM, d.stats().inLimbo(), "no reclaim up to TRY_RECLAIM");
                g.retire(g.allocate());
                assertEquals(StampIt.TRY_RECLAIM + 1 - StampIt.MAX_REMAINING, d.stats().inLimbo(),
                        "above TRY_RECLAIM a retire frees the safe prefix: the nodes of the earlier region");
            }
            assertEquals(0, d.stats().inLimbo(), "the only thread out reclaims its whole list");
        } finally {
            release.countDown();
            d.close();
        }
        assertEquals(baseline, closeAndMeasure(d, a));
    }

    /**
     * Departed threads' leftovers go to the global list: threads retire while another thread is in
     * its region (nothing is safe) and die; once that thread leaves, it frees them (no flush), and
     * close returns every byte. A thread that dies inside its region is removed from the queue.
     */
    @Test
    void departedThreadsHandTheirNodesToTheGlobalListAndLeakNothing() throws InterruptedException {
        final LimboAllocator a = debugAllocator();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = ReclaimDomain.builder(Scheme.STAMPIT).allocator(a).recordBytes(RECORD).debug(true).build();
        final StampQueue q = ((StampIt) d).queue;
        final CountDownLatch pinned = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        try {
            final Thread older = olderInRegion(d, pinned, release);
            runThreads(4, t -> retireInRegions(d, 10));
            Participants.reapTerminated();
            Participants.awaitReleases();
            assertEquals(40, d.stats().inLimbo(), "nothing is safe while the older thread stays");
            // a thread that dies inside its region
            runThreads(1, t -> {
                final Guard g = d.pin();
                g.retire(g.allocate());
            });
            Participants.reapTerminated();
            Participants.awaitReleases();
            assertEquals(1, q.members().length, "the dead thread's block was removed; the older thread's remains");
            release.countDown();
            older.join();
            assertEquals(0, d.stats().inLimbo(), "the last thread out freed the departed threads' nodes");
            assertArrayEquals(new long[0], q.members());
        } finally {
            release.countDown();
            d.close();
        }
        assertEquals(baseline, closeAndMeasure(d, a));
    }

    /**
     * 1,000 short-lived threads, four at a time, each retiring in ten regions: after each batch
     * has died and been reaped, nothing is left unreclaimed (the departures reclaim their own
     * leftovers and the global list), and close returns every byte.
     */
    @Test
    void aChurnOfShortLivedThreadsLeavesNoGarbage() throws InterruptedException {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = ReclaimDomain.builder(Scheme.STAMPIT).allocator(a).recordBytes(RECORD).build();
        long maxAfterBatch = 0;
        try {
            for (int batch = 0; batch < 250; batch++) {
                runThreads(4, t -> retireInRegions(d, 10));
                Participants.reapTerminated();
                Participants.awaitReleases();
                maxAfterBatch = Math.max(maxAfterBatch, d.stats().inLimbo());
            }
            assertEquals(10_000, d.stats().retired());
            assertEquals(0, maxAfterBatch, "garbage left after a batch of threads died");
        } finally {
            d.close();
        }
        assertEquals(baseline, closeAndMeasure(d, a));
    }

    /**
     * A stalled thread holds reclamation back: nothing retired after it entered is freed, and its
     * node stays intact (debug allocator: poisoned if freed). Once it leaves, the garbage falls to
     * the thresholds' bound: with the workers out of their regions and one more region ended, at
     * most MAX_REMAINING nodes per worker remain, on their local lists.
     */
    @Test
    @Timeout(2 * PROGRESS_TIMEOUT + 60)
    void afterAStalledThreadLeavesGarbageFallsToTheThresholds() throws InterruptedException {
        final LimboAllocator a = debugAllocator();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = ReclaimDomain.builder(Scheme.STAMPIT).allocator(a).recordBytes(RECORD).debug(true).build();
        final long cells = a.allocateZeroed(2 * Long.BYTES);
        final int workers = 2;
        final CountDownLatch stalled = new CountDownLatch(1);
        final CountDownLatch unstall = new CountDownLatch(1);
        final CountDownLatch left = new CountDownLatch(1);
        final CountDownLatch finish = new CountDownLatch(1);
        final CountDownLatch parked = new CountDownLatch(workers);
        final Progress during = new Progress(PROGRESS_TIMEOUT, "retires during the stall", 5_000);
        final Progress after = new Progress(PROGRESS_TIMEOUT, "retires after the stall", 5_000);
        final List<Throwable> failures = new CopyOnWriteArrayList<>();
        final List<Thread> threads = new ArrayList<>();
        boolean closed = false;
        try {
            replaceAndRetire(d, cells, seq(9, 0));
            threads.add(Thread.ofPlatform().name("stalled").start(() -> {
                try {
                    try (Guard g = d.pin()) {
                        final long node = g.protect(0, cells);
                        final long seq = Words.lp(node);
                        stalled.countDown();
                        await(unstall);
                        assertNull(checkNode(node, seq), "the stalled thread's node was freed");
                    }
                } catch (final Throwable t) {
                    failures.add(t);
                } finally {
                    stalled.countDown();
                    left.countDown();
                }
            }));
            await(stalled);
            final long retiredAtStall = d.stats().retired();
            for (int w = 0; w < workers; w++) {
                final int t = w;
                threads.add(Thread.ofPlatform().name("worker-" + w).start(() -> {
                    try {
                        long k = 1;
                        while (!during.done()) {
                            replaceAndRetire(d, cells + (k & 1) * Long.BYTES, seq(t, k++));
                            during.add(0, 1);
                        }
                        await(left);
                        while (!after.done()) {
                            replaceAndRetire(d, cells + (k & 1) * Long.BYTES, seq(t, k++));
                            after.add(0, 1);
                        }
                    } catch (final Throwable e) {
                        failures.add(e);
                        during.stop();
                        after.stop();
                    } finally {
                        parked.countDown();
                    }
                    await(finish); // alive and out of its regions: its local list stays its own
                }));
            }
            while (!during.done()) {
                Thread.onSpinWait();
            }
            final ReclaimStats held = d.stats();
            final long retiredDuring = held.retired() - retiredAtStall;
            assertTrue(held.inLimbo() >= retiredDuring, "freed " + (retiredDuring - held.inLimbo())
                    + " nodes retired after the stalled thread entered: " + held);
            unstall.countDown();
            await(parked);
            ReclaimTestSupport.rethrow(failures);
            try (Guard g = d.pin()) {
                assertEquals(1, g.depth()); // one more region ends: the only one, hence the last out
            }
            final ReclaimStats s = d.stats();
            assertTrue(s.inLimbo() <= (long) workers * StampIt.MAX_REMAINING, s.inLimbo() + " unreclaimed after the"
                    + " stall ended; the thresholds allow " + workers * StampIt.MAX_REMAINING + ": " + s);
            assertEquals(((StampIt) d).queue.retries(), s.retries(), "stats().retries() is the queue's count");
            finish.countDown();
            ReclaimTestSupport.joinAll(threads);
            ReclaimTestSupport.rethrow(failures);
            try (Guard g = d.pin()) {
                for (int c = 0; c < 2; c++) {
                    g.retire(Words.xchg(cells + (long) c * Long.BYTES, 0));
                }
            }
            d.flush();
            assertEquals(0, d.stats().inLimbo(), () -> "after the workers died and a flush: " + d.stats());
            closed = true;
            assertEquals(baseline, closeAndMeasure(d, a, cells));
        } finally {
            unstall.countDown();
            finish.countDown();
            ReclaimTestSupport.joinAll(threads);
            if (!closed) {
                d.close();
                a.free(cells);
            }
        }
    }

    /**
     * Starts a thread that pins {@code d}, counts {@code pinned} down and stays in its region until
     * {@code release}; returns once it is inside.
     */
    private static Thread olderInRegion(final ReclaimDomain d, final CountDownLatch pinned,
                                        final CountDownLatch release) {
        final Thread older = Thread.ofPlatform().name("older").start(() -> {
            try (Guard g = d.pin()) {
                pinned.countDown();
                await(release);
            }
        });
        await(pinned);
        return older;
    }

    /** Retires a fresh node in each of {@code n} regions. */
    private static void retireInRegions(final ReclaimDomain d, final int n) {
        for (int i = 0; i < n; i++) {
            try (Guard g = d.pin()) {
                g.retire(g.allocate());
            }
        }
    }

    private static void await(final CountDownLatch latch) {
        try {
            if (!latch.await(PROGRESS_TIMEOUT, TimeUnit.SECONDS)) {
                fail("timed out waiting for another thread");
            }
        } catch (final InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
