package dev.limbo.reclaim;

import static dev.limbo.reclaim.ReclaimTestSupport.RECORD;
import static dev.limbo.reclaim.ReclaimTestSupport.checkNode;
import static dev.limbo.reclaim.ReclaimTestSupport.closeAndMeasure;
import static dev.limbo.reclaim.ReclaimTestSupport.debugAllocator;
import static dev.limbo.reclaim.ReclaimTestSupport.replaceAndRetire;
import static dev.limbo.reclaim.ReclaimTestSupport.runThreads;
import static dev.limbo.reclaim.ReclaimTestSupport.seq;
import static dev.limbo.reclaim.ReclaimTestSupport.writeNode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Participants;
import dev.limbo.core.Words;

import dev.limbo.reclaim.internal.NeutralizationEvent;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * DEBRA+'s own guarantees (DebraPlus (P1)-(P6)): a thread stalled in its read phase does not stop
 * reclamation and restarts when it runs again; a thread stalled in its write phase keeps only its
 * reserved records, which are never freed while reserved; a neutralized thread's retire is not
 * freed before the threads pinned at the current epoch are done with it. The other threads run
 * until reclamation has made the progress asserted (no fixed counts), bounded by the timeout.
 * Debug allocator and domain: a freed record is poisoned at once.
 */
@Timeout(120)
class DebraPlusTest {

    /** A small suspect threshold, so that epochs are short and the bound tight. */
    private static final int C = 64;
    /** Records the retirer must see freed while the other thread stalls. */
    private static final long PROGRESS = 200_000;

