package dev.limbo.structures;

import dev.limbo.core.Words;
import dev.limbo.stress.WordSlots;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * {@link EllenBst}'s flag against mark: an insert under node p flags p (iflag CAS (4)) before it
 * changes p's child, and a delete that removes p (with p's other leaf) marks p (mark CAS (6)),
 * both CASes expecting the CLEAN update word they read, so that exactly one of them wins and an
 * insert never hangs its new subtree under a p that the delete unlinks.
 *
 * <p>A protocol model over region words, each a fresh {@link WordSlots} slot (128-byte aligned,
 * so the two state bits are free): gp.left -> p; p.left = l, p.right = s (leaves); p.update =
 * &lt;CLEAN, X&gt;, gp.update = &lt;CLEAN, 0&gt;; N is the insert's new internal node, I its info
 * record, D the delete's. Actor {@code insertAtS} does one pass of insert at leaf s: it reads
 * p.update (acquire) and, if CLEAN, iflags p to &lt;IFLAG, I&gt;, CASes p.right from s to N
 * (ichild) and unflags. Actor {@code deleteL} does one pass of remove(l): it reads gp.update and
 * p.update, and if both are CLEAN dflags gp to &lt;DFLAG, D&gt;, marks p from the word it read
 * to &lt;MARK, D&gt;, and if the mark held reads p's other child and CASes gp.left from p to it
 * (dchild), then unflags gp; if the mark failed it backtracks. Neither retries (a failed pass
 * reports 0; the real operations search again and help).
 *
 * <p>Result (deleted, inserted, N reachable, l reachable): (1, 1, 0, _) is the lost insert: the
 * insert reported success but N hangs under the unlinked p. FORBIDDEN in {@link FlagThenMark}.
 * {@link BrokenNoMark} deletes without marking p (dflag gp, read p's sibling, dchild, unflag): an
 * insert whose ichild lands between the delete's read of the sibling and its dchild is lost. That
 * is an interleaving, not a reordering, so x86 shows it; it is ACCEPTABLE_INTERESTING so that the
 * suite does not fail on it.
 */
public final class EllenFlagVsMarkTest {

    static final long IFLAG = 1;
    static final long DFLAG = 2;
    static final long MARK = 3;
    static final long STATE = 3;

    private EllenFlagVsMarkTest() {
    }

    /** A state: gp -> p -> (l, s), and fresh N, I, X, D. */
    abstract static class Base {
        final long l = WordSlots.word();
        final long s = WordSlots.word();
        final long n = WordSlots.word();
        final long infoX = WordSlots.word();
        final long infoI = WordSlots.word();
        final long infoD = WordSlots.word();
        final long pLeft = WordSlots.word(l);
        final long pRight = WordSlots.word(s);
        final long pUpdate = WordSlots.word(infoX);
        /** p itself: its address stands for the node, its left word is pLeft. */
        final long p = pLeft;
        final long gpLeft = WordSlots.word(p);
        final long gpUpdate = WordSlots.word(0);

        /** One pass of insert at leaf s, as EllenBst's putIfAbsent and helpInsert. */
        final int insertAtS() {
            final long pupdate = Words.la(pUpdate); // the search's read (2)
            if ((pupdate & STATE) != 0) {
                return 0;
            }
            if (!Words.cas(pUpdate, pupdate, infoI | IFLAG)) { // (4) iflag
                return 0;
            }
            Words.cas(pRight, s, n); // (3) ichild
            Words.cas(pUpdate, infoI | IFLAG, infoI); // (8) iunflag
            return 1;
        }

        /** Whether {@code target} hangs under gp (gp.left, or a child of p while p is gp.left). */
        final int reachable(final long target) {
            final long child = Words.lv(gpLeft);
            if (child == target) {
                return 1;
            }
            return child == p && (Words.lv(pLeft) == target || Words.lv(pRight) == target) ? 1 : 0;
        }

        final void observe(final IIII_Result r) {
            r.r3 = reachable(n);
            r.r4 = reachable(l);
        }
    }

    /** As {@link EllenBst} does it: dflag gp (5), mark p (6), then dchild (7). */
    @JCStressTest
    @Description("la(p.update) clean; cas(p.update, u, I|IFLAG); cas(p.right, s, N); unflag || la(gp.update), "
            + "la(p.update) clean; cas(gp.update, _, D|DFLAG); cas(p.update, u, D|MARK); cas(gp.left, p, la(p.right)): "
            + "an insert that succeeds stays reachable")
    @Outcome(id = "1, 0, 0, 0", expect = ACCEPTABLE, desc = "delete first: p marked, the insert's flag failed")
    @Outcome(id = "1, 1, 1, 0", expect = ACCEPTABLE, desc = "insert first: the delete read the insert's clean word, "
            + "marked p and moved N up")
    @Outcome(id = "0, 1, 1, 1", expect = ACCEPTABLE, desc = "insert flagged p between the delete's read and its "
            + "mark (or before the read): the delete backed out")
    @Outcome(id = "1, 1, 0, 0", expect = FORBIDDEN, desc = "lost insert: N linked under p, but p was unlinked")
    @Outcome(expect = FORBIDDEN, desc = "any other state")
    @State
    public static class FlagThenMark extends Base {
        @Arbiter
        public void arbiter(final IIII_Result r) {
            observe(r);
        }

        @Actor
        public void deleteL(final IIII_Result r) {
            final long gpupdate = Words.la(gpUpdate); // (2)
            final long pupdate = Words.la(pUpdate); // (2)
            if ((gpupdate & STATE) != 0 || (pupdate & STATE) != 0
                    || !Words.cas(gpUpdate, gpupdate, infoD | DFLAG)) { // (5) dflag
                r.r1 = 0;
                return;
            }
            if (Words.cas(pUpdate, pupdate, infoD | MARK)) { // (6) mark
                Words.cas(gpLeft, p, Words.la(pRight)); // (11), (7) dchild
                Words.cas(gpUpdate, infoD | DFLAG, infoD); // (8) dunflag
                r.r1 = 1;
            } else {
                Words.cas(gpUpdate, infoD | DFLAG, infoD); // (8) backtrack
                r.r1 = 0;
            }
        }

        @Actor
        public void insertAtS(final IIII_Result r) {
            r.r2 = insertAtS();
        }
    }

    /**
     * BROKEN on purpose: the delete does not mark p; it flags gp, reads p's other child and swings
     * gp.left to it. An insert that flags p (p is clean: nothing marked it) and swaps s for N after
     * that read is lost with p. x86 shows it.
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: an interleaving, not a reordering): the delete dflags gp and unlinks p "
            + "without marking it || la(p.update) clean; cas(p.update, u, I|IFLAG); cas(p.right, s, N): the insert "
            + "may be lost")
    @Outcome(id = "1, 1, 1, 0", expect = ACCEPTABLE, desc = "insert first: the delete moved N up")
    @Outcome(id = "1, 1, 0, 0", expect = ACCEPTABLE_INTERESTING,
            desc = "lost insert: N linked under p after the delete read p's other child, and p was unlinked")
    @Outcome(expect = FORBIDDEN, desc = "any other state")
    @State
    public static class BrokenNoMark extends Base {
        @Arbiter
        public void arbiter(final IIII_Result r) {
            observe(r);
        }

        @Actor
        public void deleteL(final IIII_Result r) {
            final long gpupdate = Words.la(gpUpdate);
            if ((gpupdate & STATE) != 0 || !Words.cas(gpUpdate, gpupdate, infoD | DFLAG)) {
                r.r1 = 0;
                return;
            }
            Words.cas(gpLeft, p, Words.la(pRight)); // no mark: p's right child may still change
            Words.cas(gpUpdate, infoD | DFLAG, infoD);
            r.r1 = 1;
        }

        @Actor
        public void insertAtS(final IIII_Result r) {
            r.r2 = insertAtS();
        }
    }
}
