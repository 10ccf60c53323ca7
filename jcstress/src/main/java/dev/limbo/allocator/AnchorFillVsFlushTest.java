package dev.limbo.allocator;

import dev.limbo.allocator.internal.Anchor;
import dev.limbo.allocator.internal.DescriptorLayout;
import dev.limbo.core.Words;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;

import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;

import static dev.limbo.allocator.Superblocks.MAX;
import static dev.limbo.allocator.Superblocks.SC;
import static dev.limbo.allocator.Superblocks.SIZE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * Flush versus fill on one superblock anchor (lrmalloc digest §8, item 1): a flush splices a run
 * onto the free list with a CAS while a fill takes the whole list with a CAS. Every block must end
 * up in exactly one place.
 *
 * <p>Setup (constructor): cache A holds all 4 blocks of a new superblock
 * of the 16 KiB class (FULL, on no partial stack). Actor {@code flusher}: A returns one block
 * ({@code flushList}: FULL to PARTIAL, and the descriptor is pushed on the partial stack, where fills
 * can now find it), then two more in one run (a PARTIAL to PARTIAL anchor CAS that races with fills),
 * keeping its last block. Actor {@code filler}: cache B calls {@code fill} on the same class. The
 * first one-block flush is needed for a race on the anchor at all: while a superblock is FULL it is
 * on no stack, so no fill can reach its anchor before the flush that publishes it.
 *
 * <p>The partial stack is shared by all states in flight (one allocator per test), so a fill may
 * take another state's superblock, and another state's fill may take this one's. The filler keeps a
 * list taken from its own state's superblock; a list of another state's superblock goes to a
 * registry that the owning state's arbiter reads (a fill never takes from a superblock whose
 * arbiter has run: all of them are EMPTY by then); a new superblock (the stack was empty) is given
 * back at once.
 *
 * <p>Arbiter: counts each block of the superblock in A's list, B's list, the other states' lists
 * and the anchor's free list (walked from avail through relative links for count steps). Result:
 * (blocks B took, blocks other states' fills took, anchor count, flags), flags 0 when every block is
 * in exactly one place and the anchor's state matches its count; 1 = a block is in two places,
 * 2 = a block is nowhere, 4 = a list leaves the superblock, 8 = the state contradicts the count.
 * The arbiter then returns every block, so the superblock goes EMPTY and back to the page allocator.
 */
public final class AnchorFillVsFlushTest {

    private AnchorFillVsFlushTest() {
    }

    /** Shared setup, actors' bodies and arbiter; the flush is supplied by each variant. */
    abstract static class Base {
        final LimboAllocator alloc;
        final ConcurrentHashMap<Integer, long[]> taken;
        final ThreadCache a;
        final ThreadCache b;
        final int d;
        final long sb;
        int bFrom;

        Base(final LimboAllocator alloc, final ConcurrentHashMap<Integer, long[]> taken) {
            this.alloc = alloc;
            this.taken = taken;
            this.a = new ThreadCache(alloc, null);
            this.b = new ThreadCache(alloc, null);
            this.d = Superblocks.fresh(alloc, a);
            this.sb = Superblocks.superblock(alloc, d);
        }

        /** Returns the {@code k}-block run {@code head..tail} (linked) of this state's superblock. */
        abstract void flush(long head, long tail, int k);

        final void flusher() {
            final long first = a.head(SC);
            final long second = Superblocks.next(first);
            a.setList(SC, second, MAX - 1);
            flush(first, first, 1);
            final long third = Superblocks.next(second);
            final long kept = Superblocks.next(third);
            a.setList(SC, kept, MAX - 3);
            flush(second, third, 2);
        }

        final void filler() {
            final int from = alloc.heap.fill(b, SC);
            if (from == d) {
                bFrom = from;
                return;
            }
            final int n = b.count(SC);
            final long head = b.head(SC);
            b.setList(SC, 0, 0);
            if (n == MAX) {
                alloc.heap.flushList(head, n, SC); // a new superblock: the partial stack was empty
            } else {
                taken.merge(from, Superblocks.list(head, n), Base::concat);
            }
        }

        final void arbiter(final IIII_Result r) {
            final int[] hits = new int[MAX];
            int flags = Superblocks.markList(sb, a.head(SC), a.count(SC), hits);
            final int own = bFrom == d ? b.count(SC) : 0;
            if (own > 0) {
                flags |= Superblocks.markList(sb, b.head(SC), own, hits);
            }
            final long[] others = taken.remove(d);
            if (others != null) {
                flags |= Superblocks.mark(sb, others, hits);
            }
            final long anchor = Superblocks.anchor(alloc, d);
            flags |= Superblocks.markAnchor(sb, anchor, hits);
            flags |= Superblocks.verdict(hits);
            r.r1 = own;
            r.r2 = others == null ? 0 : others.length;
            r.r3 = Anchor.count(anchor);
            r.r4 = flags;
            a.setList(SC, 0, 0);
            b.setList(SC, 0, 0);
            Superblocks.giveBack(alloc, d);
        }

        private static long[] concat(final long[] x, final long[] y) {
            final long[] z = Arrays.copyOf(x, x.length + y.length);
            System.arraycopy(y, 0, z, x.length, y.length);
            return z;
        }
    }

    /**
     * The allocator's own {@code flushList}/{@code flushRun} against its own {@code fill}.
     */
    @JCStressTest
    @Description("flushList(1); flushList(2) by A || fill by B on the same 16 KiB class: every block in one place")
    @Outcome(id = "0, 0, 3, 0", expect = ACCEPTABLE,
            desc = "no fill took from A's superblock (B filled from another): all 3 returned blocks on the anchor's list")
    @Outcome(id = "1, 0, 2, 0", expect = ACCEPTABLE,
            desc = "B's fill CAS landed between A's flushes and took the 1-block list; A's second flush "
                    + "found FULL, made it PARTIAL with 2 and pushed it again")
    @Outcome(id = "3, 0, 0, 0", expect = ACCEPTABLE,
            desc = "B's fill CAS landed after A's second flush and took all 3 blocks")
    @Outcome(id = "0, 1, 2, 0", expect = ACCEPTABLE,
            desc = "another state's fill took the 1-block list between A's flushes; the 2-block run stayed")
    @Outcome(id = "0, 3, 0, 0", expect = ACCEPTABLE,
            desc = "other states' fills took all 3 blocks (after A's second flush, or 1 then 2)")
    @Outcome(id = "2, 1, 0, 0", expect = ACCEPTABLE,
            desc = "another state's fill took the first block; B then took A's 2-block run")
    @Outcome(id = "1, 2, 0, 0", expect = ACCEPTABLE,
            desc = "B took the first block; another state's fill then took A's 2-block run")
    @Outcome(expect = FORBIDDEN,
            desc = "a block of A's superblock is lost or in two places, or the anchor's list or state is corrupt")
    @State
    public static class FillVsFlush extends Base {
        static final LimboAllocator ALLOC = LimboAllocator.builder().checked(false).build();
        static final ConcurrentHashMap<Integer, long[]> TAKEN = new ConcurrentHashMap<>();

        public FillVsFlush() {
            super(ALLOC, TAKEN);
        }

        @Override
        void flush(final long head, final long tail, final int k) {
            alloc.heap.flushList(head, k, SC);
        }

        @Actor
        public void flusherA() {
            flusher();
        }

        @Actor
        public void fillerB() {
            filler();
        }

        @Arbiter
        public void check(final IIII_Result r) {
            arbiter(r);
        }
    }

    /**
     * BROKEN on purpose: A's flushes update the anchor with a volatile load and, after computing the
     * new value, a volatile store instead of a CAS (the rest is {@code flushRun} as written). A fill
     * whose CAS lands between the load and the store takes the 1-block list, and the store then puts
     * that block back on the anchor's list: one block is in two places (flags 1). This is a lost
     * update, an atomicity bug rather than a reordering, so any hardware shows it, x86 included: a
     * quick run on 2 x86 cores shows it in about 1% of the states, with no widening of the window
     * (mostly through another state's fill, which pops the descriptor while A is between its load
     * and its store). Such a superblock ends PARTIAL on no stack, so the arbiter's clean-up leaks its
     * descriptor (never reused); at ~1% of the states that stays far below the descriptor table's
     * capacity within one fork.
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: a lost update, not a reordering): flush by volatile load + volatile store of the anchor "
            + "instead of a CAS || fill: a fill between them is overwritten, a block in two places")
    @Outcome(id = "0, 0, 3, 0", expect = ACCEPTABLE, desc = "no fill took from A's superblock")
    @Outcome(id = "1, 0, 2, 0", expect = ACCEPTABLE, desc = "B took the 1-block list before A's second load")
    @Outcome(id = "3, 0, 0, 0", expect = ACCEPTABLE, desc = "B took all 3 blocks after A's second store")
    @Outcome(id = "0, 1, 2, 0", expect = ACCEPTABLE, desc = "another state's fill took the 1-block list before A's second load")
    @Outcome(id = "0, 3, 0, 0", expect = ACCEPTABLE, desc = "other states' fills took all 3 blocks")
    @Outcome(id = "2, 1, 0, 0", expect = ACCEPTABLE, desc = "another state's fill took the first block; B took the run")
    @Outcome(id = "1, 2, 0, 0", expect = ACCEPTABLE, desc = "B took the first block; another state's fill took the run")
    @Outcome(id = "1, 0, 3, 1", expect = ACCEPTABLE_INTERESTING,
            desc = "B's fill CAS landed between A's load and store: B holds the first block and A's store "
                    + "put it back on the anchor's list (count 3): the block is in two places")
    @Outcome(id = "0, 1, 3, 1", expect = ACCEPTABLE_INTERESTING,
            desc = "another state's fill took the first block between A's load and store, which put it back: "
                    + "the block is in two places")
    @Outcome(id = ".*, [1-9][0-9]*", expect = ACCEPTABLE_INTERESTING,
            desc = "some other loss or duplication caused by the missing CAS")
    @Outcome(expect = FORBIDDEN, desc = "not expected even from the broken flush")
    @State
    public static class BrokenPlainStoreFlush extends Base {
        static final LimboAllocator ALLOC = LimboAllocator.builder().checked(false).build();
        static final ConcurrentHashMap<Integer, long[]> TAKEN = new ConcurrentHashMap<>();

        public BrokenPlainStoreFlush() {
            super(ALLOC, TAKEN);
        }

        /** {@code flushRun} with its anchor CAS replaced by a load and a store (the bug under test). */
        @Override
        void flush(final long head, final long tail, final int k) {
            final long desc = Superblocks.desc(alloc, d);
            final int headIndex = (int) ((head - sb) / SIZE);
            final long old = Words.lv(desc + DescriptorLayout.ANCHOR);
            final int count = Anchor.count(old) + k;
            if (Anchor.count(old) > 0) {
                Words.sp(tail, sb + (long) Anchor.avail(old) * SIZE - (tail + SIZE));
            }
            final int state = count == MAX ? Anchor.EMPTY : Anchor.PARTIAL; // never EMPTY: A keeps a block
            Words.sv(desc + DescriptorLayout.ANCHOR, Anchor.pack(state, headIndex, count)); // BUG: not a CAS
            if (Anchor.state(old) == Anchor.FULL) {
                alloc.heap.descriptors.pushPartial(SC, d);
            }
        }

        @Actor
        public void flusherA() {
            flusher();
        }

        @Actor
        public void fillerB() {
            filler();
        }

        @Arbiter
        public void check(final IIII_Result r) {
            arbiter(r);
        }
    }
}
