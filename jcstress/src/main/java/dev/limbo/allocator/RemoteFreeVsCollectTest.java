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

import static dev.limbo.allocator.Superblocks.MAX;
import static dev.limbo.allocator.Superblocks.SC;
import static dev.limbo.allocator.Superblocks.SIZE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * OWNER_RETURN remote frees (mimalloc-style remote lists) racing with the owner: a remote free
 * pushes a block on the owned superblock's remote list with a CAS ({@code pushRemote}), or, once the
 * superblock is abandoned, returns it straight to the anchor ({@code flushRun}, as
 * {@code freeDirect} does); the owner takes the whole remote list with a get-and-set, into its cache
 * ({@code collectRemote}) or back to the anchor when it gives the superblock up ({@code abandon}).
 * No block may be lost or doubled.
 *
 * <p>Setup (constructor): owner cache O fills all 4 blocks of a new superblock of the 16 KiB class,
 * owns it ({@code own}: remote head 0) and hands all four out (its list for the class is empty, as
 * {@code refill} requires before {@code collectRemote}); two of them, x and y, are given to the
 * remote freer, two stay in use. Actor {@code remote} frees x then y; actor {@code owner} collects
 * or abandons. The arbiter counts each block in O's list, the remote list (absolute links,
 * 0-terminated), the anchor's free list and the in-use pair, then gives every block back so that
 * the superblock goes EMPTY. Flags as in {@link AnchorFillVsFlushTest}: 1 = a block in two places,
 * 2 = a block nowhere, 4 = a list leaves the superblock, 8 = a state contradicts a count.
 *
 * <p>The broken variants take the remote list with a volatile load and a plain store where the
 * allocator uses one get-and-set: a push that lands between them is overwritten and its block is
 * lost. That is an atomicity bug, so x86 shows it too.
 */
public final class RemoteFreeVsCollectTest {

    private RemoteFreeVsCollectTest() {
    }

    /** Shared setup, remote free and arbiter pieces. */
    abstract static class Base {
        final LimboAllocator alloc;
        final ThreadCache o;
        final int d;
        final long sb;
        final long x;
        final long y;
        final long[] inUse;

        Base(final LimboAllocator alloc) {
            this.alloc = alloc;
            this.o = new ThreadCache(alloc, null);
            this.d = Superblocks.fresh(alloc, o);
            alloc.heap.own(d);
            o.setCurrent(SC, d);
            this.sb = Superblocks.superblock(alloc, d);
            final long[] blocks = Superblocks.list(o.head(SC), o.count(SC));
            o.setList(SC, 0, 0); // the owner allocated every block
            this.x = blocks[0];
            this.y = blocks[1];
            this.inUse = new long[] {blocks[2], blocks[3]};
        }

        /** A free from another thread, as {@code freeDirect} does it; 1 if it went to the remote list. */
        final int remoteFree(final long p) {
            if (alloc.heap.pushRemote(d, p)) {
                return 1;
            }
            alloc.heap.flushRun(d, p, p, 1, SC);
            return 0;
        }

        final long remoteHead() {
            return Words.lv(Superblocks.desc(alloc, d) + DescriptorLayout.REMOTE_HEAD);
        }

        /** Counts O's list, the in-use blocks and the anchor's list; returns the flags. */
        final int markCacheInUseAnchor(final int[] hits, final long anchor) {
            int flags = Superblocks.markList(sb, o.head(SC), o.count(SC), hits);
            flags |= Superblocks.mark(sb, inUse, hits);
            return flags | Superblocks.markAnchor(sb, anchor, hits);
        }

        /** Gives every block back (O's list, the remote list and the in-use pair) and recycles. */
        final void cleanUp() {
            o.setList(SC, 0, 0);
            o.setCurrent(SC, 0);
            Superblocks.giveBack(alloc, d);
            Superblocks.drainEmpty(alloc);
        }

        /** A 0-terminated absolute list turned into relative links (as the allocator's relink); its length. */
        static int relink(final long list) {
            int n = 1;
            long p = list;
            for (long next = Words.lp(p); next != 0 && n <= MAX; next = Words.lp(p)) {
                Words.sp(p, next - (p + SIZE));
                p = next;
                n++;
            }
            return n;
        }
    }

    /** Shared by the two collect variants: the owner collects once while x and y are freed remotely. */
    abstract static class CollectBase extends Base {
        CollectBase(final LimboAllocator alloc) {
            super(alloc);
        }

        final void free(final IIII_Result r) {
            r.r1 = remoteFree(x) + remoteFree(y);
        }

