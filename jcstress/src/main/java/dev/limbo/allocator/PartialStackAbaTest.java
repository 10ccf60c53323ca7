package dev.limbo.allocator;

import dev.limbo.allocator.internal.DescriptorLayout;
import dev.limbo.allocator.internal.Descriptors;
import dev.limbo.allocator.internal.SizeClasses;
import dev.limbo.core.Words;
import dev.limbo.stress.StackAbaOracle;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIIII_Result;
import org.openjdk.jcstress.infra.results.IIII_Result;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * ABA on the tagged Treiber stacks of {@link Descriptors} (lrmalloc digest §8, item 6): a pop that
 * read head A and its link B, then stalled while others popped A, popped B and pushed A back, must
 * not install the stale B. The 32-bit tag in the head makes its CAS fail.
 *
 * <p>Every state starts from a stack a, b, c (a on top) of three descriptors. Actor 1 pops once;
 * actor 2 pops x, pops y and pushes x back (the ABA maker); in {@link TaggedThreeActors} actor 3
 * also pops once. The arbiter drains what is left and reports (actor 1's pop, 10 * x + y, [actor
 * 3's pop,] the rest top first as digits, verdict), with a = 1, b = 2, c = 3 and 0 for an empty
 * pop. Verdict 0: one of the sequential orders of the operations (4 with two actors, 20 with
 * three) gives exactly this result (linearizable); 1: each descriptor is held once or left on the
 * stack, but no sequential order explains it; 2: a descriptor is held twice or lost, the stack
 * cycles, or a pop returned a descriptor that was never pushed. ABA needs only the first two
 * actors; the three-actor variant needs a machine with at least 3 CPUs (jcstress skips it on 2).
 *
 * <p>The test of the real stack needs a stack head per state, and {@link Descriptors} has only one
 * per size class (plus the recycle stack). Jcstress runs many states at once and a stack shared
 * between them would have no per-state contents to check, so states lease a "lane" (a
 * {@link Descriptors} instance, one of its partial stacks 1..40, and three descriptors allocated
 * from it) from a pool that grows by 40 lanes when empty; the arbiter drains the stack and returns
 * the lane. Nothing in {@link Descriptors} had to change.
 *
 * <p>The broken variant is a model: the same push and pop over the same descriptor link words
 * ({@code nextPartial}), with an untagged head held in an {@link AtomicLong}, and actor 1's pop
 * stalled between reading the link and its CAS by {@value #PAUSE_SPINS} {@code onSpinWait}s (a
 * stand-in for a preemption). On 2 x86 cores a quick run ({@code -m quick -sc false}) showed the ABA
 * in about 0.16% of the states with the stall, and in 183 of 5.7 million without it, too rarely for
 * a sanity run. The control model has the same stall and a tagged head, showing that the tag, not
 * the timing, is what keeps the stack correct. ABA is an interleaving bug, not a reordering: any
 * hardware shows it, x86 included.
 *
 * <p>The second broken variant, {@link BrokenStaleCounterModel}, is LRMalloc's own scheme (a pop
 * keeps the head's counter, a push increments it) with the push bug fixed there in 2019: the
 * counter computed once, before the CAS retry loop, so a push that retries can install a counter
 * older than the head's (lrmalloc digest §3.7). Showing it takes a push that loses its first CAS to
 * the other actor, and a pop of that actor stalled across the push's retry and three more
 * operations, so its actors differ ({@link CounterBase}); {@link CounterModel} is its control, with
 * the counter recomputed in every try and the same stalls. A
 * quick run on 2 x86 cores ({@code -m quick}) showed the ABA in 1,336,777 of 8.3 million states of
 * the broken model (16 %, plus 3,973 other corruptions), and no corruption in 7.6 million of the
 * control.
 */
public final class PartialStackAbaTest {

    /** Spins of a stall in the models (S in {@link CounterBase}). */
    static final int PAUSE_SPINS = 100;

    private PartialStackAbaTest() {
    }

    /** A stack of one {@link Descriptors} with three descriptors of it, leased by one state at a time. */
    static final class Lane {
        private static final ConcurrentLinkedQueue<Lane> POOL = new ConcurrentLinkedQueue<>();

        final Descriptors ds;
        final int stack;
        final int a;
        final int b;
        final int c;

        private Lane(final Descriptors ds, final int stack) {
            this.ds = ds;
            this.stack = stack;
            this.a = ds.allocate();
            this.b = ds.allocate();
            this.c = ds.allocate();
        }

        /** A lane whose stack is empty: from the pool, or one of 40 new ones. */
        static Lane lease() {
            final Lane lane = POOL.poll();
            if (lane != null) {
                return lane;
            }
            final Descriptors ds = new Descriptors();
            for (int s = 2; s <= SizeClasses.COUNT; s++) {
                POOL.add(new Lane(ds, s));
            }
            return new Lane(ds, 1);
        }

        void giveBack() {
            POOL.add(this);
        }

        int letter(final int index) {
            return index == 0 ? 0 : index == a ? 1 : index == b ? 2 : index == c ? 3 : 9;
        }
    }

    /** A state of the tests of the real stack: a leased lane, stacked a, b, c. */
    abstract static class RealBase {
        final Lane lane = Lane.lease();

        RealBase() {
            lane.ds.pushPartial(lane.stack, lane.c);
            lane.ds.pushPartial(lane.stack, lane.b);
            lane.ds.pushPartial(lane.stack, lane.a);
        }

        final int pop() {
            return lane.letter(lane.ds.popPartial(lane.stack));
        }

        /** Pops x, pops y, pushes x back; returns 10 * x + y as letters. */
        final int popPopPush() {
            final int x = lane.ds.popPartial(lane.stack);
            final int y = lane.ds.popPartial(lane.stack);
            if (x != 0) {
                lane.ds.pushPartial(lane.stack, x);
            }
            return 10 * lane.letter(x) + lane.letter(y);
        }

        /** Pops the rest (top first, as digits) and gives the lane back; -1 (lane dropped) for a cycle. */
        final long drain() {
            long rest = 0;
            int n = 0;
            for (int d = lane.ds.popPartial(lane.stack); d != 0; d = lane.ds.popPartial(lane.stack)) {
                if (++n > 6) {
                    return -1;
                }
                rest = rest * 10 + lane.letter(d);
            }
            lane.giveBack();
            return rest;
        }
    }

    /**
     * The real {@link Descriptors#popPartial}/{@link Descriptors#pushPartial}, two actors: pop
     * against the ABA maker pop, pop, push. With the tag every result is linearizable. Result:
     * (actor 1's pop, 10 * x + y, rest, verdict).
     */
    @JCStressTest
    @Description("Descriptors stack a,b,c: pop || pop x, pop y, push x: linearizable, nothing popped twice or lost")
    @Outcome(id = "1, 23, 2, 0", expect = ACCEPTABLE, desc = "1 pops a; 2 pops b, pops c, pushes b")
    @Outcome(id = "2, 13, 1, 0", expect = ACCEPTABLE, desc = "2 pops a; 1 pops b; 2 pops c, pushes a")
    @Outcome(id = "3, 12, 1, 0", expect = ACCEPTABLE, desc = "2 pops a, pops b; 1 pops c; 2 pushes a")
    @Outcome(id = "1, 12, 3, 0", expect = ACCEPTABLE, desc = "2 pops a, pops b, pushes a; 1 pops a")
    @Outcome(id = ".*, 1", expect = FORBIDDEN, desc = "every descriptor once, but no sequential order gives this result")
    @Outcome(expect = FORBIDDEN,
            desc = "a descriptor popped twice or lost (ABA, e.g. 1, 12, 23, 2: a stale CAS installed b), a cycle, or a stranger")
    @State
    public static class Tagged extends RealBase {
        @Actor
        public void pop1(final IIII_Result r) {
            r.r1 = pop();
        }

        @Actor
        public void popPopPush2(final IIII_Result r) {
            r.r2 = popPopPush();
        }

        @Arbiter
        public void check(final IIII_Result r) {
            final long rest = drain();
            r.r3 = (int) rest;
            r.r4 = StackAbaOracle.verdict2(r.r1, r.r2, rest);
        }
    }

    /**
     * The real stack with a third actor that pops once: result (actor 1's pop, 10 * x + y, actor 3's
     * pop, rest, verdict). Jcstress runs a test only with at least as many CPUs as actors, so it skips
     * this one on a 2-CPU machine.
     */
    @JCStressTest
    @Description("Descriptors stack a,b,c: pop || pop x, pop y, push x || pop: linearizable, nothing popped twice or lost")
    @Outcome(id = "0, 12, 3, 1, 0", expect = ACCEPTABLE, desc = "2 pops a, 2 pops b, 3 pops c, 1 pops -, 2 pushes a")
    @Outcome(id = "0, 13, 2, 1, 0", expect = ACCEPTABLE, desc = "2 pops a, 3 pops b, 2 pops c, 1 pops -, 2 pushes a")
    @Outcome(id = "0, 23, 1, 2, 0", expect = ACCEPTABLE, desc = "3 pops a, 2 pops b, 2 pops c, 1 pops -, 2 pushes b")
    @Outcome(id = "1, 12, 3, 0, 0", expect = ACCEPTABLE, desc = "2 pops a, 2 pops b, 2 pushes a, 1 pops a, 3 pops c | 2 pops a, 2 pops b, 3 pops c, 2 pushes a, 1 pops a")
    @Outcome(id = "1, 13, 2, 0, 0", expect = ACCEPTABLE, desc = "2 pops a, 3 pops b, 2 pops c, 2 pushes a, 1 pops a")
    @Outcome(id = "1, 20, 3, 2, 0", expect = ACCEPTABLE, desc = "1 pops a, 2 pops b, 3 pops c, 2 pops -, 2 pushes b")
    @Outcome(id = "1, 23, 0, 2, 0", expect = ACCEPTABLE, desc = "1 pops a, 2 pops b, 2 pops c, 3 pops -, 2 pushes b")
    @Outcome(id = "1, 23, 2, 0, 0", expect = ACCEPTABLE, desc = "1 pops a, 2 pops b, 2 pops c, 2 pushes b, 3 pops b")
    @Outcome(id = "1, 30, 2, 3, 0", expect = ACCEPTABLE, desc = "1 pops a, 3 pops b, 2 pops c, 2 pops -, 2 pushes c")
    @Outcome(id = "2, 10, 3, 1, 0", expect = ACCEPTABLE, desc = "2 pops a, 1 pops b, 3 pops c, 2 pops -, 2 pushes a")
    @Outcome(id = "2, 13, 0, 1, 0", expect = ACCEPTABLE, desc = "2 pops a, 1 pops b, 2 pops c, 3 pops -, 2 pushes a")
    @Outcome(id = "2, 13, 1, 0, 0", expect = ACCEPTABLE, desc = "2 pops a, 1 pops b, 2 pops c, 2 pushes a, 3 pops a")
    @Outcome(id = "2, 23, 1, 0, 0", expect = ACCEPTABLE, desc = "3 pops a, 2 pops b, 2 pops c, 2 pushes b, 1 pops b")
    @Outcome(id = "2, 30, 1, 3, 0", expect = ACCEPTABLE, desc = "3 pops a, 1 pops b, 2 pops c, 2 pops -, 2 pushes c")
    @Outcome(id = "3, 10, 2, 1, 0", expect = ACCEPTABLE, desc = "2 pops a, 3 pops b, 1 pops c, 2 pops -, 2 pushes a")
    @Outcome(id = "3, 12, 0, 1, 0", expect = ACCEPTABLE, desc = "2 pops a, 2 pops b, 1 pops c, 3 pops -, 2 pushes a")
    @Outcome(id = "3, 12, 1, 0, 0", expect = ACCEPTABLE, desc = "2 pops a, 2 pops b, 2 pushes a, 3 pops a, 1 pops c | 2 pops a, 2 pops b, 1 pops c, 2 pushes a, 3 pops a")
    @Outcome(id = "3, 20, 1, 2, 0", expect = ACCEPTABLE, desc = "3 pops a, 2 pops b, 1 pops c, 2 pops -, 2 pushes b")
    @Outcome(id = ".*, 1", expect = FORBIDDEN, desc = "every descriptor once, but no sequential order gives this result")
    @Outcome(expect = FORBIDDEN, desc = "a descriptor popped twice or lost (ABA), a cycle, or a stranger")
    @State
    public static class TaggedThreeActors extends RealBase {
        @Actor
        public void pop1(final IIIII_Result r) {
            r.r1 = pop();
        }

        @Actor
        public void popPopPush2(final IIIII_Result r) {
            r.r2 = popPopPush();
        }

        @Actor
        public void pop3(final IIIII_Result r) {
            r.r3 = pop();
        }

        @Arbiter
        public void check(final IIIII_Result r) {
            final long rest = drain();
            r.r4 = (int) rest;
            r.r5 = StackAbaOracle.verdict3(r.r1, r.r2, r.r3, rest);
        }
    }

    /**
     * A model of a descriptor stack: push and pop over the {@code nextPartial} words of real
     * descriptors, with the head in an {@link AtomicLong}. {@link #pop} can stall between reading the
     * link and its CAS.
     */
    abstract static class ModelStack {
        final Descriptors ds;
        final AtomicLong head = new AtomicLong();

        ModelStack(final Descriptors ds) {
            this.ds = ds;
        }

        final long link(final int index) {
            return ds.offset(index) + DescriptorLayout.NEXT_PARTIAL;
        }

        abstract void push(int index);

        /** Pops, spinning {@code pauseSpins} times between reading the top's link and the CAS. */
        abstract int pop(int pauseSpins);

        /** The contents top first as letters (without popping), or -1 if the walk exceeds 6. */
        final long rest(final ModelBase s) {
            long rest = 0;
            int n = 0;
            for (int d = (int) head.get(); d != 0; d = (int) Words.lp(link(d))) {
                if (++n > 6) {
                    return -1;
                }
                rest = rest * 10 + s.letter(d);
            }
            return rest;
        }
    }

    /**
     * {@link Descriptors}' scheme: head tag:32 | index:32, every push and pop incrementing the tag,
     * when tagged; the bare index otherwise.
     */
    static final class TagStack extends ModelStack {
        final boolean tagged;

        TagStack(final Descriptors ds, final boolean tagged) {
            super(ds);
            this.tagged = tagged;
        }

        private long next(final long h, final int index) {
            return tagged ? (((h >>> 32) + 1) << 32) | (index & 0xFFFF_FFFFL) : index & 0xFFFF_FFFFL;
        }

        @Override
        void push(final int index) {
            for (;;) {
                final long h = head.get();
                Words.sp(link(index), (int) h);
                if (head.compareAndSet(h, next(h, index))) {
                    return;
                }
            }
        }

        @Override
        int pop(final int pauseSpins) {
            for (;;) {
                final long h = head.get();
                final int index = (int) h;
                if (index == 0) {
                    return 0;
                }
                final int after = (int) Words.lp(link(index));
                for (int i = 0; i < pauseSpins; i++) {
                    Thread.onSpinWait(); // the stall of a preempted popper
                }
                if (head.compareAndSet(h, next(h, after))) {
                    return index;
                }
            }
        }
    }

    /**
     * LRMalloc's scheme (bec52c8, {@code DescriptorNode}): head counter:32 | index:32, where a push
     * increments the counter and a pop keeps it (a popped descriptor returns to the top only by a
     * push). With {@code staleCounter}, a push computes counter + 1 once, from the head it read before
     * its retry loop: the bug fixed in 2019 (lrmalloc 7d8f361), after which a retry can install a
     * counter older than the head's. Without it, each try computes the counter from the head it just
     * read. {@link #push(int, int)} can stall between the first head read and the first CAS.
     */
    static final class CounterStack extends ModelStack {
        private static final long INDEX = 0xFFFF_FFFFL;
        final boolean staleCounter;

        CounterStack(final Descriptors ds, final boolean staleCounter) {
            super(ds);
            this.staleCounter = staleCounter;
        }

        @Override
        void push(final int index) {
            push(index, 0);
        }

        void push(final int index, final int pauseSpins) {
            long h = head.get();
            final long once = ((h >>> 32) + 1) << 32;
            for (int i = 0; i < pauseSpins; i++) {
                Thread.onSpinWait(); // the stall of a preempted pusher
            }
            for (;;) {
                final long counter = staleCounter ? once : ((h >>> 32) + 1) << 32;
                Words.sp(link(index), (int) h);
                if (head.compareAndSet(h, counter | (index & INDEX))) {
                    return;
                }
                h = head.get();
            }
        }

        @Override
        int pop(final int pauseSpins) {
            for (;;) {
                final long h = head.get();
                final int index = (int) h;
                if (index == 0) {
                    return 0;
                }
                final int after = (int) Words.lp(link(index));
                for (int i = 0; i < pauseSpins; i++) {
                    Thread.onSpinWait(); // the stall of a preempted popper
                }
                if (head.compareAndSet(h, (h & ~INDEX) | (after & INDEX))) {
                    return index;
                }
            }
        }
    }


    /** A state of the model tests: three descriptors of the stack's {@code ds}, stacked a, b, c. */
    abstract static class ModelBase {
        final Descriptors ds;
        final ModelStack stack;
        final int a;
        final int b;
        final int c;

        ModelBase(final ModelStack stack) {
            this.ds = stack.ds;
            this.stack = stack;
            this.a = ds.allocate();
            this.b = ds.allocate();
            this.c = ds.allocate();
            stack.push(c);
            stack.push(b);
            stack.push(a);
        }

        int letter(final int index) {
            return index == 0 ? 0 : index == a ? 1 : index == b ? 2 : index == c ? 3 : 9;
        }

        /** Actor 1: a pop that stalls between reading the link and its CAS. */
        final void popStalled(final IIII_Result r) {
            r.r1 = letter(stack.pop(PAUSE_SPINS));
        }

        /** Actor 2: pops x, pops y, pushes x back. */
        final void popPopPush(final IIII_Result r) {
            final int x = stack.pop(0);
            final int y = stack.pop(0);
            if (x != 0) {
                stack.push(x);
            }
            r.r2 = 10 * letter(x) + letter(y);
        }

        final void arbiter(final IIII_Result r) {
            final long rest = finish();
            r.r3 = (int) rest;
            r.r4 = StackAbaOracle.verdict2(r.r1, r.r2, rest);
        }

        /** The stack's contents as {@link ModelStack#rest}; gives the descriptors back. */
        final long finish() {
            final long rest = stack.rest(this);
            ds.retire(a);
            ds.retire(b);
            ds.retire(c);
            return rest;
        }
    }

    /**
     * BROKEN on purpose: the model with an untagged head. Actor 1 reads head a and link b, stalls;
     * actor 2 pops a, pops b, pushes a (a is on top again, now linked to c); actor 1's CAS sees a and
     * installs b, which actor 2 holds: b is then both held and on the stack, and a, pushed back, is
     * gone from it (though actor 1 returned it, so only the duplicate shows).
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: an interleaving, not a reordering): untagged model stack a,b,c: stalled pop || "
            + "pop x, pop y, push x: ABA, the stale CAS installs a popped descriptor")
    @Outcome(id = "1, 23, 2, 0", expect = ACCEPTABLE, desc = "1 pops a; 2 pops b, pops c, pushes b")
    @Outcome(id = "2, 13, 1, 0", expect = ACCEPTABLE, desc = "2 pops a; 1 pops b; 2 pops c, pushes a")
    @Outcome(id = "3, 12, 1, 0", expect = ACCEPTABLE, desc = "2 pops a, pops b; 1 pops c; 2 pushes a")
    @Outcome(id = "1, 12, 3, 0", expect = ACCEPTABLE, desc = "2 pops a, pops b, pushes a; 1 pops a")
    @Outcome(id = "1, 12, 23, 2", expect = ACCEPTABLE_INTERESTING,
            desc = "ABA: 1 read a->b and stalled; 2 popped a, popped b, pushed a; 1's CAS saw a and installed b: "
                    + "b is held by 2 and on the stack")
    @Outcome(id = ".*, [12]", expect = ACCEPTABLE_INTERESTING, desc = "another corruption caused by ABA")
    @Outcome(expect = FORBIDDEN, desc = "not expected even from the untagged model")
    @State
    public static class BrokenUntaggedModel extends ModelBase {
        static final Descriptors DS = new Descriptors();

        public BrokenUntaggedModel() {
            super(new TagStack(DS, false));
        }

        @Actor
        public void pop1(final IIII_Result r) {
            popStalled(r);
        }

        @Actor
        public void popPopPush2(final IIII_Result r) {
            popPopPush(r);
        }

        @Arbiter
        public void check(final IIII_Result r) {
            arbiter(r);
        }
    }

    /**
     * Control for the broken model: the same stalled pop, with a tagged head as in
     * {@link Descriptors}. Nothing is corrupted: the stale CAS fails and retries.
     */
    @JCStressTest
    @Description("tagged model stack a,b,c: stalled pop || pop x, pop y, push x: linearizable")
    @Outcome(id = "1, 23, 2, 0", expect = ACCEPTABLE, desc = "1 pops a; 2 pops b, pops c, pushes b")
    @Outcome(id = "2, 13, 1, 0", expect = ACCEPTABLE, desc = "2 pops a; 1 pops b; 2 pops c, pushes a")
    @Outcome(id = "3, 12, 1, 0", expect = ACCEPTABLE, desc = "2 pops a, pops b; 1 pops c; 2 pushes a")
    @Outcome(id = "1, 12, 3, 0", expect = ACCEPTABLE, desc = "2 pops a, pops b, pushes a; 1 pops a")
    @Outcome(expect = FORBIDDEN, desc = "a descriptor popped twice or lost (ABA: 1, 12, 23, 2), or a non-linearizable result")
    @State
    public static class TaggedModel extends ModelBase {
        static final Descriptors DS = new Descriptors();

        public TaggedModel() {
            super(new TagStack(DS, true));
        }

        @Actor
        public void pop1(final IIII_Result r) {
            popStalled(r);
        }

        @Actor
        public void popPopPush2(final IIII_Result r) {
            popPopPush(r);
        }

        @Arbiter
        public void check(final IIII_Result r) {
            arbiter(r);
        }
    }

    /**
     * A state of the counter-model tests (S: {@value #PAUSE_SPINS} {@code onSpinWait}s): actor 1 pops
     * x and pushes it back, stalling for S after the push's first head read, then pops p, q and r and
     * pushes q back; actor 2 starts S/2 late, pops y and z, pushes z and y back, then pops w, stalling
     * for S between reading the link and its CAS. The stalls stand in for preemptions and make the
     * interleaving below likely; actor 1 idles S/2 at the end so that both actors spend as long on a
     * state and stay in step (jcstress runs each actor over many states in a row). The control has
     * the same stalls. Result: (10 * p + r, w, the rest, verdict), with verdict 0 when a, b and c are
     * each held once or on the stack once, and 2 otherwise.
     *
     * <p>With a stale counter: 1 pops a (head counter 3) and reads head (3, b) for its push, computing
     * counter 4, and stalls; 2 pops b and c and pushes c (4) and b (5), reads (5, b) with link c and
     * stalls; 1's first CAS fails, its retry installs (4, a) over (5, b), its pops take a, b and c
     * without changing the counter, and its push of b computes 5: the head is (5, b) again, with b's
     * link now 0, and 2's stale CAS succeeds and installs c, which 1 holds. Result (13, 2, 3, 2). With
     * the counter recomputed, 1's retry installs (6, a), the head goes to (7, b), and 2's CAS fails.
     */
    abstract static class CounterBase extends ModelBase {
        final CounterStack counters;

        CounterBase(final Descriptors ds, final boolean staleCounter) {
            this(new CounterStack(ds, staleCounter));
        }

        private CounterBase(final CounterStack counters) {
            super(counters);
            this.counters = counters;
        }

        /** Actor 1: pop x, push x (stalled after its first head read); pop p, q, r; push q. */
        final void slowPusher(final IIII_Result r) {
            final int x = counters.pop(0);
            if (x != 0) {
                counters.push(x, PAUSE_SPINS);
            }
            final int p = counters.pop(0);
            final int q = counters.pop(0);
            final int last = counters.pop(0);
            if (q != 0) {
                counters.push(q);
            }
            r.r1 = 10 * letter(p) + letter(last);
            spin(PAUSE_SPINS / 2); // as long on a state as actor 2
        }

        /** Actor 2: (late) pop y, pop z, push z, push y; pop w, stalled between its link read and its CAS. */
        final void stalledPopper(final IIII_Result r) {
            spin(PAUSE_SPINS / 2); // a late start: actor 1's push reads the head first
            final int y = counters.pop(0);
            final int z = counters.pop(0);
            if (z != 0) {
                counters.push(z);
            }
            if (y != 0) {
                counters.push(y);
            }
            r.r2 = letter(counters.pop(PAUSE_SPINS));
        }

        private static void spin(final int spins) {
            for (int i = 0; i < spins; i++) {
                Thread.onSpinWait();
            }
        }

        final void check(final IIII_Result r) {
            final long rest = finish();
            r.r3 = (int) rest;
            r.r4 = StackAbaOracle.eachOnce(rest, r.r1 / 10, r.r1 % 10, r.r2) ? 0 : 2;
        }
    }

    /**
     * BROKEN on purpose: LRMalloc's push before the 2019 fix, which computes the counter once,
     * outside its retry loop. A push whose first CAS fails installs a counter older than the head's,
     * so a later head can repeat an earlier (counter, index) pair, and a stalled pop's CAS succeeds on
     * a stack that has changed under it (see {@link CounterBase}).
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: an interleaving, not a reordering): LRMalloc counter stack, push computes "
            + "the counter once: a stalled pop's CAS succeeds after ABA")
    @Outcome(id = ".*, 0", expect = ACCEPTABLE, desc = "a, b and c each held once or on the stack once")
    @Outcome(id = "13, 2, 3, 2", expect = ACCEPTABLE_INTERESTING,
            desc = "ABA: 1's push retried with a stale counter, the head came back to (5, b) with b's link changed, "
                    + "and 2's stalled CAS installed c, which 1 holds: c is held and on the stack")
    @Outcome(id = ".*, 2", expect = ACCEPTABLE_INTERESTING, desc = "another corruption caused by the stale counter")
    @Outcome(expect = FORBIDDEN, desc = "not expected even from the broken model")
    @State
    public static class BrokenStaleCounterModel extends CounterBase {
        static final Descriptors DS = new Descriptors();

        public BrokenStaleCounterModel() {
            super(DS, true);
        }

        @Actor
        public void slowPusher1(final IIII_Result r) {
            slowPusher(r);
        }

        @Actor
        public void stalledPopper2(final IIII_Result r) {
            stalledPopper(r);
        }

        @Arbiter
        public void verdict(final IIII_Result r) {
            check(r);
        }
    }

    /**
     * Control for the stale-counter model: the same actors and stalls, with LRMalloc's fixed push,
     * which recomputes the counter from the head it read in the same try. Nothing is corrupted.
     */
    @JCStressTest
    @Description("LRMalloc counter stack, counter recomputed in every try: nothing held twice or lost")
    @Outcome(id = ".*, 0", expect = ACCEPTABLE, desc = "a, b and c each held once or on the stack once")
    @Outcome(expect = FORBIDDEN, desc = "a descriptor held twice or lost (ABA: 13, 2, 3, 2), a cycle, or a stranger")
    @State
    public static class CounterModel extends CounterBase {
        static final Descriptors DS = new Descriptors();

        public CounterModel() {
            super(DS, false);
        }

        @Actor
        public void slowPusher1(final IIII_Result r) {
            slowPusher(r);
        }

        @Actor
        public void stalledPopper2(final IIII_Result r) {
            stalledPopper(r);
        }

        @Arbiter
        public void verdict(final IIII_Result r) {
            check(r);
        }
    }
}
