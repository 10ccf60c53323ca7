package dev.limbo.stress;

import dev.limbo.core.Words;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.JJ_Result;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * Store-then-load ordering (Dekker): each actor stores its own word, then loads the other's. If a
 * store may pass the later load, both actors read 0, which breaks any "announce, then check the
 * other" protocol (hazard pointers, Dekker-style locks, epoch entry).
 *
 * <p>Release/acquire does not order a store before a later load, and x86 hardware shows it: its
 * store buffer lets the load complete before the store is visible, so {@link ReleaseAcquire}'s
 * (0, 0) is the expected catch on this machine. Volatile accesses ({@link Words#sv}/{@link Words#lv})
 * and a {@link Words#fullFence()} between the release store and the acquire load both forbid it.
 */
public final class WordsDekkerTest {

    private WordsDekkerTest() {
    }

    /**
     * BROKEN on purpose (for a Dekker protocol): release store, then acquire load. The memory model
     * allows (0, 0), and x86 shows it through its store buffer.
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: store buffering): sr(x, 1); la(y) || sr(y, 1); la(x): "
            + "release/acquire does not order a store before a later load, both may read 0")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "actor1 ran wholly before actor2")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "actor2 ran wholly before actor1")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the actors interleaved; both stores landed before both loads")
    @Outcome(id = "0, 0", expect = ACCEPTABLE_INTERESTING,
            desc = "acquire/release does not order store->load: both see 0")
    @State
    public static class ReleaseAcquire {
        final long x = WordSlots.word();
        final long y = WordSlots.word();

        @Actor
        public void actor1(final JJ_Result r) {
            Words.sr(x, 1L);
            r.r1 = Words.la(y);
        }

        @Actor
        public void actor2(final JJ_Result r) {
            Words.sr(y, 1L);
            r.r2 = Words.la(x);
        }
    }

    /** Volatile store, then volatile load: all volatile accesses are totally ordered, so not both 0. */
    @JCStressTest
    @Description("sv(x, 1); lv(y) || sv(y, 1); lv(x): at least one actor sees the other's store")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "actor1 ran wholly before actor2")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "actor2 ran wholly before actor1")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the actors interleaved; both stores landed before both loads")
    @Outcome(id = "0, 0", expect = FORBIDDEN, desc = "both loads passed their stores: volatile total order broken")
    @State
    public static class Volatile {
        final long x = WordSlots.word();
        final long y = WordSlots.word();

        @Actor
        public void actor1(final JJ_Result r) {
            Words.sv(x, 1L);
            r.r1 = Words.lv(y);
        }

        @Actor
        public void actor2(final JJ_Result r) {
            Words.sv(y, 1L);
            r.r2 = Words.lv(x);
        }
    }

    /** Release store, full fence, acquire load: the fence orders the store before the load. */
    @JCStressTest
    @Description("sr(x, 1); fullFence(); la(y) || sr(y, 1); fullFence(); la(x): at least one actor sees the other's store")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "actor1 ran wholly before actor2")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "actor2 ran wholly before actor1")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the actors interleaved; both stores landed before both loads")
    @Outcome(id = "0, 0", expect = FORBIDDEN, desc = "both loads passed their stores: the full fence did not order store->load")
    @State
    public static class FullFence {
        final long x = WordSlots.word();
        final long y = WordSlots.word();

        @Actor
        public void actor1(final JJ_Result r) {
            Words.sr(x, 1L);
            Words.fullFence();
            r.r1 = Words.la(y);
        }

        @Actor
        public void actor2(final JJ_Result r) {
            Words.sr(y, 1L);
            Words.fullFence();
            r.r2 = Words.la(x);
        }
    }
}
