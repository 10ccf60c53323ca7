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
 * Message passing through region words: a writer fills {@code data} with a plain store, then
 * publishes {@code flag} with a release store ({@link Words#sr}); a reader that sees the flag with an
 * acquire load ({@link Words#la}) then sees the data. This is the happens-before edge every
 * publication in Limbo relies on.
 *
 * <p>The broken twin publishes with opaque accesses on the flag, which order nothing around them.
 * x86 hardware keeps stores in order and loads in order (TSO), so it cannot show the stale read
 * itself; the JIT compiler is still allowed to move the plain data accesses across the opaque flag
 * accesses, so on x86 the outcome, if seen at all, comes from the compiler (HotSpot's C2 did not
 * produce it in our runs, its scheduling randomizers included). On weakly ordered hardware (Arm,
 * POWER) the hardware can show it as well.
 */
public final class WordsMessagePassingTest {

    private WordsMessagePassingTest() {
    }

    /** Release store of the flag, acquire load of the flag: the data is never stale. */
    @JCStressTest
    @Description("sp(data, 42); sr(flag, 1) || la(flag); lp(data): seeing the flag implies seeing the data")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "reader ran before the writer")
    @Outcome(id = "0, 42", expect = ACCEPTABLE, desc = "reader missed the flag but the data landed before its data load")
    @Outcome(id = "1, 42", expect = ACCEPTABLE, desc = "reader saw the flag, and so the data")
    @Outcome(id = "1, 0", expect = FORBIDDEN, desc = "reader saw the flag but stale data: release/acquire broken")
    @State
    public static class ReleaseAcquire {
        final long data = WordSlots.word();
        final long flag = WordSlots.word();

        @Actor
        public void writer() {
            Words.sp(data, 42L);
            Words.sr(flag, 1L);
        }

        @Actor
        public void reader(final JJ_Result r) {
            r.r1 = Words.la(flag);
            r.r2 = Words.lp(data);
        }
    }

    /**
     * BROKEN on purpose: opaque store and opaque load of the flag. Opaque is atomic and coherent per
     * word but orders nothing else, so the data store may sink below the flag store and the data load
     * may rise above the flag load. x86 hardware cannot show it (TSO); the JIT compiler may, though
     * C2 did not in our runs on x86.
     */
    @JCStressTest
    @Description("BROKEN (x86 cannot show it: TSO keeps stores and loads in order; only the JIT could, and did not in our runs): "
            + "sp(data, 42); opaqueStore(flag, 1) || opaqueLoad(flag); lp(data): opaque orders nothing, the data may be stale")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "reader ran before the writer")
    @Outcome(id = "0, 42", expect = ACCEPTABLE, desc = "reader missed the flag but the data landed before its data load")
    @Outcome(id = "1, 42", expect = ACCEPTABLE, desc = "reader saw the flag and the data")
    @Outcome(id = "1, 0", expect = ACCEPTABLE_INTERESTING,
            desc = "reader saw the flag but stale data: opaque does not order the data accesses (compiler or hardware reordering)")
    @State
    public static class OpaqueFlag {
        final long data = WordSlots.word();
        final long flag = WordSlots.word();

        @Actor
        public void writer() {
            Words.sp(data, 42L);
            Words.opaqueStore(flag, 1L);
        }

        @Actor
        public void reader(final JJ_Result r) {
            r.r1 = Words.opaqueLoad(flag);
            r.r2 = Words.lp(data);
        }
    }
}
