package dev.limbo.reclaim;

import static dev.limbo.reclaim.ReclaimTestSupport.RECORD;
import static dev.limbo.reclaim.ReclaimTestSupport.checkNode;
import static dev.limbo.reclaim.ReclaimTestSupport.closeAndMeasure;
import static dev.limbo.reclaim.ReclaimTestSupport.debugAllocator;
import static dev.limbo.reclaim.ReclaimTestSupport.drain;
import static dev.limbo.reclaim.ReclaimTestSupport.replaceAndRetire;
import static dev.limbo.reclaim.ReclaimTestSupport.runThreads;
import static dev.limbo.reclaim.ReclaimTestSupport.seq;
import static dev.limbo.reclaim.ReclaimTestSupport.whileStalled;
import static dev.limbo.reclaim.ReclaimTestSupport.writeNode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Participants;
import dev.limbo.core.Words;

import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * NBR's and NBR+'s own guarantees (NeutralizationBasedReclamation (N1)-(N7)): a round marks every
 * thread when a bag reaches its capacity B; a reserved record is never freed; a thread stalled in
 * its read phase does not stop reclamation and restarts when it runs again; nbr+ frees without
 * marking anyone when another thread's round covers its pending records; departed threads' bags
 * are handed over and nothing leaks; the -af forms (and hp-af) free what a scan found safe a few
 * per pin. The concurrent tests run until reclamation has made the progress asserted, bounded by
 * the timeout. Debug allocator and domain: a freed record is poisoned at once.
 */
@Timeout(120)
class NbrTest {

    /** The bag capacity B (Builder.scanThreshold) of these tests. */
    private static final int B = 64;
    /** Retires during a stall: 10^6 (about a second or two with the debug allocator). */
    private static final long STALL_RETIRES = 1_000_000;

