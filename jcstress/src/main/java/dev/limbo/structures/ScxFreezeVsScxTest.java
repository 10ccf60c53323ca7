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
 * {@link BrownAbTree}'s LLX/SCX: an SCX freezes every node of V (freeze CAS (F) of the node's
 * word, from the word its LLX returned, to the SCX record) before its update CAS (U), and LLX
 * refuses a node that is finalized (marked) or frozen by an SCX in progress, so that two SCXs
 * whose V share a node never both commit on stale snapshots: an update below a node that another
 * SCX replaces by a copy is never lost.
 *
 * <p>A protocol model over region words, each a fresh {@link WordSlots} slot (so bit 0 is free for
 * the mark): gp.child -&gt; p; p.child -&gt; l; the words of gp, p and l are 0 (no SCX yet); U1
 * and U2 are SCX records (their state words), P2 a copy of p (its child word), N a new leaf.
 * Actor {@code replaceP} is one pass of an SCX with V = {gp, p}, R = {p} (an absorb or split
 * that copies p): LLX gp and p, read p.child into the copy, freeze gp and p, mark p, swing
 * gp.child from p to the copy, commit. Actor {@code replaceL} is one pass of an SCX with
 * V = {p, l}, R = {l} (a leaf update): LLX p and l, freeze both, mark l, swing p.child from l
 * to N, commit. Neither helps nor retries (a failed pass reports 0; the tree's operations help
 * and search again).
 *
 * <p>Result (p replaced, l replaced, N reachable from gp, gp.child is the copy):
 * (1, 1, 0, 1) is the lost update: the leaf update committed under p after the copy was taken,
 * and p was unlinked. FORBIDDEN in {@link Freeze}. {@link BrokenNoFreeze} is the leaf update
 * without a freeze of p (it freezes only what it replaces, l): it commits under a p that the
 * other SCX copies and unlinks. That is an interleaving, not a reordering, so x86 shows it; it is
 * ACCEPTABLE_INTERESTING so that the suite does not fail on it.
 */
public final class ScxFreezeVsScxTest {

    static final long MARK = 1;
    static final long IN_PROGRESS = 0;
    static final long COMMITTED = 1;
    static final long ABORTED = 2;

    private ScxFreezeVsScxTest() {
    }

    /** A state: gp -> p -> l, fresh N, the copy P2, records U1 and U2. */
    abstract static class Base {
        final long n = WordSlots.word();
        final long u1 = WordSlots.word(IN_PROGRESS);
        final long u2 = WordSlots.word(IN_PROGRESS);
        final long lWord = WordSlots.word(0);
        /** l itself: its address stands for the node. */
        final long l = lWord;
        final long pWord = WordSlots.word(0);
        final long pChild = WordSlots.word(l);
        final long p = pWord;
        final long copyChild = WordSlots.word(0);
        final long copy = copyChild;
        final long gpWord = WordSlots.word(0);
        final long gpChild = WordSlots.word(p);

        /** LLX of the node with word {@code word}: the word, or -1 if finalized or frozen by an SCX in progress. */
        static long llx(final long word) {
            final long w = Words.la(word); // (2)
            if ((w & MARK) != 0 || w != 0 && Words.la(w) == IN_PROGRESS) { // (3) the record's state
                return -1;
            }
            return Words.la(word) == w ? w : -1; // (3)
        }

        /** Freeze CAS (F): {@code word} from {@code expected} to {@code u}; on failure abort u. */
        static boolean freeze(final long word, final long expected, final long u) {
            if (Words.cas(word, expected, u) || Words.la(word) == u) {
                return true;
            }
            Words.cas(u, IN_PROGRESS, ABORTED); // (S)
            return false;
        }

        /** SCX with V = {gp, p}, R = {p}: p replaced by a copy taken after the LLXs. */
        final int replaceP() {
            final long wg = llx(gpWord);
            final long wp = llx(pWord);
            if (wg < 0 || wp < 0) {
                return 0;
            }
            Words.sp(copyChild, Words.la(pChild)); // the copy: p's child as the snapshot shows it
            if (!freeze(gpWord, wg, u1) || !freeze(pWord, wp, u1)) {
                return 0;
            }
            Words.cas(pWord, u1, u1 | MARK); // (M)
            Words.cas(gpChild, p, copy); // (U)
            Words.cas(u1, IN_PROGRESS, COMMITTED); // (S)
            return 1;
        }