    private static ReclaimDomain domain(final Scheme scheme, final LimboAllocator a) {
        return ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).debug(true).suspectThreshold(C)
                .backlogLimit(256).build();
    }

    /**
     * (a) The stalled thread pins and protects the node in the cell, then never polls until it is
     * released. The retirer replaces and retires the cell's node until {@link #PROGRESS} records
     * were freed during the stall, checking every 256 retires that unreclaimed records stay within
     * the declared bound. Once released, the stalled thread's poll throws {@link Restart}; it then
     * announces the current epoch, reads the cell again and finds an intact node.
     */
    @ParameterizedTest
    @EnumSource(names = {"DEBRA_PLUS", "DEBRA_PLUS_AF"})
    void aThreadStalledInItsReadPhaseDoesNotStopReclamation(final Scheme scheme) throws InterruptedException {
        final LimboAllocator a = debugAllocator();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = domain(scheme, a);
        final long cell = a.allocateZeroed(Long.BYTES);
        final CountDownLatch pinned = new CountDownLatch(1);
        final CountDownLatch released = new CountDownLatch(1);
        final AtomicLong retired = new AtomicLong();
        replaceAndRetire(d, cell, seq(9, 0));
        runThreads(2, t -> {
            try {
                if (t == 0) {
                    try (Guard g = d.pin()) {
                        assertNotEquals(0, g.protect(0, cell));
                        pinned.countDown();
                        released.await();
                        assertThrows(Restart.class, g::poll, "the stalled thread was not neutralized");
                        final EpochDomain epochs = (EpochDomain) d;
                        assertEquals(epochs.globalEpoch(), epochs.announcementOf(Participants.current()) >>> 2,
                                "the restart did not announce the current epoch");
                        final long node = g.protect(0, cell);
                        final String damage = checkNode(node);
                        g.poll();
                        assertNull(damage);
                    }
                } else {
                    try {
                        pinned.await();
                        retired.set(retireUntilProgress(d, cell, 0));
                    } finally {
                        released.countDown();
                    }
                }
            } catch (final InterruptedException e) {
                throw new AssertionError(e);
            } finally {
                pinned.countDown();
            }
        });
        assertTrue(d.stats().neutralizations() >= 1, () -> "no neutralization: " + d.stats());
        assertEquals(1, drain(d, cell));
        d.flush();
        final ReclaimStats s = d.stats();
        assertEquals(retired.get() + 1, s.retired(), () -> "retired: " + s);
        assertEquals(0, s.inLimbo(), () -> "in limbo after flush: " + s);
        assertEquals(baseline, closeAndMeasure(d, a, cell));
    }

    /**
     * (b) The stalled thread reads the node in the cell, reserves it by an address inside it (its
     * second word), and begins a write phase, then stalls. The retirer runs as in (a), checking that
     * the reserved node stays intact and that unreclaimed records stay within the bound. Released,
     * the stalled thread finds its node intact, completes its write into it, ends the write phase,
     * and its next poll restarts.
     */
    @ParameterizedTest
    @EnumSource(names = {"DEBRA_PLUS", "DEBRA_PLUS_AF"})
    void aThreadStalledInItsWritePhaseHoldsOnlyItsReservation(final Scheme scheme) throws InterruptedException {
        final LimboAllocator a = debugAllocator();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = domain(scheme, a);
        final long cell = a.allocateZeroed(Long.BYTES);
        final CountDownLatch pinned = new CountDownLatch(1);
        final CountDownLatch released = new CountDownLatch(1);
        final AtomicLong reserved = new AtomicLong();
        final AtomicLong retired = new AtomicLong();
        replaceAndRetire(d, cell, seq(9, 0));
        runThreads(2, t -> {
            try {
                if (t == 0) {
                    try (Guard g = d.pin()) {
                        final long node = g.protect(0, cell);
                        g.reserve(0, node + Long.BYTES);
                        g.beginWrite();
                        reserved.set(node);
                        pinned.countDown();
                        released.await();
                        final long seq = Words.lp(node);
                        assertNull(checkNode(node, seq), "the reserved node was freed");
                        writeNode(node, seq); // the write phase's write, on the reserved node
                        g.endWrite();
                        assertThrows(Restart.class, g::poll, "the stalled thread was not neutralized");
                    }
                } else {
                    try {
                        pinned.await();
                        retired.set(retireUntilProgress(d, cell, reserved.get()));
                    } finally {
                        released.countDown();
                    }
                }
            } catch (final InterruptedException e) {
                throw new AssertionError(e);
            } finally {
                pinned.countDown();
            }
        });
        assertTrue(d.stats().neutralizations() >= 1, () -> "no neutralization: " + d.stats());
        assertEquals(1, drain(d, cell));
        d.flush();
        final ReclaimStats s = d.stats();
        assertEquals(retired.get() + 1, s.retired(), () -> "retired: " + s);
        assertEquals(0, s.inLimbo(), () -> "in limbo after flush: " + s);
        assertEquals(baseline, closeAndMeasure(d, a, cell));
    }

    /**
     * (c) The stamp problem (DebraPlus (P3)). The victim pins and begins a write phase, and stalls
     * while the retirer moves the epoch four advances ahead (neutralizing it). A reader then pins
     * at the current epoch and protects the node of a second cell. The victim, still in its write
     * phase, unlinks that node and retires it, restarts at its next poll, unpins and flushes: a
     * retire stamped with its stale epoch would be freed there, under the reader. The reader, which
     * nobody neutralized, must find the node intact and its poll must pass.
     */
    @ParameterizedTest
    @EnumSource(names = {"DEBRA_PLUS", "DEBRA_PLUS_AF"})
    void aNeutralizedThreadsRetireWaitsForTheCurrentEpoch(final Scheme scheme) throws InterruptedException {
        final LimboAllocator a = debugAllocator();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = domain(scheme, a);
        final EpochDomain epochs = (EpochDomain) d;
        final long cell = a.allocateZeroed(Long.BYTES);
        final long shared = a.allocateZeroed(Long.BYTES);
        replaceAndRetire(d, cell, seq(9, 0));
        replaceAndRetire(d, shared, seq(9, 1));
        final CountDownLatch victimWriting = new CountDownLatch(1);
        final CountDownLatch epochMoved = new CountDownLatch(1);
        final CountDownLatch readerPinned = new CountDownLatch(1);
        final CountDownLatch victimDone = new CountDownLatch(1);
        final AtomicLong retired = new AtomicLong();
        runThreads(3, t -> {
            try {
                switch (t) {
                    case 0 -> { // the victim
                        try (Guard g = d.pin()) {
                            g.reserve(0, shared);
                            g.beginWrite();
                            victimWriting.countDown();
                            readerPinned.await();
                            final long node = Words.xchg(shared, 0);
                            g.retire(node);
                            g.endWrite();
                            assertThrows(Restart.class, g::poll, "the victim was not neutralized");
                        } finally {
                            victimWriting.countDown();
                        }
                        d.flush();
                        victimDone.countDown();
                    }
                    case 1 -> { // the retirer
                        try {
                            victimWriting.await();
                            final long target = epochs.globalEpoch() + 4;
                            long k = 0;
                            while (epochs.globalEpoch() < target) {
                                replaceAndRetire(d, cell, seq(1, k++));
                            }
                            retired.set(k);
                        } finally {
                            epochMoved.countDown();
                        }
                    }
                    default -> { // the reader
                        try {
                            epochMoved.await();
                            try (Guard g = d.pin()) {
                                final long node = g.protect(0, shared);
                                readerPinned.countDown();
                                victimDone.await();
                                final String damage = checkNode(node);
                                g.poll();
                                assertNull(damage, "a neutralized thread's retire was freed under a reader of the current epoch");
                            }
                        } finally {
                            readerPinned.countDown();
                        }
                    }
                }
            } catch (final InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        assertEquals(1, drain(d, cell));
        d.flush();
        final ReclaimStats s = d.stats();
        assertEquals(retired.get() + 2, s.retired(), () -> "retired: " + s);
        assertEquals(0, s.inLimbo(), () -> "in limbo after flush: " + s);
        assertEquals(baseline, closeAndMeasure(d, a, cell, shared));
    }

    /**
     * The count of marks (ReclaimDomain (R6)), which lets a screening skip the reservations when no
     * thread is marked: a restart drops its thread's mark, except inside an enclosing write phase,
     * whose end drops it; an outermost pin drops a mark set between sections; a departure drops
     * the mark of a thread that leaves marked.
     */
    @Test
    void theCountOfMarksFollowsRestartsWritePhasesPinsAndDepartures() throws InterruptedException {
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = ReclaimDomain.builder(Scheme.DEBRA_PLUS).allocator(a).recordBytes(RECORD).build();
        final long cell = a.allocateZeroed(Long.BYTES);
        final int me = Participants.current();
        try (Guard g = d.pin()) {
            Words.sr(cell, g.allocate());
            d.neutralize(me);
            assertTrue(d.anyMarked());
            assertThrows(Restart.class, () -> g.protect(0, cell));
            assertFalse(d.anyMarked(), "a restart drops the mark");
            g.reserve(0, Words.lv(cell));
            g.beginWrite();
            try (Guard inner = d.pin()) {
                d.neutralize(me);
                assertThrows(Restart.class, () -> inner.protect(0, cell));
                assertTrue(d.anyMarked(), "a restart inside an enclosing write phase stays counted");
            }
            assertTrue(d.anyMarked());
            g.endWrite();
            assertFalse(d.anyMarked(), "the end of the write phase drops it");
            assertThrows(Restart.class, g::poll, "the enclosing read phase restarts after the nested one");
            g.retire(Words.xchg(cell, 0));
        }
        d.neutralize(me);
        assertTrue(d.anyMarked());
        d.pin().close();
        assertFalse(d.anyMarked(), "an outermost pin drops a mark set between sections");
        final CountDownLatch idle = new CountDownLatch(1);
        final CountDownLatch marked = new CountDownLatch(1);
        final AtomicLong id = new AtomicLong(-1);
        final Thread leaver = Thread.ofPlatform().name("debra-plus-leaver").start(() -> {
            d.pin().close();
            id.set(Participants.current());
            idle.countDown();
            try {
                marked.await();
            } catch (final InterruptedException e) {
                throw new AssertionError(e);
            }
            Participants.close(); // departs, marked
        });
        idle.await();
        assertTrue(d.neutralize((int) id.get()));
        assertTrue(d.anyMarked());
        marked.countDown();
        leaver.join();
        Participants.awaitReleases();
        assertFalse(d.anyMarked(), "a departure drops the mark of a thread that leaves marked");
        d.close();
        a.free(cell);
    }

    /**
     * (P1): a neutralization is recorded as a JFR event naming the scheme, the neutralizer, the
     * victim, the victim's epoch and the neutralizer's bag size (over the threshold).
     */
    @Test
    void aNeutralizationIsRecordedAsAJfrEvent() throws Exception {
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = ReclaimDomain.builder(Scheme.DEBRA_PLUS).allocator(a).recordBytes(RECORD)
                .suspectThreshold(4).asymmetricFence(false).build();
        final long cell = a.allocateZeroed(Long.BYTES);
        final CountDownLatch pinned = new CountDownLatch(1);
        final CountDownLatch released = new CountDownLatch(1);
        final AtomicLong victim = new AtomicLong(-1);
        final AtomicLong neutralizer = new AtomicLong(-1);
        final Path file = Files.createTempFile("neutralization", ".jfr");
        try (Recording recording = new Recording()) {
            recording.enable(NeutralizationEvent.NAME);
            recording.start();
            runThreads(2, t -> {
                try {
                    if (t == 0) {
                        try (Guard g = d.pin()) {
                            victim.set(Participants.current());
                            pinned.countDown();
                            released.await();
                            assertThrows(Restart.class, g::poll);
                        }
                    } else {
                        try {
                            pinned.await();
                            neutralizer.set(Participants.current());
                            for (long k = 0; d.stats().neutralizations() == 0; k++) {
                                replaceAndRetire(d, cell, seq(1, k));
                            }
                        } finally {
                            released.countDown();
                        }
                    }
                } catch (final InterruptedException e) {
                    throw new AssertionError(e);
                } finally {
                    pinned.countDown();
                }
            });
            recording.stop();
            recording.dump(file);
            final List<RecordedEvent> events = RecordingFile.readAllEvents(file).stream()
                    .filter(e -> e.getEventType().getName().equals(NeutralizationEvent.NAME)).toList();
            assertFalse(events.isEmpty(), "no dev.limbo.Neutralization event recorded");
            final RecordedEvent e = events.get(0);
            assertEquals("debra+", e.getString("scheme"));
            assertEquals(neutralizer.get(), e.getInt("neutralizer"));
            assertEquals(victim.get(), e.getInt("victim"));
            assertTrue(e.getLong("victimEpoch") >= 1, e::toString);
            assertTrue(e.getLong("bagSize") > 4, e::toString);
        } finally {
            Files.deleteIfExists(file);
        }
        assertEquals(1, drain(d, cell));
        d.flush();
        assertEquals(0, d.stats().inLimbo());
        d.close();
        a.free(cell);
    }

    /**
     * The retirer's loop: replaces and retires until {@link #PROGRESS} records were freed since it
     * began, checking every 256 retires that unreclaimed records stay within the declared bound
     * and that the {@code reserved} node (if any) is intact. Returns the records it retired.
     */
    private static long retireUntilProgress(final ReclaimDomain d, final long cell, final long reserved) {
        final long freedBefore = d.stats().freed();
        final long reservedSeq = reserved == 0 ? 0 : Words.lp(reserved);
        long k = 0;
        while (true) {
            replaceAndRetire(d, cell, seq(1, k++));
            if (k % 256 == 0) {
                final ReclaimStats s = d.stats();
                final long bound = d.garbageBound(Participants.highWater());
                assertTrue(s.inLimbo() <= bound, () -> s.inLimbo() + " unreclaimed, over the bound " + bound + ": " + s);
                if (reserved != 0) {
                    assertNull(checkNode(reserved, reservedSeq), "a reserved record was freed");
                }
                if (s.freed() - freedBefore >= PROGRESS) {
                    return k;
                }
            }
        }
    }

    /** Retires the cell's node, if any; returns how many (0 or 1). */
    private static long drain(final ReclaimDomain d, final long cell) {
        try (Guard g = d.pin()) {
            final long old = Words.xchg(cell, 0);
            if (old == 0) {
                return 0;
            }
            g.retire(old);
            return 1;
        }
    }
}