    private static ReclaimDomain domain(final Scheme scheme, final LimboAllocator a) {
        return ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).debug(true).scanThreshold(B)
                .backlogLimit(256).build();
    }

    /**
     * (N3): B - 1 retires leave the bag alone; the B-th runs a round, which marks the other thread
     * (pinned, in its read phase: its poll then restarts) and frees the whole bag, nothing being
     * reserved.
     */
    @ParameterizedTest
    @EnumSource(names = {"NBR", "NBR_PLUS", "NBR_AF", "NBR_PLUS_AF"})
    void aRoundMarksEveryThreadWhenTheBagReachesItsCapacity(final Scheme scheme) throws InterruptedException {
        final LimboAllocator a = debugAllocator();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).debug(true)
                .scanThreshold(B).backlogLimit(0).build();
        final long cell = a.allocateZeroed(Long.BYTES);
        replaceAndRetire(d, cell, seq(9, 0));
        whileStalled(d, g -> assertNotEquals(0, g.protect(0, cell)), () -> {
            for (long k = 1; k < B; k++) {
                replaceAndRetire(d, cell, seq(1, k));
            }
            assertEquals(0, d.stats().neutralizations(), () -> "a round before the bag was full: " + d.stats());
            assertEquals(0, d.stats().freed());
            replaceAndRetire(d, cell, seq(1, B));
            final ReclaimStats s = d.stats();
            assertEquals(1, s.scans(), () -> "no round at B retires: " + s);
            assertTrue(s.neutralizations() >= 1, () -> "the round marked no one: " + s);
            assertEquals(B, s.freed(), () -> "the round did not free the bag (backlogLimit 0): " + s);
        }, g -> assertThrows(Restart.class, g::poll, "the round did not neutralize the pinned thread"));
        drainFlushAndClose(d, a, baseline, B + 1, cell);
    }

    /**
     * (N7), (N2): the stalled thread pins and protects the node in the cell, then never polls
     * while the retirer replaces and retires the cell's node {@link #STALL_RETIRES} times, checking
     * every 256 retires that unreclaimed records stay within the declared bound. Released, its
     * poll throws {@link Restart}; it reads the cell again and finds an intact node.
     */
    @ParameterizedTest
    @EnumSource(names = {"NBR", "NBR_PLUS", "NBR_AF", "NBR_PLUS_AF"})
    void aThreadStalledInItsReadPhaseDoesNotStopReclamation(final Scheme scheme) throws InterruptedException {
        final LimboAllocator a = debugAllocator();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = domain(scheme, a);
        final long cell = a.allocateZeroed(Long.BYTES);
        replaceAndRetire(d, cell, seq(9, 0));
        whileStalled(d, g -> assertNotEquals(0, g.protect(0, cell)), () -> retireWithinBound(d, cell, 0, STALL_RETIRES),
                g -> {
                    assertThrows(Restart.class, g::poll, "the stalled thread was not neutralized");
                    final long node = g.protect(0, cell);
                    final String damage = checkNode(node);
                    g.poll();
                    assertNull(damage);
                });
        final ReclaimStats during = d.stats();
        assertTrue(during.freed() >= STALL_RETIRES - d.garbageBound(Participants.highWater()), during::toString);
        drainFlushAndClose(d, a, baseline, STALL_RETIRES + 1, cell);
    }

    /**
     * (N4): the stalled thread reserves the cell's node by an address inside it and begins a write
     * phase, then stalls; the retirer retires that node and 10^5 more, checking every 256 retires
     * that the reserved node is intact (the debug allocator poisons a freed record) and that
     * garbage stays within the bound. Released, the stalled thread writes into its node, ends the
     * write phase, and its next poll restarts; a flush then frees the node.
     */
    @ParameterizedTest
    @EnumSource(names = {"NBR", "NBR_PLUS", "NBR_AF", "NBR_PLUS_AF"})
    void aReservedRecordIsNeverFreed(final Scheme scheme) throws InterruptedException {
        final LimboAllocator a = debugAllocator();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = domain(scheme, a);
        final long cell = a.allocateZeroed(Long.BYTES);
        final AtomicLong reserved = new AtomicLong();
        final long retires = 100_000;
        replaceAndRetire(d, cell, seq(9, 0));
        whileStalled(d, g -> {
            final long node = g.protect(0, cell);
            g.reserve(0, node + Long.BYTES);
            g.beginWrite();
            reserved.set(node);
        }, () -> retireWithinBound(d, cell, reserved.get(), retires), g -> {
            final long node = reserved.get();
            final long seq = Words.lp(node);
            assertNull(checkNode(node, seq), "the reserved node was freed");
            writeNode(node, seq);
            g.endWrite();
            assertThrows(Restart.class, g::poll, "the stalled thread was not neutralized");
        });
        assertTrue(d.stats().neutralizations() >= retires / B, d.stats()::toString);
        drainFlushAndClose(d, a, baseline, retires + 1, cell);
    }

    /**
     * (N5): thread X retires past the low watermark B / 2 (its records become pending) and waits;
     * thread Y retires B records, which runs a round (marking X among others). X's next retire then
     * frees its pending records, for nbr+ without a round of its own (the count of marks stays),
     * for nbr not at all (its bag is below B).
     */
    @ParameterizedTest
    @EnumSource(names = {"NBR", "NBR_PLUS"})
    void nbrPlusFreesWithoutSignallingWhenAnotherThreadsRoundCoversItsBag(final Scheme scheme)
            throws InterruptedException {
        final LimboAllocator a = debugAllocator();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = domain(scheme, a);
        final long mine = a.allocateZeroed(Long.BYTES);
        final long theirs = a.allocateZeroed(Long.BYTES);
        final int pending = B / 2 + 8;
        for (long k = 0; k <= pending; k++) { // the first finds the cell empty
            replaceAndRetire(d, mine, seq(0, k));
        }
        assertEquals(0, d.stats().freed());
        runThreads(1, t -> {
            for (long k = 0; k <= B; k++) {
                replaceAndRetire(d, theirs, seq(1, k));
            }
        });
        final ReclaimStats afterTheirRound = d.stats();
        assertEquals(1, afterTheirRound.scans(), afterTheirRound::toString);
        assertEquals(B, afterTheirRound.freed(), afterTheirRound::toString);
        replaceAndRetire(d, mine, seq(0, pending + 1));
        final ReclaimStats s = d.stats();
        assertEquals(afterTheirRound.neutralizations(), s.neutralizations(), () -> "a round of its own: " + s);
        if (scheme == Scheme.NBR_PLUS) {
            assertEquals(B + B / 2, s.freed(), () -> "the covered pending records were not freed: " + s);
        } else {
            assertEquals(B, s.freed(), () -> "nbr freed below its capacity: " + s);
        }
        assertEquals(1, drain(d, mine));
        assertEquals(1, drain(d, theirs));
        d.flush();
        assertEquals(0, d.stats().inLimbo(), d.stats()::toString);
        assertEquals(baseline, closeAndMeasure(d, a, mine, theirs));
    }

    /**
     * (N6): threads that retire fewer than B records each and die hand their bags over: each
     * departure runs a round, so nothing stays unreclaimed without any flush. A departure whose
     * record another thread still reserves leaves it as an orphan, intact; once the reservation
     * ends, a flush adopts and frees it, and the allocator is back where it began.
     */
    @ParameterizedTest
    @EnumSource(names = {"NBR", "NBR_PLUS", "NBR_AF", "NBR_PLUS_AF"})
    void departedThreadsBagsAreHandedOverAndNothingLeaks(final Scheme scheme) throws InterruptedException {
        final LimboAllocator a = debugAllocator();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = domain(scheme, a);
        final long cells = a.allocateZeroed(8L * Long.BYTES);
        for (int round = 0; round < 4; round++) {
            final int r = round;
            runThreads(8, t -> {
                for (long k = 0; k < B / 4; k++) {
                    replaceAndRetire(d, cells + (long) t * Long.BYTES, seq(t, r * 1000L + k));
                }
                Participants.close(); // departs: its release hook runs now, on this thread
            });
            Participants.awaitReleases();
            assertEquals(8L * (B / 4) * (round + 1) - 8, d.stats().retired());
            final ReclaimStats s = d.stats();
            assertEquals(0, s.inLimbo() - amortizedBacklog(d), () -> "departures left records unreclaimed: " + s);
        }
        Participants.awaitReleases();
        final long cell = cells;
        try (Guard g = d.pin()) { // this thread reserves the node that a departing thread retires
            final long node = g.protect(0, cell);
            g.reserve(0, node);
            g.beginWrite();
            runThreads(1, t -> {
                assertEquals(1, drain(d, cell));
                Participants.close();
            });
            assertNull(checkNode(node), "the departure freed a reserved record");
            assertEquals(1, d.stats().inLimbo() - amortizedBacklog(d), d.stats()::toString);
            assertEquals(1, d.orphans.size(), "the reserved record is an orphan");
            g.endWrite();
        }
        for (int c = 1; c < 8; c++) {
            drain(d, cells + (long) c * Long.BYTES);
        }
        d.flush();
        assertEquals(0, d.stats().inLimbo(), d.stats()::toString);
        assertEquals(baseline, closeAndMeasure(d, a, cells));
    }

    /**
     * Amortized free (Token-EBR digest §3.8's hook for nbr, nbr+ and hp): what a round or scan
     * finds safe goes to the freeable list, not to the pool; each later pin frees one record
     * (freesPerPin 1, not adaptive), before the section's first read; flush frees the rest.
     */
    @ParameterizedTest
    @EnumSource(names = {"NBR_AF", "NBR_PLUS_AF", "HP_AF"})
    void theAmortizedFormsFreeAFewRecordsPerPin(final Scheme scheme) {
        final LimboAllocator a = debugAllocator();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).debug(true)
                .scanThreshold(B).freesPerPin(1).adaptive(false).backlogLimit(1 << 20).build();
        final long cell = a.allocateZeroed(Long.BYTES);
        long k = 0;
        while (d.stats().scans() == 0) {
            replaceAndRetire(d, cell, seq(0, k++));
        }
        final long safe = k - 1; // the first found the cell empty; nothing is protected now
        assertTrue(safe > 10, "scanned " + safe); // this thread's own retires: enough for the 10 pins below
        assertEquals(0, d.stats().freed(), "a scan freed at once: " + d.stats());
        for (int pins = 1; pins <= 10; pins++) {
            d.pin().close();
            assertEquals(pins, d.stats().freed(), "one free per pin: " + d.stats());
        }
        drainFlushAndClose(d, a, baseline, k, cell);
    }

    /** The garbage bound is the declared formula: B + n k, plus backlogLimit for the -af forms. */
    @Test
    void theGarbageBoundIsTheDeclaredFormula() {
        final LimboAllocator a = LimboAllocator.create();
        for (final Scheme scheme : new Scheme[] {Scheme.NBR, Scheme.NBR_PLUS, Scheme.NBR_AF, Scheme.NBR_PLUS_AF}) {
            final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).slots(3)
                    .maxNesting(2).scanThreshold(500).backlogLimit(77).build();
            assertEquals(500 + 10L * 3 * 2 + (scheme.amortized() ? 77 : 0), d.garbageBound(10), scheme::toString);
            d.close();
        }
    }

    /**
     * Retires the cell's node, flushes, checks that {@code retired} records were retired in all and
     * every one freed, closes the domain and checks that the allocator is back at {@code baseline}.
     */
    private static void drainFlushAndClose(final ReclaimDomain d, final LimboAllocator a, final long baseline,
                                           final long retired, final long cell) {
        assertEquals(1, drain(d, cell));
        d.flush();
        final ReclaimStats s = d.stats();
        assertEquals(retired, s.retired(), s::toString);
        assertEquals(0, s.inLimbo(), () -> "in limbo after flush: " + s);
        assertEquals(baseline, closeAndMeasure(d, a, cell));
    }

    /** Records of {@code d}'s live guards waiting in their amortized free lists (0 for the other forms). */
    private static long amortizedBacklog(final ReclaimDomain d) {
        long n = 0;
        for (int id = 0; id < Participants.CAPACITY; id++) {
            final Guard g = d.guardOf(id);
            if (g != null) {
                n += g.freeable.size();
            }
        }
        return n;
    }

    /**
     * The retirer's loop: replaces and retires the cell's node {@code retires} times, checking every
     * 256 retires that unreclaimed records stay within the declared bound and that the
     * {@code reserved} node (if any) is intact.
     */
    private static void retireWithinBound(final ReclaimDomain d, final long cell, final long reserved,
                                          final long retires) {
        final long reservedSeq = reserved == 0 ? 0 : Words.lp(reserved);
        for (long k = 1; k <= retires; k++) {
            replaceAndRetire(d, cell, seq(1, k));
            if (k % 256 == 0) {
                final ReclaimStats s = d.stats();
                final long bound = d.garbageBound(Participants.highWater());
                assertTrue(s.inLimbo() <= bound, () -> s.inLimbo() + " unreclaimed, over the bound " + bound + ": " + s);
                if (reserved != 0) {
                    assertNull(checkNode(reserved, reservedSeq), "a reserved record was freed");
                }
            }
        }
    }
}