        /** SCX with V = {p, l}, R = {l}: l replaced by N; {@code freezeP} false is the broken variant. */
        final int replaceL(final boolean freezeP) {
            final long wp = llx(pWord);
            final long wl = llx(lWord);
            if (wp < 0 || wl < 0 || Words.la(pChild) != l || freezeP && !freeze(pWord, wp, u2)
                    || !freeze(lWord, wl, u2)) {
                return 0;
            }
            Words.cas(lWord, u2, u2 | MARK); // (M)
            Words.cas(pChild, l, n); // (U)
            Words.cas(u2, IN_PROGRESS, COMMITTED); // (S)
            return 1;
        }

        /** Whether N hangs under gp (through p or through the copy). */
        final int reachable() {
            final long c = Words.lv(gpChild);
            return Words.lv(c == p ? pChild : copyChild) == n ? 1 : 0;
        }

        final void observe(final IIII_Result r) {
            r.r3 = reachable();
            r.r4 = Words.lv(gpChild) == copy ? 1 : 0;
        }
    }

    /** As BrownAbTree does it: the leaf update freezes p and l. */
    @JCStressTest
    @Description("LLX gp, p; copy p; freeze gp, p; mark p; cas(gp.child, p, copy) || LLX p, l; freeze p, l; "
            + "mark l; cas(p.child, l, N): an update that commits stays reachable")
    @Outcome(id = "1, 0, 0, 1", expect = ACCEPTABLE, desc = "p replaced first (or froze p first): the leaf update "
            + "failed its LLX or its freeze")
    @Outcome(id = "1, 1, 1, 1", expect = ACCEPTABLE, desc = "leaf update first: the copy was taken after it and "
            + "holds N")
    @Outcome(id = "0, 1, 1, 0", expect = ACCEPTABLE, desc = "the leaf update froze p first: the replacement failed "
            + "its LLX or its freeze")
    @Outcome(id = "0, 0, 0, 0", expect = ACCEPTABLE, desc = "each failed on the other's frozen node")
    @Outcome(id = "1, 1, 0, 1", expect = FORBIDDEN, desc = "lost update: N linked under p after the copy, and p "
            + "was unlinked")
    @Outcome(expect = FORBIDDEN, desc = "any other state")
    @State
    public static class Freeze extends Base {
        @Arbiter
        public void arbiter(final IIII_Result r) {
            observe(r);
        }

        @Actor
        public void replaceP(final IIII_Result r) {
            r.r1 = replaceP();
        }

        @Actor
        public void replaceL(final IIII_Result r) {
            r.r2 = replaceL(true);
        }
    }

    /**
     * BROKEN on purpose: the leaf update freezes only l, not p, the node whose child it swings; it
     * commits under a p that the other SCX froze, copied and unlinked. x86 shows it.
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: an interleaving, not a reordering): the leaf update does not freeze p "
            + "|| LLX gp, p; copy p; freeze gp, p; mark p; cas(gp.child, p, copy): the leaf update may be lost")
    @Outcome(id = "1, 0, 0, 1", expect = ACCEPTABLE, desc = "p replaced first: the leaf update failed its LLX")
    @Outcome(id = "1, 1, 1, 1", expect = ACCEPTABLE, desc = "leaf update first: the copy holds N")
    @Outcome(id = "0, 1, 1, 0", expect = ACCEPTABLE, desc = "the leaf update froze l while the replacement saw "
            + "nothing: the replacement failed its LLX of p")
    @Outcome(id = "1, 1, 0, 1", expect = ACCEPTABLE_INTERESTING, desc = "lost update: N linked under p after the "
            + "copy, and p was unlinked")
    @Outcome(expect = FORBIDDEN, desc = "any other state")
    @State
    public static class BrokenNoFreeze extends Base {
        @Arbiter
        public void arbiter(final IIII_Result r) {
            observe(r);
        }

        @Actor
        public void replaceP(final IIII_Result r) {
            r.r1 = replaceP();
        }

        @Actor
        public void replaceL(final IIII_Result r) {
            r.r2 = replaceL(false); // no freeze of p
        }
    }
}
