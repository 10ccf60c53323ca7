package dev.limbo.stress;

import dev.limbo.core.Words;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.J_Result;
import org.openjdk.jcstress.infra.results.ZZ_Result;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * Atomicity of the read-modify-write helpers of {@link Words}: {@link Words#cas} lets exactly one of
 * two racing claimers win, and {@link Words#xadd} never loses an increment. Each has a broken twin
 * built from plain loads and stores ({@link Words#lp} then {@link Words#sp}) that shows why the
 * atomic helper is needed: the read and the write of the twin are two steps another thread can slip
 * between, which happens on any hardware, x86 included.
 */
public final class WordsCasTest {

    private WordsCasTest() {
    }

    /**
     * Two actors CAS the same word from 0 to their own id; exactly one succeeds.
     */
    @JCStressTest
    @Description("cas(0 -> id) by two actors: exactly one wins")
    @Outcome(id = "true, false", expect = ACCEPTABLE, desc = "actor1's CAS saw 0 and won; actor2's saw 1 and failed")
    @Outcome(id = "false, true", expect = ACCEPTABLE, desc = "actor2's CAS saw 0 and won; actor1's saw 2 and failed")
    @Outcome(id = "true, true", expect = FORBIDDEN, desc = "both CASes saw 0: the CAS is not atomic")
    @Outcome(id = "false, false", expect = FORBIDDEN, desc = "neither CAS saw 0, yet nobody else writes the word")
    @State
    public static class Cas {
        final long word = WordSlots.word();

        @Actor
        public void actor1(final ZZ_Result r) {
            r.r1 = Words.cas(word, 0L, 1L);
        }

        @Actor
        public void actor2(final ZZ_Result r) {
            r.r2 = Words.cas(word, 0L, 2L);
        }
    }

    /**
     * BROKEN on purpose: "check then plain store" ({@code lp == 0}, then {@code sp}) instead of a CAS.
     * Both actors can read 0 before either store lands, and both then believe they won. Any
     * hardware shows it, x86 included: the window is between two instructions, not a reordering.
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: an interleaving, not a reordering): lp(word) == 0 then sp(word, id) instead of a CAS, "
            + "by two actors: both can win")
    @Outcome(id = "true, false", expect = ACCEPTABLE, desc = "actor1 read 0 and stored before actor2 read")
    @Outcome(id = "false, true", expect = ACCEPTABLE, desc = "actor2 read 0 and stored before actor1 read")
    @Outcome(id = "true, true", expect = ACCEPTABLE_INTERESTING,
            desc = "both read 0 before either stored: both think they won (the bug a CAS prevents)")
    @Outcome(id = "false, false", expect = FORBIDDEN, desc = "neither read 0, yet the word starts at 0")
    @State
    public static class CheckThenStore {
        final long word = WordSlots.word();

        @Actor
        public void actor1(final ZZ_Result r) {
            if (Words.lp(word) == 0L) {
                Words.sp(word, 1L);
                r.r1 = true;
            }
        }

        @Actor
        public void actor2(final ZZ_Result r) {
            if (Words.lp(word) == 0L) {
                Words.sp(word, 2L);
                r.r2 = true;
            }
        }
    }

    /**
     * Two actors {@link Words#xadd} 1 to the same word; the arbiter, after both, sees 2.
     */
    @JCStressTest
    @Description("xadd(word, 1) by two actors: no increment is lost")
    @Outcome(id = "2", expect = ACCEPTABLE, desc = "both increments landed, in either order")
    @Outcome(id = "1", expect = FORBIDDEN, desc = "both xadds read 0: an increment was lost")
    @State
    public static class Xadd {
        final long word = WordSlots.word();

        @Actor
        public void actor1() {
            Words.xadd(word, 1L);
        }

        @Actor
        public void actor2() {
            Words.xadd(word, 1L);
        }

        @Arbiter
        public void arbiter(final J_Result r) {
            r.r1 = Words.lv(word);
        }
    }

    /**
     * BROKEN on purpose: {@code sp(word, lp(word) + 1)} instead of {@link Words#xadd}. Both actors can
     * read 0 and both store 1, losing an increment. Any hardware shows it, x86 included.
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: a lost update, not a reordering): sp(word, lp(word) + 1) instead of xadd, "
            + "by two actors: an increment can be lost")
    @Outcome(id = "2", expect = ACCEPTABLE, desc = "one actor's read-increment-store ran wholly before the other's read")
    @Outcome(id = "1", expect = ACCEPTABLE_INTERESTING,
            desc = "both read 0 and both stored 1: an increment was lost (the bug xadd prevents)")
    @State
    public static class PlainIncrement {
        final long word = WordSlots.word();

        @Actor
        public void actor1() {
            Words.sp(word, Words.lp(word) + 1L);
        }

        @Actor
        public void actor2() {
            Words.sp(word, Words.lp(word) + 1L);
        }

        @Arbiter
        public void arbiter(final J_Result r) {
            r.r1 = Words.lv(word);
        }
    }
}
