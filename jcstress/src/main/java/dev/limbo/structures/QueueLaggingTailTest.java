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
 * The Michael-Scott queue's lagging tail ({@link MichaelScottQueue}'s enqueue, (1), (3), (4), (5)):
 * an enqueue links its node at the last node's next with a CAS (1) and then swings tail to it with a
 * CAS (4); between the two, tail lags by one, and a concurrent enqueue that finds tail.next != 0
 * helps swing tail (4) before it retries. Two concurrent enqueues both land in the chain from head,
 * in some order, each once, and when both have returned tail is the last node.
 *
 * <p>A protocol model over region words: every state starts with an empty queue, head and tail
 * pointing at a dummy node, and two fresh nodes, each a {@link WordSlots} slot with its next word
 * at +0 and its value word at +{@value #VALUE}. Actor {@code enqueue1} enqueues 1 and actor
 * {@code enqueue2} enqueues 2, each with the loop of {@link MichaelScottQueue#enqueue} (acquire
 * loads where it protects). The arbiter walks from head's successor.
 *
 * <p>Result (values, tail): values are the values reachable in order as decimal digits (12: 1 then
 * 2), 99 for a walk that does not end; tail is 0 if tail is the last node, 1 if its predecessor, 8
 * if not reachable from head. The correct loop ends with (12, 0) or (21, 0) only: the last linker
 * swings tail from the node it linked after, where tail is (or where a helper already moved it past).
 * {@link BrokenNoTailNextCheck} appends at whatever tail it read with a plain store and no look at
 * tail.next: two enqueues that read the same tail overwrite each other's link and one node is lost,
 * possibly with tail pointing at the lost node. That is an interleaving bug that x86 shows; it is
 * marked ACCEPTABLE_INTERESTING so that the suite does not fail on it.
 */
public final class QueueLaggingTailTest {

    /** Offset of a node's value word within its slot. */
    static final long VALUE = 8;

    private QueueLaggingTailTest() {
    }

    /** A state: an empty queue (head = tail = dummy) and a node per enqueuer. */
    abstract static class Base {
        final long dummy = WordSlots.word(0);
        final long head = WordSlots.word(dummy);
        final long tail = WordSlots.word(dummy);
        final long node1 = WordSlots.word(0);
        final long node2 = WordSlots.word(0);

        Base() {
            Words.sp(dummy + VALUE, 0); // jcstress publishes the state safely
        }

        /** Initializes a node as enqueue does, with plain stores. */
        static void init(final long node, final long value) {
            Words.sp(node + VALUE, value);
            Words.sp(node, 0);
        }

        /** Records the final state. */
        final void observe(final II_Result r) {
            final long t = Words.lv(tail);
            long prev = Words.lv(head);
            long cur = Words.lv(prev);
            int values = 0;
            int tailAt = t == prev && cur == 0 ? 0 : 8; // an empty chain: tail is the dummy
            for (int steps = 0; cur != 0; steps++) {
                if (steps > 4) {
                    r.r1 = 99;
                    r.r2 = 9;
                    return;
                }
                values = values * 10 + (int) Words.lv(cur + VALUE);
                final long next = Words.lv(cur);
                if (next == 0 && t == cur) {
                    tailAt = 0;
                } else if (next == 0 && t == prev) {
                    tailAt = 1;
                }
                prev = cur;
                cur = next;
            }
            r.r1 = values;
            r.r2 = tailAt;
        }
    }

    /** As {@link MichaelScottQueue#enqueue} does it: link with a CAS (1) at tail.next == 0, else help (4). */
    @JCStressTest
    @Description("enqueue(1) || enqueue(2), Michael-Scott with helping: both values once, tail at the last node")
    @Outcome(id = "12, 0", expect = ACCEPTABLE, desc = "1 linked first, tail at the last node")
    @Outcome(id = "21, 0", expect = ACCEPTABLE, desc = "2 linked first, tail at the last node")
    @Outcome(id = {"12, 1", "21, 1"}, expect = FORBIDDEN, desc = "both enqueues returned but tail still lags")
    @Outcome(expect = FORBIDDEN, desc = "a node lost, duplicated, or tail off the chain")
    @State
    public static class Helping extends Base {
        @Arbiter
        public void arbiter(final II_Result r) {
            observe(r);
        }

        void enqueue(final long node, final long value) {
            init(node, value);
            while (true) {
                final long t = Words.la(tail); // (5)
                final long next = Words.la(t); // (3)
                if (t != Words.la(tail)) {
                    continue;
                }
                if (next != 0) {
                    Words.cas(tail, t, next); // (4) help a lagging tail
                } else if (Words.cas(t, 0, node)) { // (1)
                    Words.cas(tail, t, node); // (4)
                    return;
                }
            }
        }

        @Actor
        public void enqueue1() {
            enqueue(node1, 1);
        }

        @Actor
        public void enqueue2() {
            enqueue(node2, 2);
        }
    }

    /**
     * BROKEN on purpose: append at the tail read, with a plain store of its next and no check that
     * tail.next is still 0 (and so no helping), then swing tail with a CAS. Two enqueues that read the
     * same tail both write its next: one node is lost. x86 shows it.
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: an interleaving, not a reordering): t = la(tail); sp(t.next, n); cas(tail, t, n) || the same, "
            + "with no check of t.next: both may append at the same tail, a node is lost")
    @Outcome(id = "12, 0", expect = ACCEPTABLE, desc = "1 appended first, tail at the last node")
    @Outcome(id = "21, 0", expect = ACCEPTABLE, desc = "2 appended first, tail at the last node")
    @Outcome(id = {"1, 0", "2, 0"}, expect = ACCEPTABLE_INTERESTING,
            desc = "lost node: both appended at the same tail, the survivor is the last node and tail")
    @Outcome(id = {"1, 8", "2, 8"}, expect = ACCEPTABLE_INTERESTING,
            desc = "lost node: both appended at the same tail, and tail points at the lost node")
    @Outcome(expect = FORBIDDEN, desc = "any other state")
    @State
    public static class BrokenNoTailNextCheck extends Base {
        @Arbiter
        public void arbiter(final II_Result r) {
            observe(r);
        }

        void enqueue(final long node, final long value) {
            init(node, value);
            final long t = Words.la(tail);
            Words.sp(t, node);
            Words.cas(tail, t, node);
        }

        @Actor
        public void enqueue1() {
            enqueue(node1, 1);
        }

        @Actor
        public void enqueue2() {
            enqueue(node2, 2);
        }
    }
}
