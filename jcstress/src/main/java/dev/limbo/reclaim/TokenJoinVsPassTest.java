package dev.limbo.reclaim;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * A thread joining the Token-EBR ring races with a holder that chooses its successor
 * ({@link TokenEbr}'s membership notes, (T4) and (T6); the digest's §8.10): the holder must not
 * skip the joiner and complete a round while the joiner reads a node unlinked before that round.
 * Either the holder's choice sees the joiner as a member (and passes it the token), or the
 * joiner's first section reads after the pass (and cannot reach the node).
 *
 * <p>Every state starts with the ring word naming the passer (the only member), a cell that links a
 * node, and the joiner not a member. Actor {@code pass} unlinks the node and takes its turn: it
 * reads R (T3) and the joiner's member flag (T6), and passes by CAS (T4) to the joiner if it is a
 * member, else to itself, which in a ring of one completes the round: the node would be freed.
 * Actor {@code joinAndRead} joins (member := 1 (T6), then a CAS (T4) that bumps seq) and then reads
 * the cell, as its first section does. Result (joiner, freed): joiner 1 = it read the node still
 * linked, 0 = unlinked; freed 1 = the passer passed to itself (the round is complete), 0 = it passed
 * to the joiner. (1, 1) is the bug: the node is freed while the joiner holds it.
 *
 * <p>{@link RingCas} is TokenEbr's join. {@link BrokenJoinWithoutRingCas} joins with a release store
 * of the member flag alone: the joiner's read of the cell can pass its flag store still in the
 * store buffer, and the passer can read the flag before it lands: x86 shows (1, 1).
 */
public final class TokenJoinVsPassTest {

    static final int PASSER = 1;
    static final int JOINER = 2;
    static final long LINKED = 42;
    static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class).withInvokeExactBehavior();
    static final VarHandle FLAGS = MethodHandles.arrayElementVarHandle(int[].class).withInvokeExactBehavior();

    private TokenJoinVsPassTest() {
    }

    /** A state: R naming the passer, the joiner's member flag (0), a cell linking a node. */
    abstract static class Base {
        final long[] ring = {PASSER};
        final int[] member = new int[1];
        final long[] cell = {LINKED};

        static long next(final long r, final int holder) {
            return ((r >>> 22) + 1) << 22 | holder;
        }

        static int holder(final long r) {
            return (int) (r & ((1L << 21) - 1));
        }

        /** The passer: unlink, then a turn that passes to the joiner if it is a member; 1 if it passed to itself. */
        final int unlinkAndPass() {
            cell[0] = 0; // the unlink
            while (true) {
                final long r = (long) WORDS.getVolatile(ring, 0); // (T3)
                final int successor = (int) FLAGS.getVolatile(member, 0) != 0 ? JOINER : PASSER; // (T6)
                if ((boolean) WORDS.compareAndSet(ring, 0, r, next(r, successor))) { // (T4)
                    return successor == PASSER ? 1 : 0;
                }
            }
        }

        /** The joiner's first section: 1 if it reads the node still linked. */
        final int read() {
            return (long) WORDS.getAcquire(cell, 0) == LINKED ? 1 : 0; // protect's acquire load
        }
    }

    @JCStressTest
    @Description("pass: cell = 0; r = R; member? ; cas(R, r, next) || join: setVolatile(member, 1); cas(R, r, r + seq); "
            + "la(cell): the joiner is seen or reads after the pass")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the passer saw the joiner and passed it the token")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the passer skipped the joiner, whose section reads after the pass")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "the joiner read the node and holds the token: no free yet")
    @Outcome(id = "1, 1", expect = FORBIDDEN, desc = "the passer skipped the joiner, which holds the node the round frees")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class RingCas extends Base {
        @Actor
        public void pass(final II_Result res) {
            res.r2 = unlinkAndPass();
        }

        @Actor
        public void joinAndRead(final II_Result res) {
            FLAGS.setVolatile(member, 0, 1); // (T6)
            while (true) {
                final long r = (long) WORDS.getVolatile(ring, 0); // (T3)
                if ((boolean) WORDS.compareAndSet(ring, 0, r, next(r, holder(r)))) { // (T4)
                    break;
                }
            }
            res.r1 = read();
        }
    }

    @JCStressTest
    @Description("BROKEN (x86 can show it: store buffering): pass: cell = 0; r = R; member? ; cas(R, r, next) || "
            + "join: setRelease(member, 1); la(cell): no ring CAS, the passer may skip a joiner that reads the node")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the passer saw the joiner and passed it the token")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the passer skipped the joiner, whose section reads after the pass")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "the joiner read the node and holds the token: no free yet")
    @Outcome(id = "1, 1", expect = ACCEPTABLE_INTERESTING,
            desc = "the passer skipped the joiner, which holds the node the round frees")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class BrokenJoinWithoutRingCas extends Base {
        @Actor
        public void pass(final II_Result res) {
            res.r2 = unlinkAndPass();
        }

        @Actor
        public void joinAndRead(final II_Result res) {
            FLAGS.setRelease(member, 0, 1); // (T6) without the CAS that follows it
            res.r1 = read();
        }
    }
}