        final void arbiter(final IIII_Result r) {
            final int[] hits = new int[MAX];
            final long anchor = Superblocks.anchor(alloc, d);
            int flags = markCacheInUseAnchor(hits, anchor);
            final int remote = Superblocks.markRemote(sb, remoteHead(), hits);
            if (remote < 0) {
                flags |= Superblocks.MALFORMED;
            }
            if (Anchor.count(anchor) != 0) {
                flags |= Superblocks.BAD_STATE; // while owned, nothing reaches the anchor
            }
            flags |= Superblocks.verdict(hits);
            r.r3 = remote;
            r.r4 = flags;
            cleanUp();
        }
    }

    /** The allocator's {@code pushRemote} against its {@code collectRemote} (get-and-set to 0). */
    @JCStressTest
    @Description("pushRemote(x); pushRemote(y) || collectRemote by the owner: each block in O's cache or the remote list, once")
    @Outcome(id = "2, 0, 2, 0", expect = ACCEPTABLE, desc = "the owner collected before both pushes; x and y wait on the remote list")
    @Outcome(id = "2, 1, 1, 0", expect = ACCEPTABLE, desc = "the owner collected between the pushes: x in O's cache, y on the remote list")
    @Outcome(id = "2, 2, 0, 0", expect = ACCEPTABLE, desc = "the owner collected after both pushes: x and y in O's cache")
    @Outcome(expect = FORBIDDEN, desc = "a block lost or in two places, a corrupt list, or a block on the anchor of an owned superblock")
    @State
    public static class Collect extends CollectBase {
        static final LimboAllocator ALLOC = LimboAllocator.builder().checked(false).build();

        public Collect() {
            super(ALLOC);
        }

        @Actor
        public void remote(final IIII_Result r) {
            free(r);
        }

        @Actor
        public void owner(final IIII_Result r) {
            r.r2 = alloc.heap.collectRemote(o, SC, d);
        }

        @Arbiter
        public void check(final IIII_Result r) {
            arbiter(r);
        }
    }

    /**
     * BROKEN on purpose: the owner collects with a volatile load of the remote head and a plain store
     * of 0 (the store even when it read 0) instead of one get-and-set. A push between the two is
     * erased: its block is in no list (flags 2).
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: a lost update, not a reordering): pushRemote(x); pushRemote(y) || "
            + "collect by lv(head) then sp(head, 0) instead of a get-and-set: a pushed block is lost")
    @Outcome(id = "2, 0, 2, 0", expect = ACCEPTABLE, desc = "the owner collected before both pushes")
    @Outcome(id = "2, 1, 1, 0", expect = ACCEPTABLE, desc = "the owner collected between the pushes")
    @Outcome(id = "2, 2, 0, 0", expect = ACCEPTABLE, desc = "the owner collected after both pushes")
    @Outcome(id = "2, 0, 1, 2", expect = ACCEPTABLE_INTERESTING,
            desc = "the owner loaded an empty head, x was pushed, the owner's store of 0 erased x: x lost")
    @Outcome(id = "2, 1, 0, 2", expect = ACCEPTABLE_INTERESTING,
            desc = "the owner loaded x, y was pushed on top, the owner's store of 0 erased y: y lost")
    @Outcome(id = "2, 0, 0, 2", expect = ACCEPTABLE_INTERESTING,
            desc = "the owner loaded an empty head, both pushes landed, its store erased both: x and y lost")
    @Outcome(id = ".*, [1-9][0-9]*", expect = ACCEPTABLE_INTERESTING, desc = "another loss caused by the non-atomic take")
    @Outcome(expect = FORBIDDEN, desc = "not expected even from the broken collect")
    @State
    public static class BrokenCollect extends CollectBase {
        static final LimboAllocator ALLOC = LimboAllocator.builder().checked(false).build();

        public BrokenCollect() {
            super(ALLOC);
        }

        @Actor
        public void remote(final IIII_Result r) {
            free(r);
        }

        @Actor
        public void owner(final IIII_Result r) {
            final long field = Superblocks.desc(alloc, d) + DescriptorLayout.REMOTE_HEAD;
            final long list = Words.lv(field);
            Words.sp(field, 0L); // BUG: should be one get-and-set
            if (list == 0) {
                r.r2 = 0;
                return;
            }
            final int n = relink(list);
            o.setList(SC, list, n);
            r.r2 = n;
        }

        @Arbiter
        public void check(final IIII_Result r) {
            arbiter(r);
        }
    }

    /** Shared by the two abandon variants: the owner gives the superblock up while x and y are freed. */
    abstract static class AbandonBase extends Base {
        AbandonBase(final LimboAllocator alloc) {
            super(alloc);
        }

        final void free(final IIII_Result r) {
            r.r1 = remoteFree(x) + remoteFree(y);
        }

