package dev.limbo.reclaim;

import dev.limbo.core.Words;
import dev.limbo.stress.WordSlots;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * Lock-free reference counting's race ({@link LockFreeRefCounting}'s notes, "Never revived", and
 * its memory ordering (1) to (4); Michael and Scott's correction of Valois): a protect that loads a
 * link, increments the target's count and re-validates the link, racing with the last decrement
 * of the same record, which an unlink releases.
 *
 * <p>Every state starts with record r linked from a cell and already retired: its count word
 * holds ONE, the cell's reference (count in steps of ONE = 2, FREED = 1, as in
 * LockFreeRefCounting). Actor {@code protect} runs LfrcGuard.protect's step: q = acquire load of
 * the cell (1); if 0, back off; else increment r's count (2) and re-load the cell (3): r still
 * there, it holds r; else it releases its increment (4) (and frees r if that release claims it).
 * Actor {@code unlink} unlinks r with a CAS r -> 0 and releases the cell's reference (4): a CAS
 * loop from c to c - ONE, except ONE -> FREED, the claim, which frees r. The arbiter counts the
 * frees and reads the count word.
 *
 * <p>Result (held, frees, count): held 1 = the protector holds r, 0 = it backed off; frees =
 * how many times r was freed; count 1 = the word is ONE (the protector's reference), 2 = FREED
 * (freed, no reference left), 0 = zero, 9 = anything else. Correct: (1, 0, 1), the protector
 * holds r with its count and r is not freed; or (0, 1, 2), it backed off and r was freed exactly
 * once. A node whose count reached zero is never revived, and never freed twice.
 *
 * <p>Broken variants (interleavings, which any hardware shows, x86 included):
 * {@link BrokenNoRevalidation} increments without re-validating the link, so it may hold r after
 * the unlink freed it; {@link BrokenDecrementWithoutClaim} decrements with a fetch-and-add and
 * frees whoever reaches zero, without the claim's CAS, so the protector's release after a failed
 * validation frees r a second time.
 */
public final class LfrcIncrementVsLastDecrementTest {

    /** One reference in the count word, as LockFreeRefCounting's ONE. */
    static final long ONE = 2;
    /** The claimed bit, as LockFreeRefCounting's FREED. */
    static final long FREED = 1;

    private LfrcIncrementVsLastDecrementTest() {
    }

    /** A state: record r's count word (the cell's reference), a cell linking r. */
    abstract static class Base {
        final long count = WordSlots.word(ONE);
        /** r's address: any nonzero word will do, the record is its count word. */
        final long node = count;
        final long cell = WordSlots.word(node);
        /** Set by the actor that freed r (each by its own actor, read by the arbiter). */
        boolean freedByProtector;
        boolean freedByUnlinker;

        /** LockFreeRefCounting.decrement: returns whether this release claimed r. */
        boolean release() {
            long c = Words.lv(count);
            while (true) {
                final long next = c == ONE ? FREED : c - ONE;
                final long seen = Words.cae(count, c, next); // (4)
                if (seen == c) {
                    return c == ONE;
                }
                c = seen;
            }
        }

        /**
         * The protector: 1 if it holds r, 0 if it backed off (releasing its increment, and freeing r
         * if that release claimed it). Without {@code revalidate}, it holds r after the increment.
         */
        final int protect(final boolean revalidate) {
            final long q = Words.la(cell); // (1)
            if (q == 0) {
                return 0;
            }
            Words.xadd(count, ONE); // (2)
            if (!revalidate || Words.la(cell) == q) { // (3)
                return 1;
            }
            freedByProtector = release(); // a stray: r may have been freed since (1)
            return 0;
        }

        /** The unlinker: CAS r -> 0, then release the cell's reference. */
        final void unlinkAndRelease() {
            if (Words.cas(cell, node, 0)) {
                freedByUnlinker = release();
            }
        }

        final void arbitrate(final III_Result r) {
            r.r2 = (freedByProtector ? 1 : 0) + (freedByUnlinker ? 1 : 0);
            final long c = Words.lv(count);
            r.r3 = c == ONE ? 1 : c == FREED ? 2 : c == 0 ? 0 : 9;
        }
    }

    /** As LockFreeRefCounting does it: increment (2), re-validate (3), else release (4); the release claims by CAS. */
    @JCStressTest
    @Description("protect: la(cell); xadd(count, ONE); la(cell) == r? else release || cas(cell, r, 0); release "
            + "(CAS loop, ONE -> FREED claims): r is held with its count, or freed exactly once")
    @Outcome(id = "1, 0, 1", expect = ACCEPTABLE, desc = "the protector holds r, counted; r is not freed")
    @Outcome(id = "0, 1, 2", expect = ACCEPTABLE, desc = "the protector backed off; r was freed exactly once")
    @Outcome(expect = FORBIDDEN, desc = "the protector holds a freed record, r was freed twice or never, "
            + "or a count was lost")
    @State
    public static class Counted extends Base {
        @Actor
        public void protect(final III_Result r) {
            r.r1 = protect(true);
        }

        @Actor
        public void unlink() {
            unlinkAndRelease();
        }

        @Arbiter
        public void arbiter(final III_Result r) {
            arbitrate(r);
        }
    }

    /**
     * BROKEN on purpose: the protect increments and holds r without re-validating the link (Valois
     * without Michael and Scott's correction). If the unlinker's release claimed r before the
     * increment, the protector holds a freed record (its increment a stray on a free one).
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: an interleaving): protect: la(cell); xadd(count, ONE); no re-validation "
            + "|| cas(cell, r, 0); release: the protector may hold a record already freed")
    @Outcome(id = "1, 0, 1", expect = ACCEPTABLE, desc = "the protector holds r, counted; r is not freed")
    @Outcome(id = "0, 1, 2", expect = ACCEPTABLE, desc = "the protector read the unlinked cell; r was freed once")
    @Outcome(id = "1, 1, 9", expect = ACCEPTABLE_INTERESTING,
            desc = "the protector incremented r after its last release freed it, and holds a freed record")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class BrokenNoRevalidation extends Base {
        @Actor
        public void protect(final III_Result r) {
            r.r1 = protect(false); // (2), and no (3)
        }

        @Actor
        public void unlink() {
            unlinkAndRelease();
        }

        @Arbiter
        public void arbiter(final III_Result r) {
            arbitrate(r);
        }
    }

    /**
     * BROKEN on purpose: the protect is correct, but a release is a fetch-and-add of -ONE that
     * frees r when it took the count to zero, with no claim (no CAS to FREED). The unlinker's
     * release frees r at zero; the protector's increment revives the count (0 -> ONE), its
     * validation fails, and its release takes the count to zero again and frees r a second time.
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: an interleaving): release = xadd(count, -ONE) == ONE frees, no claim "
            + "CAS: a stray increment revives a freed count and its release frees the record again")
    @Outcome(id = "1, 0, 1", expect = ACCEPTABLE, desc = "the protector holds r, counted; r is not freed")
    @Outcome(id = "0, 1, 0", expect = ACCEPTABLE, desc = "the protector backed off; r was freed once")
    @Outcome(id = "0, 2, 0", expect = ACCEPTABLE_INTERESTING,
            desc = "the unlinker freed r at zero, the protector's stray increment and release freed it again")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class BrokenDecrementWithoutClaim extends Base {
        /** A release without the claim: whoever takes the count from ONE to zero frees. */
        @Override
        boolean release() {
            return Words.xadd(count, -ONE) == ONE;
        }

        @Actor
        public void protect(final III_Result r) {
            r.r1 = protect(true);
        }

        @Actor
        public void unlink() {
            unlinkAndRelease();
        }

        @Arbiter
        public void arbiter(final III_Result r) {
            arbitrate(r);
        }
    }
}
