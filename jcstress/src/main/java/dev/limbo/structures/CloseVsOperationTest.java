package dev.limbo.structures;

import dev.limbo.core.StripedCounter;
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
 * The closing handshake of {@link OffHeapStructure} (its memory-ordering notes (2), (3) against
 * (5), (6), (7)): an operation counts itself in flight on its stripe of a {@link StripedCounter},
 * then checks the closed flag; close() sets the flag, fences, and sums the stripes. An operation
 * that goes on must be seen in flight, or close() would free the nodes under it.
 *
 * <p>A protocol model: each state has a counter and a flag of its own, as a structure does. Actor
 * {@code operation} runs enter's steps (a get-and-add on its stripe, a volatile load of the flag,
 * backing out if it is set); actor {@code close} runs close's (a volatile store of the flag, a full
 * fence, the sum). Result (operation, close): operation 1 = it went on, 0 = it saw the flag and
 * backed out; close = the sum it read. (1, 0) is the bug: close would free the nodes while the
 * operation uses them.
 *
 * <p>{@link BrokenNoFence} stores the flag with release semantics and sums without the fence (6): the
 * store can wait in x86's store buffer while the sum reads the stripes, and the operation's load
 * still finds the flag clear, so x86 shows (1, 0).
 */
public final class CloseVsOperationTest {

    static final VarHandle CLOSED;

    static {
        try {
            CLOSED = MethodHandles.lookup().findVarHandle(Base.class, "closed", boolean.class)
                    .withInvokeExactBehavior();
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private CloseVsOperationTest() {
    }

    /** A state: an in-flight count and a closed flag, as one structure has them. */
    abstract static class Base {
        final StripedCounter inFlight = new StripedCounter();
        volatile boolean closed;

        /** enter's steps (2), (3): 1 if the operation goes on, 0 if it saw the flag and backed out. */
        final int enter() {
            final int id = StripedCounter.threadKey();
            inFlight.add(id, 1); // (2)
            if (closed) { // (3)
                inFlight.add(id, -1);
                return 0;
            }
            return 1;
        }
    }

    /** As {@link OffHeapStructure} does it. */
    @JCStressTest
    @Description("xadd(stripe, 1); lv(closed) || sv(closed); fullFence; sum(stripes): "
            + "an operation goes on only if close sees it in flight")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the operation went on; close saw it in flight and waits")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the operation backed out; close saw its count before it left")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the operation backed out; close saw nothing in flight")
    @Outcome(id = "1, 0", expect = FORBIDDEN, desc = "the operation went on, but close saw nothing in flight and would free its nodes")
    @Outcome(expect = FORBIDDEN, desc = "a count nobody made")
    @State
    public static class Fenced extends Base {
        @Actor
        public void operation(final II_Result r) {
            r.r1 = enter();
        }

        @Actor
        public void close(final II_Result r) {
            closed = true; // (5)
            VarHandle.fullFence(); // (6)
            r.r2 = (int) inFlight.sum(); // (7)
        }
    }

    /**
     * BROKEN on purpose: close stores the flag with release semantics and sums the stripes without
     * a fence; the memory model allows (1, 0) and x86's store buffer shows it.
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: store buffering): xadd(stripe, 1); lv(closed) || sr(closed); sum(stripes): "
            + "no fence between close's store and its sum, which may miss an operation that goes on")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the operation went on; close saw it in flight and waits")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the operation backed out; close saw its count before it left")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the operation backed out; close saw nothing in flight")
    @Outcome(id = "1, 0", expect = ACCEPTABLE_INTERESTING,
            desc = "store buffering: the operation went on, but close saw nothing in flight and would free its nodes")
    @Outcome(expect = FORBIDDEN, desc = "a count nobody made")
    @State
    public static class BrokenNoFence extends Base {
        @Actor
        public void operation(final II_Result r) {
            r.r1 = enter();
        }

        @Actor
        public void close(final II_Result r) {
            CLOSED.setRelease((Base) this, true);
            r.r2 = (int) inFlight.sum();
        }
    }
}