        final void arbiter(final IIII_Result r) {
            final int[] hits = new int[MAX];
            final long anchor = Superblocks.anchor(alloc, d);
            int flags = markCacheInUseAnchor(hits, anchor);
            final long head = remoteHead();
            if (head != SuperblockHeap.ABANDONED) {
                flags |= Superblocks.BAD_STATE;
                if (Superblocks.markRemote(sb, head, hits) < 0) {
                    flags |= Superblocks.MALFORMED;
                }
            }
            flags |= Superblocks.verdict(hits);
            r.r2 = Anchor.count(anchor);
            r.r3 = Anchor.state(anchor);
            r.r4 = flags;
            cleanUp();
        }
    }

    /**
     * The allocator's {@code pushRemote} (falling back to {@code flushRun} once abandoned) against its
     * {@code abandon} (get-and-set to ABANDONED, then a flush of the taken list). Both blocks must end
     * on the anchor's list (count 2, PARTIAL = 1) whichever way they went.
     */
    @JCStressTest
    @Description("free(x); free(y) (remote list or anchor) || abandon by the owner: x and y both on the anchor's list")
    @Outcome(id = "0, 2, 1, 0", expect = ACCEPTABLE, desc = "abandon ran first: both frees found ABANDONED and flushed to the anchor")
    @Outcome(id = "1, 2, 1, 0", expect = ACCEPTABLE,
            desc = "x was pushed before abandon, which flushed it; y found ABANDONED and flushed itself")
    @Outcome(id = "2, 2, 1, 0", expect = ACCEPTABLE, desc = "both were pushed before abandon, which flushed both")
    @Outcome(expect = FORBIDDEN, desc = "a block lost or in two places, a corrupt list, or the remote head not ABANDONED")
    @State
    public static class Abandon extends AbandonBase {
        static final LimboAllocator ALLOC = LimboAllocator.builder().checked(false).build();

        public Abandon() {
            super(ALLOC);
        }

        @Actor
        public void remote(final IIII_Result r) {
            free(r);
        }

        @Actor
        public void owner() {
            o.setCurrent(SC, 0);
            alloc.heap.abandon(d);
        }

        @Arbiter
        public void check(final IIII_Result r) {
            arbiter(r);
        }
    }

    /**
     * BROKEN on purpose: abandon with a volatile load of the remote head and a plain store of
     * ABANDONED instead of one get-and-set. A push between them is erased (flags 2).
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: a lost update, not a reordering): free(x); free(y) || "
            + "abandon by lv(head) then sp(head, ABANDONED) instead of a get-and-set: a pushed block is lost")
    @Outcome(id = "0, 2, 1, 0", expect = ACCEPTABLE, desc = "abandon ran first")
    @Outcome(id = "1, 2, 1, 0", expect = ACCEPTABLE, desc = "x was pushed before abandon; y flushed itself")
    @Outcome(id = "2, 2, 1, 0", expect = ACCEPTABLE, desc = "both were pushed before abandon")
    @Outcome(id = "1, 1, 1, 2", expect = ACCEPTABLE_INTERESTING,
            desc = "abandon loaded the head, a push landed, its store of ABANDONED erased that block: lost; "
                    + "the other block reached the anchor")
    @Outcome(id = "2, 1, 1, 2", expect = ACCEPTABLE_INTERESTING,
            desc = "abandon loaded x, y was pushed on top, the store erased y: y lost")
    @Outcome(id = "2, 0, 0, 2", expect = ACCEPTABLE_INTERESTING,
            desc = "abandon loaded an empty head, both pushes landed, the store erased both: x and y lost")
    @Outcome(id = ".*, [1-9][0-9]*", expect = ACCEPTABLE_INTERESTING, desc = "another loss caused by the non-atomic take")
    @Outcome(expect = FORBIDDEN, desc = "not expected even from the broken abandon")
    @State
    public static class BrokenAbandon extends AbandonBase {
        static final LimboAllocator ALLOC = LimboAllocator.builder().checked(false).build();

        public BrokenAbandon() {
            super(ALLOC);
        }

        @Actor
        public void remote(final IIII_Result r) {
            free(r);
        }

        @Actor
        public void owner() {
            o.setCurrent(SC, 0);
            final long field = Superblocks.desc(alloc, d) + DescriptorLayout.REMOTE_HEAD;
            final long list = Words.lv(field);
            Words.sp(field, SuperblockHeap.ABANDONED); // BUG: should be one get-and-set
            if (list != 0) {
                final int n = relink(list);
                long tail = list;
                for (int i = 1; i < n; i++) {
                    tail = Superblocks.next(tail);
                }
                alloc.heap.flushRun(d, list, tail, n, SC);
            }
        }

        @Arbiter
        public void check(final IIII_Result r) {
            arbiter(r);
        }
    }
}
