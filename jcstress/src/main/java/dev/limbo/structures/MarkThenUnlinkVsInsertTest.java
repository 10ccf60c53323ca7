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
 * Harris-Michael's logical deletion ({@link HarrisMichaelList}'s (5) and (6)): a remove marks the
 * victim's next word before it unlinks the victim, so that an insert after the victim, whose CAS (4)
 * expects the unmarked successor, fails once the victim is on its way out, instead of linking its
 * node to a node that is no longer reachable.
 *
 * <p>A protocol model over region words: every state starts with the list head -> A -> B -> 0, each
 * node a fresh {@link WordSlots} slot whose next word is the slot's first word (slots are 128-byte
 * aligned, so bit 0 is free for the mark); C is a fresh node. Actor {@code removeA} does one pass of
 * remove(A): it reads A.next (acquire), marks it with a CAS (5), and unlinks A with a CAS (6) of
 * head from A to A's successor. Actor {@code insertCAfterA} does one pass of an insert whose Find
 * stopped at the window (A, B): it reads A.next (acquire), and if that is B unmarked, sets
 * C.next = B (plain) and CASes A.next from B to C (4). Neither retries: a failed pass reports 0
 * (the real operations would run Find again). The arbiter walks from head.
 *
 * <p>Result (removed, inserted, C reachable, A reachable): (1, 1, 0, _) is the lost insert: the
 * insert reported success but its node hangs off a node no longer in the list. With the mark the
 * insert's CAS fails once A is marked, so that is FORBIDDEN in {@link MarkThenUnlink}.
 * {@link BrokenUnlinkWithoutMark} unlinks A with a single CAS of head and no mark; the insert's CAS
 * on A.next then still succeeds after A is gone. That is an interleaving bug, not a reordering, so
 * x86 shows it readily; it is marked ACCEPTABLE_INTERESTING so that the suite does not fail on it.
 */
public final class MarkThenUnlinkVsInsertTest {

    /** The mark bit of a next word. */
    static final long MARK = 1;

    private MarkThenUnlinkVsInsertTest() {
    }

    /** A state: head -> A -> B -> 0, and a fresh node C. */
    abstract static class Base {
        final long b = WordSlots.word(0);
        final long a = WordSlots.word(b);
        final long c = WordSlots.word(0);
        final long head = WordSlots.word(a);

        /** One pass of insert(C) with the window (A, B), as {@link HarrisMichaelList}'s insert (4). */
        final int insertAfterA() {
            if (Words.la(a) != b) { // the Find's read (1) of A.next: must be B, unmarked
                return 0;
            }
            Words.sp(c, b);
            return Words.cas(a, b, c) ? 1 : 0; // (4)
        }

        /** Walks from head; 1 if {@code target} is reachable, 0 if not, 9 if the walk does not end. */
        final int reachable(final long target) {
            long cur = Words.lv(head) & ~MARK;
            for (int steps = 0; cur != 0; steps++) {
                if (steps > 4) {
                    return 9;
                }
                if (cur == target) {
                    return 1;
                }
                cur = Words.lv(cur) & ~MARK;
            }
            return 0;
        }

        /** Records the final state. */
        final void observe(final IIII_Result r) {
            r.r3 = reachable(c);
            r.r4 = reachable(a);
        }
    }

    /** As {@link HarrisMichaelList} does it: mark A.next (5), then unlink A (6). */
    @JCStressTest
    @Description("n = la(A.next); cas(A.next, n, n|1); cas(head, A, n) || la(A.next) == B; sp(C.next, B); cas(A.next, B, C): "
            + "an insert that succeeds stays reachable")
    @Outcome(id = "1, 0, 0, 0", expect = ACCEPTABLE, desc = "A marked first: the insert's CAS failed, A removed")
    @Outcome(id = "1, 1, 1, 0", expect = ACCEPTABLE, desc = "C inserted first: remove marked A.next = C and unlinked A to C")
    @Outcome(id = "0, 1, 1, 1", expect = ACCEPTABLE, desc = "C inserted between remove's read and its mark: the mark CAS failed")
    @Outcome(id = "1, 1, 0, 0", expect = FORBIDDEN, desc = "lost insert: C linked after A, but A was unlinked")
    @Outcome(expect = FORBIDDEN, desc = "any other state")
    @State
    public static class MarkThenUnlink extends Base {
        @Arbiter
        public void arbiter(final IIII_Result r) {
            observe(r);
        }

        @Actor
        public void removeA(final IIII_Result r) {
            final long next = Words.la(a); // the Find's read (1) of A.next
            if ((next & MARK) != 0 || !Words.cas(a, next, next | MARK)) { // (5)
                r.r1 = 0;
                return;
            }
            r.r1 = Words.cas(head, a, next) ? 1 : 0; // (6)
        }

        @Actor
        public void insertCAfterA(final IIII_Result r) {
            r.r2 = insertAfterA();
        }
    }

    /**
     * BROKEN on purpose: remove unlinks A with one CAS of head to A's successor, without marking
     * A.next first. An insert that read A.next == B before, or even after, the unlink links C to the
     * unlinked A: the insert reports success and C is lost. x86 shows it.
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: an interleaving, not a reordering): n = la(A.next); cas(head, A, n) without marking A.next || "
            + "la(A.next) == B; sp(C.next, B); cas(A.next, B, C): the insert may be lost")
    @Outcome(id = "1, 1, 1, 0", expect = ACCEPTABLE, desc = "C inserted first: remove read A.next = C and unlinked A to C")
    @Outcome(id = "1, 1, 0, 0", expect = ACCEPTABLE_INTERESTING,
            desc = "lost insert: C linked after A, but A was unlinked without a mark")
    @Outcome(expect = FORBIDDEN, desc = "any other state")
    @State
    public static class BrokenUnlinkWithoutMark extends Base {
        @Arbiter
        public void arbiter(final IIII_Result r) {
            observe(r);
        }

        @Actor
        public void removeA(final IIII_Result r) {
            final long next = Words.la(a);
            r.r1 = Words.cas(head, a, next) ? 1 : 0;
        }

        @Actor
        public void insertCAfterA(final IIII_Result r) {
            r.r2 = insertAfterA();
        }
    }
}
