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
 * The token hand-off of Token-EBR publishes the passer's accesses ({@link TokenEbr}'s memory-ordering
 * notes (T1) to (T5)): a thread that receives the token sees every write (and retire) its passer made
 * before the pass. The whole safety argument chains these hand-offs around the ring: the unlink and
 * retire of a record precede the retiring thread's pass, and the thread that frees it received the
 * token through a chain of passes that starts there.
 *
 * <p>Every state starts with the ring word naming the passer (participant {@value #PASSER}) and an
 * empty bag (a heap word holding its size, 0). Actor {@code pass} retires a record (the bag's size
 * becomes 1, a plain store, as BlockBag.add does) and then passes the token to the receiver
 * (participant {@value #RECEIVER}). Actor {@code receive} has read the bag's size once before (in
 * its previous operation: the load a compiler may reuse), then checks for the token and reads the
 * size again. Result (receiver, size): receiver 1 = the ring word named it, 0 = it did not; size =
 * what its second read saw. (1, 0) is the bug: the receiver holds the token but misses a retire made
 * before the pass, so the round it starts could free a record that a reader still holds.
 *
 * <p>{@link RingCas} is {@link TokenEbr}'s protocol: the pass is a CAS of the ring word (T4) and a
 * volatile store of the receiver's flag (T5); the receiver loads its flag opaquely (T1), clears it
 * with a getAndSet (T2) and reads the ring word with a volatile load (T3). {@link BrokenPlainToken}
 * passes with a plain store of the ring word and reads it with a plain load: x86's hardware keeps
 * both stores and both loads in order (TSO), so only the compiler can show the bug, and it does:
 * C2 may reuse the receiver's first read of the size for the second one across the plain load of
 * the ring word (an acquire or volatile load forbids that), and may reorder the passer's stores.
 * On this project's 2-vCPU x86 VM (JDK 25, {@code -m quick}) it shows (1, 0) in every run, about
 * one sample in 1,500; {@link RingCas} never does.
 */
public final class TokenHandOffTest {

    static final int PASSER = 3;
    static final int RECEIVER = 7;
    static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class).withInvokeExactBehavior();
    static final VarHandle FLAGS = MethodHandles.arrayElementVarHandle(int[].class).withInvokeExactBehavior();

    private TokenHandOffTest() {
    }

    /** A state: the ring word (seq 0, held by the passer), the receiver's flag (0), the passer's bag size (0). */
    abstract static class Base {
        final long[] ring = {PASSER};
        final int[] flag = new int[1];
        final long[] bag = new long[1];

        /** The ring word after {@code r}, as TokenEbr.next builds it: seq + 1, the new holder. */
        static long next(final long r, final int holder) {
            return ((r >>> 22) + 1) << 22 | holder;
        }

        static int names(final long r) {
            return (int) (r & ((1L << 21) - 1)) == RECEIVER ? 1 : 0;
        }
    }

    @JCStressTest
    @Description("pass: bag = 1; cas(ring, passer -> receiver); setVolatile(flag, 1) || receive: bag; "
            + "getOpaque(flag) != 0 ? getAndSet(flag, 0), getVolatile(ring); bag: the receiver sees the retire")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the receiver took the token and sees the retire made before the pass")
    @Outcome(id = {"0, 0", "0, 1"}, expect = ACCEPTABLE, desc = "the receiver did not see the token yet")
    @Outcome(id = "1, 0", expect = FORBIDDEN, desc = "the receiver holds the token but misses a retire made before the pass")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class RingCas extends Base {
        @Actor
        public void pass() {
            bag[0] = 1; // the retire
            final long r = (long) WORDS.getVolatile(ring, 0); // (T3)
            if ((boolean) WORDS.compareAndSet(ring, 0, r, next(r, RECEIVER))) { // (T4)
                FLAGS.setVolatile(flag, 0, 1); // (T5)
            }
        }

        @Actor
        public void receive(final II_Result res) {
            final long before = bag[0]; // read in the previous operation
            int holder = 0;
            if ((int) FLAGS.getOpaque(flag, 0) != 0) { // (T1)
                final int hint = (int) FLAGS.getAndSet(flag, 0, 0); // (T2)
                holder = names((long) WORDS.getVolatile(ring, 0)); // (T3)
            }
            res.r1 = holder;
            res.r2 = (int) (holder == 1 ? bag[0] : before);
        }
    }

    @JCStressTest
    @Description("BROKEN (x86 can show it, through the compiler only: its hardware keeps TSO order, but C2 reuses "
            + "the receiver's earlier load of the bag across the plain token load): pass: bag = 1; ring = receiver "
            + "(plain) || receive: bag; ring (plain) names receiver? bag: the receiver may miss the retire")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the receiver took the token and sees the retire made before the pass")
    @Outcome(id = {"0, 0", "0, 1"}, expect = ACCEPTABLE, desc = "the receiver did not see the token yet")
    @Outcome(id = "1, 0", expect = ACCEPTABLE_INTERESTING,
            desc = "plain hand-off: the receiver holds the token but misses a retire made before the pass")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class BrokenPlainToken extends Base {
        @Actor
        public void pass() {
            bag[0] = 1; // the retire
            ring[0] = next(ring[0], RECEIVER); // a plain pass
        }

        @Actor
        public void receive(final II_Result res) {
            final long before = bag[0]; // read in the previous operation
            final int holder = names(ring[0]); // a plain check of the token
            res.r1 = holder;
            res.r2 = (int) (holder == 1 ? bag[0] : before);
        }
    }
}
