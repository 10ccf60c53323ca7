package dev.limbo.reclaim.rc;

import dev.limbo.core.Words;
import dev.limbo.stress.WordSlots;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

import static dev.limbo.reclaim.rc.RcStates.PAYLOAD;
import static dev.limbo.reclaim.rc.RcStates.RC;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * The central race of deferred reference counting (digest §8.2; {@link Cdrc}'s invariants, "an
 * object whose count reached zero ... is never incremented"): a {@link Cdrc#load} that increments
 * the object it read from a counted field, racing with the store that overwrites the field and the
 * flush that applies the last decrement. The load increments only while its acquire (announce,
 * fence, re-validate: {@link AcquireRetire}'s (1) to (3)) holds back the store's retire, so the
 * increment never meets a count that reached zero.
 *
 * <p>Every state starts with a cell (a counted root word) that holds leaf X, whose count 1 is the
 * cell's reference and whose payload is the state's stamp; the state also holds an observer of X
 * ({@link RcStates}: a weak reference that keeps X's block, so that X's death reads as count 0 and
 * a stray increment hits a dead header, where {@link Cdrc}'s increment check throws, instead of a
 * freed block). Actor {@code load}: p = load(cell); if p is X, check that X is alive and read its
 * payload, then release p. Actor {@code storeFlush}: store(cell, null), which retires X, then
 * flush(), which applies the decrement unless an announcement holds it back. The arbiter reads X's
 * final count and drops the observer.
 *
 * <p>Result (load, final, weak): load 0 = it read null, 1 = it held X alive with its payload, 2 = it
 * incremented or held a dead X, 9 = a payload that is not the stamp; final = {@link RcStates#DIED}
 * (0) or {@link RcStates#ONE_LEFT} (1: the flush saw the load's announcement and keeps X's retire
 * delayed, a later flush of that thread applies it) or {@link RcStates#BAD} (9); weak = X's
 * observer-inclusive weak count before the arbiter dropped it (1 dead, 2 alive).
 *
 * <p>The broken variant {@link BrokenPlainLoad} increments a plainly loaded pointer, with no
 * acquire: the flush may apply X's last decrement between its read and its increment, which then
 * revives a dead count (an interleaving, which any hardware shows, x86 included). It stalls
 * ({@link RcStates#stall()}) between the read and the increment, so that every run shows it.
 */
public final class CdrcIncrementVsLastDecrementTest {

    private CdrcIncrementVsLastDecrementTest() {
    }

    /** A state: cell -> X (count 1, the cell's), X's payload the cell's address (a unique stamp), X observed. */
    abstract static class Base {
        final long cell = WordSlots.word();
        final long x = RcStates.leaf(cell);

        Base() {
            RC.weakOf(x); // the observer
            RC.storeMove(cell, x); // the cell owns X's only count
        }

        /** Checks the object {@code p} the caller holds a count of, then releases it: 1 if alive with the stamp. */
        final int useAndRelease(final long p) {
            if (RC.count(p) == 0) {
                return 2; // dead while counted: releasing it again would throw
            }
            final int seen = Words.lp(p + PAYLOAD) == cell ? 1 : 9;
            RC.release(p);
            return seen;
        }

        /** Actor 2: overwrite the cell (retiring X), then apply every delayed decrement nothing holds back. */
        final void storeAndFlush() {
            RC.store(cell, 0);
            RC.flush();
        }

        final void arbitrate(final III_Result r) {
            r.r3 = (int) Math.min(RC.weakCount(x), 9);
            r.r2 = RcStates.finalCount(x);
        }
    }

    /** As {@link Cdrc#load} does it: acquire (announce, fence, re-validate), increment, release the slot. */
    @JCStressTest
    @Description("load(cell); use; release || store(cell, null); flush: the load's increment never meets a count "
            + "that reached zero, and X dies exactly once")
    @Outcome(id = "0, 0, 1", expect = ACCEPTABLE, desc = "the load read null; X died")
    @Outcome(id = "0, 1, 2", expect = ACCEPTABLE, desc = "the load read null after announcing X; the flush saw "
            + "the stale announcement and delays X's decrement")
    @Outcome(id = "1, 0, 1", expect = ACCEPTABLE, desc = "the load held X alive; X died after it was released")
    @Outcome(id = "1, 1, 2", expect = ACCEPTABLE, desc = "the load held X alive; its announcement delays X's decrement")
    @Outcome(expect = FORBIDDEN, desc = "an increment of a dead X, a dead or overwritten X held, or a count "
            + "that is neither 0 nor 1 at the end")
    @State
    public static class Counted extends Base {
        @Actor
        public void load(final III_Result r) {
            final long p;
            try {
                p = RC.load(cell);
            } catch (final IllegalStateException deadIncrement) {
                r.r1 = 2;
                return;
            }
            r.r1 = p == 0 ? 0 : useAndRelease(p);
        }

        @Actor
        public void storeFlush() {
            storeAndFlush();
        }

        @Arbiter
        public void arbiter(final III_Result r) {
            arbitrate(r);
        }
    }

    /**
     * BROKEN on purpose: the load reads the cell with an acquire load but announces nothing, then
     * increments. The store and flush can run between the read and the increment: nothing holds X's
     * retire back, the flush applies X's last decrement, and the increment meets a count at zero
     * ({@link Cdrc}'s check throws it): (2, 0, 1) if X died first, (2, 1, 2) if the stray increment
     * came between the decrement to zero and the CAS that marks X dead, which then fails: X is
     * revived with a count nobody owns, and leaks (its block is never freed).
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: an interleaving): la(cell); retain; use; release || store(cell, null); "
            + "flush: no announcement, the increment may revive a dead X")
    @Outcome(id = "0, 0, 1", expect = ACCEPTABLE, desc = "the load read null; X died")
    @Outcome(id = "1, 0, 1", expect = ACCEPTABLE, desc = "the load held X alive; X died after it was released")
    @Outcome(id = {"2, 0, 1", "2, 1, 2"}, expect = ACCEPTABLE_INTERESTING,
            desc = "the flush applied X's last decrement between the plain read and the increment, which met a "
                    + "zero count: X died, or the stray increment stopped its death and X leaks")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class BrokenPlainLoad extends Base {
        @Actor
        public void load(final III_Result r) {
            final long p = Words.la(cell); // no acquire: nothing announced
            if (p == 0) {
                r.r1 = 0;
                return;
            }
            RcStates.stall();
            try {
                RC.retain(p);
            } catch (final IllegalStateException deadIncrement) {
                r.r1 = 2;
                return;
            }
            r.r1 = useAndRelease(p);
        }

        @Actor
        public void storeFlush() {
            storeAndFlush();
        }

        @Arbiter
        public void arbiter(final III_Result r) {
            arbitrate(r);
        }
    }
}
