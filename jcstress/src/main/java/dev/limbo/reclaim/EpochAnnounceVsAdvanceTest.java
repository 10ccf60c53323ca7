package dev.limbo.reclaim;

import dev.limbo.stress.WordSlots;
import dev.limbo.core.Words;
import dev.limbo.core.internal.Native;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * The store-buffering race of epoch-based reclamation ({@link EpochDomain}'s memory-ordering notes
 * (2), (3), (4), (7)): a reader that enters a section announces itself and then reads a shared
 * pointer; a thread that unlinked the node and then scans the announcements to advance the epoch
 * must not both miss the announcement and leave the reader holding the node. Either the scanner
 * sees the reader active (and holds the advance back), or the reader's read follows the unlink (and
 * cannot reach the node).
 *
 * <p>Every state starts with a cell that links node r (a padded word of its own) and a quiescent
 * announcement word (0). Actor {@code reader} announces epoch {@value #EPOCH} as
 * {@code EpochGuard.announce} does in symmetric mode, a getAndSet of an active announcement word on a heap
 * array word (the store (2) and the full fence (3) in one locked instruction), then acquire-loads the cell, as {@code EpochGuard.protect} does. Actor {@code unlinkScan} unlinks r
 * with a CAS r -> 0, as a data structure does before it retires r, then scans: a full fence (the
 * scanner's own (3) when it scans on pin, or (7) in flush) and an acquire load (4) of the reader's
 * announcement. Result (reader, scanner): reader 1 = it read r, 0 = it read the unlinked cell;
 * scanner 1 = it saw the reader active at the epoch, 0 = it saw it quiescent. (1, 0) is the bug:
 * the scanner would advance past the reader and r would be freed under it.
 *
 * <p>Release/acquire alone does not order a store before a later load, and x86 shows that through
 * its store buffer: {@link BrokenReleaseAcquire} (no fence on either side) and
 * {@link BrokenNoAnnounceFence} (the reader forgets (3); the scanner's side is as in
 * {@link EpochDomain}) are expected to show (1, 0) on x86. {@link BrokenNoScanFence} (the scanner
 * forgets its fence; the unlink is still a CAS) is allowed the outcome by the memory model, but x86
 * cannot show it, since its locked CAS is itself a full fence (nor can ARMv8, whose acquire load
 * cannot pass a preceding store-release); Power could. Each broken outcome is marked
 * ACCEPTABLE_INTERESTING so that the suite does not fail on it.
 *
 * <p>{@link Asymmetric} is the default mode's pairing: no fence in the reader at all, and
 * membarrier on the scanner's side. {@link BrokenNoAnnounceFence} has the same reader with a scanner
 * that only fences itself, and shows the outcome that membarrier excludes.
 */
public final class EpochAnnounceVsAdvanceTest {

    /** The epoch the reader announces. */
    static final long EPOCH = 5;
    /** The reader's announcement: epoch {@value #EPOCH}, active. */
    static final long ANNOUNCED = EPOCH << 1 | 1;
    static final VarHandle ANNOUNCEMENTS = MethodHandles.arrayElementVarHandle(long[].class).withInvokeExactBehavior();

    private EpochAnnounceVsAdvanceTest() {
    }

    /** A state: node r, a cell linking it, the reader's announcement word (quiescent). */
    abstract static class Base {
        final long node = WordSlots.word(0);
        final long cell = WordSlots.word(node);
        /** The reader's announcement: a heap array word, as in {@link EpochDomain}. */
        final long[] announcement = new long[1];

        final void announceFenced() {
            final long previous = (long) ANNOUNCEMENTS.getAndSet(announcement, 0, ANNOUNCED); // (2), (3)
        }

        final void announceUnfenced() {
            ANNOUNCEMENTS.setOpaque(announcement, 0, ANNOUNCED); // (2) only
        }

        final long scan() {
            return (long) ANNOUNCEMENTS.getAcquire(announcement, 0); // (4)
        }

        /** 1 if the reader read r, 0 if it read the unlinked cell, 9 for anything else. */
        final int readerSaw(final long p) {
            return p == node ? 1 : p == 0 ? 0 : 9;
        }

        /** 1 if the scanner saw the reader active at {@link #EPOCH}, 0 if quiescent, 9 for anything else. */
        static int scannerSaw(final long a) {
            return a == ANNOUNCED ? 1 : a == 0 ? 0 : 9;
        }
    }

    /**
     * As {@link EpochDomain} does it: announce with a getAndSet ((2) and (3)), read; unlink
     * with a CAS, full fence ((3) or (7)), acquire-load (4) the announcement.
     */
    @JCStressTest
    @Description("xchg(A, e|1); la(cell) || cas(cell, r, 0); fullFence; la(A): "
            + "the reader holds r only if the scanner sees it active")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the reader read r; the scanner saw it active and holds the advance back")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the reader's read followed the unlink; the scanner saw it active anyway")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the scan ran before the announcement; the reader's read followed the unlink")
    @Outcome(id = "1, 0", expect = FORBIDDEN, desc = "the reader holds r, but the scanner saw it quiescent and would advance and free r")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class Fenced extends Base {
        @Actor
        public void reader(final II_Result r) {
            announceFenced(); // (2), (3)
            r.r1 = readerSaw(Words.la(cell));
        }

        @Actor
        public void unlinkScan(final II_Result r) {
            Words.cas(cell, node, 0);
            Words.fullFence(); // (3) or (7)
            r.r2 = scannerSaw(scan()); // (4)
        }
    }

    /**
     * As {@link EpochDomain} does it in asymmetric mode (the default where the kernel has
     * membarrier): the reader announces with an opaque store and only a compiler barrier
     * (acquireFence: no instruction on x86), and reads; the scanner
     * unlinks with a CAS, issues the heavy barrier membarrier(PRIVATE_EXPEDITED) (8), and
     * acquire-loads the announcement. Its broken variant is {@link BrokenNoAnnounceFence}: the same
     * reader, with a scanner that has only a full fence of its own.
     */
    @JCStressTest
    @Description("opaqueStore(A, e|1); acquireFence; la(cell) || cas(cell, r, 0); membarrier; la(A): "
            + "the heavy barrier on the scanner's side stands in for the reader's fence")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the reader read r; the scanner saw it active and holds the advance back")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the reader's read followed the unlink; the scanner saw it active anyway")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the scan ran before the announcement; the reader's read followed the unlink")
    @Outcome(id = "1, 0", expect = FORBIDDEN, desc = "the reader holds r, but the scanner saw it quiescent and would advance and free r")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class Asymmetric extends Base {
        @Actor
        public void reader(final II_Result r) {
            if (Native.MEMBARRIER) {
                announceUnfenced(); // (2)
                VarHandle.acquireFence(); // (3): program order only
            } else {
                announceFenced(); // no membarrier here: the domain falls back to symmetric mode, so does the test
            }
            r.r1 = readerSaw(Words.la(cell));
        }

        @Actor
        public void unlinkScan(final II_Result r) {
            Words.cas(cell, node, 0);
            if (Native.MEMBARRIER) {
                Native.membarrier(); // (8)
            } else {
                Words.fullFence(); // the symmetric fallback
            }
            r.r2 = scannerSaw(scan()); // (4)
        }
    }

    /**
     * BROKEN on purpose: a release store of the announcement and a release store for the unlink, each
     * followed by an acquire load and no fence. The memory model allows (1, 0), and x86 shows it.
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: store buffering): sr(A, e|1); la(cell) || sr(cell, 0); la(A): no fence on either side, "
            + "the scanner may miss a reader that holds r")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the reader read r; the scanner saw it active and holds the advance back")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the reader's read followed the unlink; the scanner saw it active anyway")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the scan ran before the announcement; the reader's read followed the unlink")
    @Outcome(id = "1, 0", expect = ACCEPTABLE_INTERESTING,
            desc = "store buffering: the reader holds r, but the scanner saw it quiescent and would free r")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class BrokenReleaseAcquire extends Base {
        @Actor
        public void reader(final II_Result r) {
            ANNOUNCEMENTS.setRelease(announcement, 0, ANNOUNCED);
            r.r1 = readerSaw(Words.la(cell));
        }

        @Actor
        public void unlinkScan(final II_Result r) {
            Words.sr(cell, 0);
            r.r2 = scannerSaw(scan());
        }
    }

    /**
     * BROKEN on purpose: the reader announces without the full fence (3); the scanner is as in
     * {@link EpochDomain}. The reader's announcement can still sit in its store buffer when the
     * scanner looks, after the reader already read r: x86 shows (1, 0).
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: store buffering): opaqueStore(A, e|1); la(cell) || cas(cell, r, 0); fullFence; la(A): "
            + "no fence after the announcement, the scanner may miss a reader that holds r")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the reader read r; the scanner saw it active and holds the advance back")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the reader's read followed the unlink; the scanner saw it active anyway")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the scan ran before the announcement; the reader's read followed the unlink")
    @Outcome(id = "1, 0", expect = ACCEPTABLE_INTERESTING,
            desc = "the read passed the unfenced announcement: the reader holds r, the scanner saw it quiescent")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class BrokenNoAnnounceFence extends Base {
        @Actor
        public void reader(final II_Result r) {
            announceUnfenced(); // (2), no (3)
            r.r1 = readerSaw(Words.la(cell));
        }

        @Actor
        public void unlinkScan(final II_Result r) {
            Words.cas(cell, node, 0);
            Words.fullFence();
            r.r2 = scannerSaw(scan());
        }
    }

    /**
     * BROKEN on purpose (in the memory model): the reader is as in {@link EpochDomain}, the scanner
     * unlinks with a CAS and acquire-loads the announcement without a fence between. The model allows
     * the acquire load to pass the CAS's store, but x86's locked CAS is a full fence (and ARMv8 orders
     * an acquire load after a store-release), so on those machines (1, 0) is not expected to show.
     */
    @JCStressTest
    @Description("BROKEN (x86 cannot show it: its locked CAS is a full fence; nor can ARMv8; POWER could): "
            + "xchg(A, e|1); la(cell) || cas(cell, r, 0); la(A): no fence before the scan, which may miss a reader that holds r")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the reader read r; the scanner saw it active and holds the advance back")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the reader's read followed the unlink; the scanner saw it active anyway")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the scan ran before the announcement; the reader's read followed the unlink")
    @Outcome(id = "1, 0", expect = ACCEPTABLE_INTERESTING,
            desc = "the scan's load passed the unlink CAS (allowed by the model, not by x86's locked CAS)")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class BrokenNoScanFence extends Base {
        @Actor
        public void reader(final II_Result r) {
            announceFenced(); // (2), (3)
            r.r1 = readerSaw(Words.la(cell));
        }

        @Actor
        public void unlinkScan(final II_Result r) {
            Words.cas(cell, node, 0);
            r.r2 = scannerSaw(scan()); // no (3)/(7) before it
        }
    }
}
