package dev.limbo.reclaim;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Words;
import dev.limbo.reclaim.internal.BlockLayout;
import dev.limbo.reclaim.internal.BlockStack;
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
 * ABA on {@link BlockStack}, the shared block stack of the record pool (DEBRA §4.6): a pop that read
 * head A and A's NEXT word B, then stalled while others popped A, popped B and pushed A back, must
 * not install the stale B. The version tag in the head word makes its CAS fail (BlockStack's notes,
 * "Reclamation and ABA").
 *
 * <p>Every state starts from a stack a, b, c (a on top) of three off-heap blocks of
 * {@link BlockLayout#SIZE} bytes. Actor 1 pops once; actor 2 pops x, pops y and pushes x back (the ABA
 * maker); in {@link TaggedThreeActors} actor 3 also pops once. The arbiter drains what is left and
 * reports (actor 1's pop, 10 * x + y, [actor 3's pop,] the rest top first as digits, verdict), with
 * a = 1, b = 2, c = 3 and 0 for an empty pop. Verdict 0: one of the sequential orders of the
 * operations (4 with two actors, 20 with three) gives exactly this result (linearizable); 1: each
 * block is held once or left on the stack, but no sequential order explains it; 2: a block is held
 * twice or lost, the stack cycles, or a pop returned a block that was never pushed. ABA needs only
 * the first two actors; the three-actor variant needs a machine with at least 3 CPUs (jcstress skips
 * it on 2).
 *
 * <p>Each state has its own stack (a {@link BlockStack} is one object with its head word; nothing in
 * it had to change) and leases its three blocks from a pool; the arbiter gives them back after its
 * drain, whatever the actors left (the state's stack is dropped with the state, so a corrupted one
 * cannot reach the blocks again). The pool grows, from one static {@link LimboAllocator}, only when
 * more states are alive at once than ever before, so the run's off-heap memory stays bounded by
 * the largest batch.
 *
 * <p>The broken variant is a model: the same push and pop over the same NEXT words of the same
 * blocks, with an untagged head (block >>> 3) in an {@link AtomicLong}, and actor 1's pop stalled
 * between reading NEXT and its CAS by {@value #PAUSE_SPINS} {@code onSpinWait}s (a stand-in for a
 * preemption). Like {@link BlockStack#pop}, the model's pop clears the popped block's NEXT, so the
 * typical ABA result is (1, 12, 2, 2): actor 2 cleared b's NEXT when it popped b, actor 1's stale
 * CAS installs b, which actor 2 holds, and c is lost. The control model has the same stall and a
 * tagged head, showing that the tag, not the timing, is what keeps the stack correct. ABA is an
 * interleaving bug, not a reordering: any hardware shows it, x86 included.
 */
public final class BlockStackAbaTest {

    /** Spins of the stalled pop in the models. */
    static final int PAUSE_SPINS = 100;

    private BlockStackAbaTest() {
    }

    /** Three blocks a, b, c, leased by one state at a time. */
    static final class Blocks {
        private static final LimboAllocator ALLOCATOR = LimboAllocator.create();
        private static final ConcurrentLinkedQueue<Blocks> POOL = new ConcurrentLinkedQueue<>();

        final long a;
        final long b;
        final long c;

        private Blocks() {
            this.a = ALLOCATOR.allocate(BlockLayout.SIZE);
            this.b = ALLOCATOR.allocate(BlockLayout.SIZE);
            this.c = ALLOCATOR.allocate(BlockLayout.SIZE);
        }

        /** Three blocks from the pool, or three new ones. */
        static Blocks lease() {
            final Blocks blocks = POOL.poll();
            return blocks != null ? blocks : new Blocks();
        }

        /** Returns the blocks; the caller's stack must not be used again. */
        void giveBack() {
            POOL.add(this);
        }

        int letter(final long block) {
            return block == 0 ? 0 : block == a ? 1 : block == b ? 2 : block == c ? 3 : 9;
        }
    }

    /** A state of the tests of the real stack: its own {@link BlockStack}, stacked a, b, c. */
    abstract static class RealBase {
        final Blocks blocks = Blocks.lease();
        final BlockStack stack = new BlockStack();

        RealBase() {
            stack.push(blocks.c);
            stack.push(blocks.b);
            stack.push(blocks.a);
        }

        final int pop() {
            return blocks.letter(stack.pop());
        }

        /** Pops x, pops y, pushes x back; returns 10 * x + y as letters. */
        final int popPopPush() {
            final long x = stack.pop();
            final long y = stack.pop();
            if (x != 0) {
                stack.push(x);
            }
            return 10 * blocks.letter(x) + blocks.letter(y);
        }

        /** Pops the rest (top first, as digits; -1 for more than 6, a cycle) and gives the blocks back. */
        final long drain() {
            long rest = 0;
            int n = 0;
            for (long d = stack.pop(); d != 0; d = stack.pop()) {
                if (++n > 6) {
                    rest = -1;
                    break;
                }
                rest = rest * 10 + blocks.letter(d);
            }
            blocks.giveBack();
            return rest;
        }
    }

    /**
     * The real {@link BlockStack#pop}/{@link BlockStack#push}, two actors: pop against the ABA maker
     * pop, pop, push. With the tag every result is linearizable. Result: (actor 1's pop, 10 * x + y,
     * rest, verdict).
     */
    @JCStressTest
    @Description("BlockStack a,b,c: pop || pop x, pop y, push x: linearizable, no block popped twice or lost")
    @Outcome(id = "1, 23, 2, 0", expect = ACCEPTABLE, desc = "1 pops a; 2 pops b, pops c, pushes b")
    @Outcome(id = "2, 13, 1, 0", expect = ACCEPTABLE, desc = "2 pops a; 1 pops b; 2 pops c, pushes a")
    @Outcome(id = "3, 12, 1, 0", expect = ACCEPTABLE, desc = "2 pops a, pops b; 1 pops c; 2 pushes a")
    @Outcome(id = "1, 12, 3, 0", expect = ACCEPTABLE, desc = "2 pops a, pops b, pushes a; 1 pops a")
    @Outcome(id = ".*, 1", expect = FORBIDDEN, desc = "every block once, but no sequential order gives this result")
    @Outcome(expect = FORBIDDEN,
            desc = "a block popped twice or lost (ABA, e.g. 1, 12, 2, 2: a stale CAS installed b), a cycle, or a stranger")
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
    @Description("BlockStack a,b,c: pop || pop x, pop y, push x || pop: linearizable, no block popped twice or lost")
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
    @Outcome(id = ".*, 1", expect = FORBIDDEN, desc = "every block once, but no sequential order gives this result")
    @Outcome(expect = FORBIDDEN, desc = "a block popped twice or lost (ABA), a cycle, or a stranger")
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
     * A model of {@link BlockStack}: the same push and pop over the blocks' NEXT words, with the head
     * in an {@link AtomicLong}: tag:27 | (block >>> 3):37 as in {@link BlockStack} when tagged, the
     * bare block >>> 3 otherwise. {@link #pop} can stall between reading NEXT and its CAS.
     */
    static final class ModelStack {
        private static final int INDEX_BITS = 37;
        private static final long INDEX_MASK = (1L << INDEX_BITS) - 1;
        private static final long TAG_ONE = 1L << INDEX_BITS;

        final boolean tagged;
        final AtomicLong head = new AtomicLong();

        ModelStack(final boolean tagged) {
            this.tagged = tagged;
        }

        private long next(final long h, final long block) {
            return tagged ? ((h & ~INDEX_MASK) + TAG_ONE) | (block >>> 3) : block >>> 3;
        }

        static long block(final long h) {
            return (h & INDEX_MASK) << 3;
        }

        void push(final long block) {
            for (;;) {
                final long h = head.get();
                Words.sp(block + BlockLayout.NEXT, block(h));
                if (head.compareAndSet(h, next(h, block))) {
                    return;
                }
            }
        }

        long pop(final int pauseSpins) {
            for (;;) {
                final long h = head.get();
                final long block = block(h);
                if (block == 0) {
                    return 0;
                }
                final long after = Words.lp(block + BlockLayout.NEXT);
                for (int i = 0; i < pauseSpins; i++) {
                    Thread.onSpinWait(); // the stall of a preempted popper
                }
                if (head.compareAndSet(h, next(h, after))) {
                    Words.sp(block + BlockLayout.NEXT, 0);
                    return block;
                }
            }
        }

        /** The contents top first as letters (without popping), or -1 if the walk exceeds 6. */
        long rest(final Blocks blocks) {
            long rest = 0;
            int n = 0;
            for (long d = block(head.get()); d != 0; d = Words.lp(d + BlockLayout.NEXT)) {
                if (++n > 6) {
                    return -1;
                }
                rest = rest * 10 + blocks.letter(d);
            }
            return rest;
        }
    }

    /** A state of the model tests: leased blocks, stacked a, b, c on a model stack. */
    abstract static class ModelBase {
        final Blocks blocks = Blocks.lease();
        final ModelStack stack;

        ModelBase(final boolean tagged) {
            this.stack = new ModelStack(tagged);
            stack.push(blocks.c);
            stack.push(blocks.b);
            stack.push(blocks.a);
        }

        /** Actor 1: a pop that stalls between reading NEXT and its CAS. */
        final void popStalled(final IIII_Result r) {
            r.r1 = blocks.letter(stack.pop(PAUSE_SPINS));
        }

        /** Actor 2: pops x, pops y, pushes x back. */
        final void popPopPush(final IIII_Result r) {
            final long x = stack.pop(0);
            final long y = stack.pop(0);
            if (x != 0) {
                stack.push(x);
            }
            r.r2 = 10 * blocks.letter(x) + blocks.letter(y);
        }

        final void arbiter(final IIII_Result r) {
            final long rest = stack.rest(blocks);
            r.r3 = (int) rest;
            r.r4 = StackAbaOracle.verdict2(r.r1, r.r2, rest);
            blocks.giveBack();
        }
    }

    /**
     * BROKEN on purpose: the model with an untagged head. Actor 1 reads head a and a's NEXT b, stalls;
     * actor 2 pops a, pops b (clearing b's NEXT), pushes a (a is on top again, now linked to c);
     * actor 1's CAS sees a and installs b, which actor 2 holds: b is both held and on the stack, and
     * c is lost.
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: an interleaving, not a reordering): untagged model of BlockStack a,b,c: "
            + "stalled pop || pop x, pop y, push x: ABA, the stale CAS installs a popped block")
    @Outcome(id = "1, 23, 2, 0", expect = ACCEPTABLE, desc = "1 pops a; 2 pops b, pops c, pushes b")
    @Outcome(id = "2, 13, 1, 0", expect = ACCEPTABLE, desc = "2 pops a; 1 pops b; 2 pops c, pushes a")
    @Outcome(id = "3, 12, 1, 0", expect = ACCEPTABLE, desc = "2 pops a, pops b; 1 pops c; 2 pushes a")
    @Outcome(id = "1, 12, 3, 0", expect = ACCEPTABLE, desc = "2 pops a, pops b, pushes a; 1 pops a")
    @Outcome(id = "1, 12, 2, 2", expect = ACCEPTABLE_INTERESTING,
            desc = "ABA: 1 read a->b and stalled; 2 popped a, popped b, pushed a; 1's CAS saw a and installed b: "
                    + "b is held by 2 and on the stack, c is lost")
    @Outcome(id = ".*, [12]", expect = ACCEPTABLE_INTERESTING, desc = "another corruption caused by ABA")
    @Outcome(expect = FORBIDDEN, desc = "not expected even from the untagged model")
    @State
    public static class BrokenUntaggedModel extends ModelBase {
        public BrokenUntaggedModel() {
            super(false);
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
     * {@link BlockStack}. Nothing is corrupted: the stale CAS fails and retries.
     */
    @JCStressTest
    @Description("tagged model of BlockStack a,b,c: stalled pop || pop x, pop y, push x: linearizable")
    @Outcome(id = "1, 23, 2, 0", expect = ACCEPTABLE, desc = "1 pops a; 2 pops b, pops c, pushes b")
    @Outcome(id = "2, 13, 1, 0", expect = ACCEPTABLE, desc = "2 pops a; 1 pops b; 2 pops c, pushes a")
    @Outcome(id = "3, 12, 1, 0", expect = ACCEPTABLE, desc = "2 pops a, pops b; 1 pops c; 2 pushes a")
    @Outcome(id = "1, 12, 3, 0", expect = ACCEPTABLE, desc = "2 pops a, pops b, pushes a; 1 pops a")
    @Outcome(expect = FORBIDDEN, desc = "a block popped twice or lost (ABA: 1, 12, 2, 2), or a non-linearizable result")
    @State
    public static class TaggedModel extends ModelBase {
        public TaggedModel() {
            super(true);
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
}
