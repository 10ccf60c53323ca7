package dev.limbo.structures;

import dev.limbo.core.Words;
import dev.limbo.stress.WordSlots;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * {@link LiuZhangSpearHashMap}'s bucket migration: initBucket freezes the predecessor's bucket word
 * (6) before it copies the chain and installs the copy in the new table (5), and an update's CAS
 * (4) expects the unfrozen word, so an update of the old bucket either lands before the freeze
 * (and the copy holds it) or fails (and retries on the new table): a resize never loses an update.
 *
 * <p>A protocol model over region words ({@link WordSlots}): B, the old table's bucket word,
 * holds chain C0; T, the new table's bucket word, is 0 (uninitialized); C1 is the chain an update
 * builds (C0 plus its key). Actor {@code update} reads B, and if it is unfrozen CASes it from that
 * word to C1. Actor {@code migrate} freezes B (CAS to word | FROZEN, until frozen), copies the
 * frozen chain (the copy of chain X stands as X) and CASes T from 0 to the copy.
 *
 * <p>Result (the update's CAS succeeded, T holds C1): (1, 0) is the lost update: the update
 * committed on the old bucket after the migration copied it. FORBIDDEN in {@link Freeze}.
 * {@link BrokenNoFreeze} copies without freezing: an interleaving, which x86 shows; it is
 * ACCEPTABLE_INTERESTING so that the suite does not fail on it.
 */
public final class FreezeVsUpdateTest {

    /** LiuZhangSpearHashMap.FROZEN: bit 0 of a bucket word. */
    static final long FROZEN = 1;

    private FreezeVsUpdateTest() {
    }

    /** A state: B -> C0, T = 0, C1 the update's chain. */
    abstract static class Base {
        final long c0 = WordSlots.word();
        final long c1 = WordSlots.word();
        final long bucket = WordSlots.word(c0);
        final long target = WordSlots.word(0);

        /** The update: CAS (4) of the unfrozen word it read. */
        final int update() {
            final long w = Words.la(bucket); // (1)
            return (w & FROZEN) == 0 && Words.cas(bucket, w, c1) ? 1 : 0; // (4)
        }

        /** Installs the copy of chain {@code w} in T (5). */
        final void install(final long w) {
            Words.cas(target, 0, w & ~FROZEN); // (5)
        }

        final void observe(final II_Result r) {
            r.r2 = Words.lv(target) == c1 ? 1 : 0;
        }
    }

    /** As LiuZhangSpearHashMap does it: freeze, then copy. */
    @JCStressTest
    @Description("read B; cas(B, w, C1) if w unfrozen || freeze B (cas to w | FROZEN until frozen); copy; "
            + "cas(T, 0, copy): an update that commits is in the new bucket")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "update first: the copy holds it")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "freeze first: the update failed (it retries on the new table)")
    @Outcome(id = "1, 0", expect = FORBIDDEN, desc = "lost update: committed on the old bucket after the copy")
    @Outcome(expect = FORBIDDEN, desc = "any other state")
    @State
    public static class Freeze extends Base {
        @Actor
        public void update(final II_Result r) {
            r.r1 = update();
        }

        @Actor
        public void migrate() {
            long w;
            while (((w = Words.la(bucket)) & FROZEN) == 0) { // (1)
                Words.cas(bucket, w, w | FROZEN); // (6)
            }
            install(w);
        }

        @Arbiter
        public void arbiter(final II_Result r) {
            observe(r);
        }
    }

    /** BROKEN on purpose: the migration copies the bucket without freezing it. x86 shows it. */
    @JCStressTest
    @Description("BROKEN (x86 can show it: an interleaving, not a reordering): the migration copies B without "
            + "freezing it || read B; cas(B, w, C1): the update may be lost")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "update first: the copy holds it")
    @Outcome(id = "0, 0", expect = FORBIDDEN, desc = "nothing froze B, so the update cannot fail")
    @Outcome(id = "1, 0", expect = ACCEPTABLE_INTERESTING, desc = "lost update: committed on the old bucket after "
            + "the copy")
    @Outcome(expect = FORBIDDEN, desc = "any other state")
    @State
    public static class BrokenNoFreeze extends Base {
        @Actor
        public void update(final II_Result r) {
            r.r1 = update();
        }

        @Actor
        public void migrate() {
            install(Words.la(bucket)); // no freeze
        }

        @Arbiter
        public void arbiter(final II_Result r) {
            observe(r);
        }
    }
}
