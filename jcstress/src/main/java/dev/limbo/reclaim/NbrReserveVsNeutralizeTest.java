package dev.limbo.reclaim;

import dev.limbo.core.Words;
import dev.limbo.stress.WordSlots;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * NBR's reservation vs its reclaimer's round (NeutralizationBasedReclamation (N3), (N4); Guard's
 * (R1)-(R5)): a reserved record is never freed, and a thread that reached a record before its
 * unlink never writes into it once the round has freed it. Unlike {@link NeutralizeVsWriteTest},
 * which checks the SPI's fence pair alone, this runs a whole operation of each side in NBR's order.
 *
 * <p>Every state starts with a link to record r (a padded word of its own, its one field), the
 * victim's nesting 0, its reservation slot empty and its mark clear. Actor {@code victim} runs an
 * operation as a structure does under nbr: the outermost pin (ReclaimDomain (C1): an opaque store of
 * nesting 1 and no fence, as in membarrier mode; then Guard.clearNeutralization: a mark found set is
 * cleared with a getAndSet), the read phase (protect: an acquire load of the link, then a poll,
 * (R3)), and the write phase: reserve(r) (R1), beginWrite (R4, then the poll (R3)) and, if not
 * marked, the write into r. Actor {@code reclaimer} runs a round on a bag holding r: the unlink
 * (a getAndSet of the link to 0, before the retire), the mark of every thread (R2), then the
 * screening (R5, an acquire load of the reservation), which frees r if no reservation names it.
 * Result (victim, reclaimer): victim 2 = its read found r unlinked (nothing to write), 1 = its write
 * into r completed, 0 = a poll saw the mark and it restarts without writing; reclaimer 1 = it freed
 * r, 0 = it kept r (reserved). (1, 1) is the bug: the victim writes into a freed record.
 *
 * <p>{@link BrokenCollectBeforeMark}: the reclaimer screens before it marks. The victim may reserve
 * and pass its poll between the screening and the mark: an interleaving, which any hardware can
 * show. {@link BrokenSkipUnpinned}: the reclaimer marks only threads it sees pinned (nesting read
 * after the unlink's full fence), which (N3) argues against: the pin's nesting store has no
 * StoreLoad fence after it, so the victim's read of the link can pass it (store buffering), find
 * r, and no mark ever comes: x86 can show it under C2. Each bug outcome is ACCEPTABLE_INTERESTING so
 * that the suite does not fail on it.
 */
public final class NbrReserveVsNeutralizeTest {

    private NbrReserveVsNeutralizeTest() {
    }

    /** A state: the link, record r, and the victim's nesting, reservation slot and mark. */
    abstract static class Base {
        final long record = WordSlots.word(0);
        final long link = WordSlots.word(record);
        final long nesting = WordSlots.word(0);
        final long reservation = WordSlots.word(0);
        final long mark = WordSlots.word(0);

        /** The victim's whole operation: pin, read phase, write phase; its result code. */
        final int operation() {
            Words.opaqueStore(nesting, 1); // (C1), no StoreLoad fence (membarrier mode)
            Words.acquireFence(); // (C2): a compiler barrier only
            if (Words.lv(mark) != 0) {
                Words.xchg(mark, 0); // clearNeutralization: a mark set before the section is moot
            }
            final long p = Words.la(link); // protect's load (1)
            if (Words.lv(mark) != 0) { // protect's poll (R3)
                return 0;
            }
            if (p == 0) {
                return 2;
            }
            Words.sr(reservation, p); // (R1)
            Words.fullFence(); // (R4)
            if (Words.lv(mark) != 0) { // beginWrite's poll (R3)
                return 0;
            }
            Words.sp(p, 1); // the write phase's write into r
            return 1;
        }

        /** The unlink, before r joins the reclaimer's bag. */
        final void unlink() {
            Words.xchg(link, 0);
        }

        /** (R5): 1 if the screening frees r, 0 if a reservation keeps it. */
        final int screen() {
            return Words.la(reservation) == record ? 0 : 1;
        }
    }

    /** NBR's order: unlink, mark every thread (R2), screen (R5) and free. */
    @JCStressTest
    @Description("victim: pin; la(link); poll; sr(res, r); fullFence; poll; write r || xchg(link, 0); xchg(mark, 1); "
            + "la(res) != r? free r: a reserved record is never freed, a record freed by the round is never written")
    @Outcome(id = "2, 1", expect = ACCEPTABLE, desc = "the victim found r unlinked; r freed")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "the write completed on r; the screening saw the reservation and keeps r")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the victim saw the mark and restarts; r kept for now (its reservation was seen)")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the victim saw the mark and restarts without writing; r freed")
    @Outcome(id = "1, 1", expect = FORBIDDEN, desc = "the victim wrote into r, which the round freed")
    @Outcome(expect = FORBIDDEN, desc = "an outcome the protocol cannot produce")
    @State
    public static class Round extends Base {
        @Actor
        public void victim(final II_Result r) {
            r.r1 = operation();
        }

        @Actor
        public void reclaimer(final II_Result r) {
            unlink();
            Words.xchg(mark, 1); // (R2): every thread, pinned or not
            r.r2 = screen(); // (R5)
        }
    }

    /**
     * BROKEN on purpose: the reclaimer screens before it marks. The victim may reserve r and pass
     * its beginWrite poll between the screening and the mark: an interleaving, which any hardware
     * (x86 included) can show.
     */
    @JCStressTest
    @Description("BROKEN (any hardware can show it, x86 included: an interleaving): victim: pin; la(link); poll; "
            + "sr(res, r); fullFence; poll; write r || xchg(link, 0); la(res) != r? free r; xchg(mark, 1): "
            + "the screening before the mark")
    @Outcome(id = "2, 1", expect = ACCEPTABLE, desc = "the victim found r unlinked; r freed")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "the write completed on r; the screening saw the reservation and keeps r")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the victim saw the mark and restarts; r kept for now")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the victim saw the mark and restarts without writing; r freed")
    @Outcome(id = "1, 1", expect = ACCEPTABLE_INTERESTING,
            desc = "the victim reserved r after the screening and polled before the mark: it wrote into a freed r")
    @Outcome(expect = FORBIDDEN, desc = "an outcome the protocol cannot produce")
    @State
    public static class BrokenCollectBeforeMark extends Base {
        @Actor
        public void victim(final II_Result r) {
            r.r1 = operation();
        }

        @Actor
        public void reclaimer(final II_Result r) {
            unlink();
            final int freed = screen(); // (R5), too early
            Words.xchg(mark, 1); // (R2)
            r.r2 = freed;
        }
    }

    /**
     * BROKEN on purpose: the reclaimer marks only a thread it sees pinned. The victim's nesting
     * store has no StoreLoad fence after it, so its read of the link can pass the store, still in
     * the store buffer, and find r while the reclaimer, after its unlink, reads nesting 0 and skips
     * it: x86 can show (1, 1) under C2 (store buffering).
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: store buffering, under C2): victim: so(nesting, 1); la(link); poll; "
            + "sr(res, r); fullFence; poll; write r || xchg(link, 0); lv(nesting) != 0? xchg(mark, 1); "
            + "la(res) != r? free r: an unpinned-looking thread is not marked")
    @Outcome(id = "2, 1", expect = ACCEPTABLE, desc = "the victim found r unlinked; r freed")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "the write completed on r; the screening saw the reservation and keeps r")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the victim saw the mark and restarts; r kept for now")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the victim saw the mark and restarts without writing; r freed")
    @Outcome(id = "1, 1", expect = ACCEPTABLE_INTERESTING,
            desc = "the reclaimer saw nesting 0 and skipped the victim, whose read had found r: it wrote into a freed r")
    @Outcome(expect = FORBIDDEN, desc = "an outcome the protocol cannot produce")
    @State
    public static class BrokenSkipUnpinned extends Base {
        @Actor
        public void victim(final II_Result r) {
            r.r1 = operation();
        }

        @Actor
        public void reclaimer(final II_Result r) {
            unlink();
            if (Words.lv(nesting) != 0) { // skips a thread that looks unpinned
                Words.xchg(mark, 1); // (R2)
            }
            r.r2 = screen(); // (R5)
        }
    }
}
