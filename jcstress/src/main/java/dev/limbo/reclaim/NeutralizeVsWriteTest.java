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
 * Neutralize vs write phase (Guard's (R1)-(R5), DebraPlus (P2), (P4)): a neutralized thread never
 * completes a write that follows the restart point on a record that its neutralizer frees.
 *
 * <p>Every state starts with a record r (a padded word of its own, its one field), the victim's
 * reservation slot (empty) and its mark (clear). Actor {@code victim} runs a write phase as a
 * structure does: {@code reserve(r)} (R1, a release store of r in the slot), {@code beginWrite}
 * (R4, a full fence, then the poll (R3), a volatile load of the mark) and, if the mark was clear,
 * the write into r. Actor {@code neutralizer} runs a reclaimer's side: it marks the victim (R2, a
 * getAndSet), then screens r against the reservations (R5, an acquire load of the slot), and frees
 * r if no reservation names it (in debra+ the free comes later, after the advances; it only follows
 * the screening). Result (victim, neutralizer): victim 1 = its write completed, 0 = its poll saw the
 * mark and it restarted; neutralizer 1 = it freed r, 0 = it kept r (reserved). (1, 1) is the bug:
 * the victim writes into a freed record.
 *
 * <p>{@link BrokenNoFence}: beginWrite without (R4). The poll's load can pass the reservation still
 * in the store buffer (store buffering): x86 can show (1, 1) under C2. {@link BrokenPollFirst}: the
 * victim polls before it reserves; an interleaving shows (1, 1) on any hardware (poll, mark, screen,
 * reserve, write). Each is marked ACCEPTABLE_INTERESTING so that the suite does not fail on it.
 */
public final class NeutralizeVsWriteTest {

    private NeutralizeVsWriteTest() {
    }

    /** A state: record r, the victim's reservation slot and its mark. */
    abstract static class Base {
        final long record = WordSlots.word(0);
        final long reservation = WordSlots.word(0);
        final long mark = WordSlots.word(0);

        /** The write that follows the restart point: 1 if done, 0 if the poll saw the mark (Restart). */
        final int writeIfNotMarked() {
            if (Words.lv(mark) != 0) { // (R3)
                return 0;
            }
            Words.sp(record, 1);
            return 1;
        }

        /** The neutralizer: mark (R2), screen (R5); 1 if it frees r, 0 if a reservation keeps it. */
        final int neutralizeAndScreen() {
            Words.xchg(mark, 1); // (R2)
            final long r = Words.la(reservation); // (R5)
            return r == record ? 0 : 1;
        }
    }

    /** As Guard does it: reserve (R1), fence (R4), poll (R3), write || mark (R2), screen (R5). */
    @JCStressTest
    @Description("victim: sr(res, r); fullFence; lv(mark) == 0? write r || xchg(mark, 1); la(res) != r? free r: "
            + "a neutralized thread never writes into a record its neutralizer freed")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "the write completed on r; the screening saw the reservation and keeps r")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the victim saw the mark and restarts; r kept for now (its reservation was seen)")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the victim saw the mark and restarts without writing; r freed")
    @Outcome(id = "1, 1", expect = FORBIDDEN, desc = "the victim wrote into r, which its neutralizer freed")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class Fenced extends Base {
        @Actor
        public void victim(final II_Result r) {
            Words.sr(reservation, record); // (R1)
            Words.fullFence(); // (R4)
            r.r1 = writeIfNotMarked(); // (R3)
        }

        @Actor
        public void neutralizer(final II_Result r) {
            r.r2 = neutralizeAndScreen(); // (R2), (R5)
        }
    }

    /**
     * BROKEN on purpose: beginWrite without the full fence (R4). The poll's load of the mark can
     * pass the reservation still in the store buffer, and the screening misses it: x86 can show
     * (1, 1).
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: store buffering, under C2): victim: sr(res, r); lv(mark) == 0? write r || "
            + "xchg(mark, 1); la(res) != r? free r: no fence between the reservation and the poll")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "the write completed on r; the screening saw the reservation and keeps r")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the victim saw the mark and restarts; r kept for now (its reservation was seen)")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the victim saw the mark and restarts without writing; r freed")
    @Outcome(id = "1, 1", expect = ACCEPTABLE_INTERESTING,
            desc = "the poll passed the unfenced reservation: the victim wrote into r, which its neutralizer freed")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class BrokenNoFence extends Base {
        @Actor
        public void victim(final II_Result r) {
            Words.sr(reservation, record); // (R1), and no (R4)
            r.r1 = writeIfNotMarked(); // (R3)
        }

        @Actor
        public void neutralizer(final II_Result r) {
            r.r2 = neutralizeAndScreen(); // (R2), (R5)
        }
    }

    /**
     * BROKEN on purpose: the victim polls before it reserves. The neutralizer may mark and screen
     * between the poll and the reservation: an interleaving, so any hardware can show (1, 1).
     */
    @JCStressTest
    @Description("BROKEN (any hardware can show it, x86 included: an interleaving): victim: lv(mark) == 0? "
            + "(sr(res, r); fullFence; write r) || xchg(mark, 1); la(res) != r? free r: the poll before the reservation")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "the write completed on r; the screening saw the reservation and keeps r")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the victim saw the mark and restarts without writing; r freed")
    @Outcome(id = "1, 1", expect = ACCEPTABLE_INTERESTING,
            desc = "the mark and the screening came between the poll and the reservation: the victim wrote into a freed r")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class BrokenPollFirst extends Base {
        @Actor
        public void victim(final II_Result r) {
            if (Words.lv(mark) != 0) { // (R3), too early
                r.r1 = 0;
                return;
            }
            Words.sr(reservation, record); // (R1)
            Words.fullFence(); // (R4)
            Words.sp(record, 1);
            r.r1 = 1;
        }

        @Actor
        public void neutralizer(final II_Result r) {
            r.r2 = neutralizeAndScreen(); // (R2), (R5)
        }
    }
}
