package dev.limbo.reclaim;

import dev.limbo.core.Words;
import dev.limbo.core.internal.Native;
import dev.limbo.stress.WordSlots;
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
 * A QSBR quiescent state against the scan that frees ({@link QuiescentStateReclamation}'s notes,
 * (Q1)-(Q3)). A scanner may free record r once every thread in view passed a quiescent state (QS)
 * after r's unlink; it learns that a thread passed one in one of two ways, and each is a race:
 *
 * <ul>
 *   <li><b>The QS publishes the thread's earlier reads</b> ({@link QuiescentStateReleases}): the
 *       thread reads r's contents in its section, then, at the QS, release-stores its new local
 *       epoch (Q1); the scanner acquire-loads the word (4) and, seeing the new epoch, frees r (the
 *       allocator writes into the block). The reader must never read what the free wrote. Its
 *       broken variant {@link BrokenQuiescentStateOpaque} publishes the QS with an opaque store,
 *       which orders nothing before it: the memory model allows the section's read to float past
 *       the QS. x86 keeps a load before a later store, and HotSpot does not sink the load here, so
 *       x86 cannot show it (POWER or ARM could).</li>
 *   <li><b>Idle inference</b> ({@link IdleInference}): a thread that never passes a QS but is
 *       outside every section counts as having passed one. Its pin stores nesting = 1 (C1) with
 *       no fence (only a compiler barrier) and then reads the structure; the scanner unlinks r,
 *       issues the heavy barrier (8) and acquire-loads the nesting (Q3). The store-buffering pair:
 *       either the scanner sees the thread in its section, or the thread's read follows the unlink
 *       and misses r. {@link BrokenIdleWithoutBarrier} has the scanner fence only itself, and x86
 *       shows the forbidden outcome through the reader's store buffer.</li>
 * </ul>
 *
 * <p>Where the kernel lacks membarrier the scheme falls back to a fence per pin (C2) and a fence
 * in the scanner; the correct variants do the same there.
 */
public final class QuiescentStateVsScanTest {

    /** The local epoch a thread publishes at its QS (in view, active). */
    static final long NEXT_EPOCH = 6L << 2 | 1;
    /** r's contents while it is live, and what the allocator writes into it once it is freed. */
    static final long LIVE = 0x11;
    static final long POISON = 0x99;

    static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class).withInvokeExactBehavior();
    static final VarHandle NESTING;

    static {
        try {
            NESTING = MethodHandles.lookup().findVarHandle(Base.class, "nesting", int.class).withInvokeExactBehavior();
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private QuiescentStateVsScanTest() {
    }

    /** A state: record r holding {@link #LIVE}, a cell linking it, the reader's QS word and nesting. */
    abstract static class Base {
        final long node = WordSlots.word(LIVE);
        final long cell = WordSlots.word(node);
        /** The reader's announcement word (its local epoch), a heap array word as in EpochDomain. */
        final long[] word = new long[1];
        /** The reader's section nesting, as Guard's field. */
        @SuppressWarnings("unused") // accessed through NESTING
        int nesting;

        /** The scanner's side of a QS: if the word shows the new epoch, free r; 1 if it freed, 0 if not. */
        final int freeIfPassed() {
            if ((long) WORDS.getAcquire(word, 0) == NEXT_EPOCH) { // (4)
                Words.sp(node, POISON); // the free: the allocator links the block into a free list
                return 1;
            }
            return 0;
        }

        /** 1 if the reader read r's live contents, 2 if it read what the free wrote, 9 for anything else. */
        static int contents(final long v) {
            return v == LIVE ? 1 : v == POISON ? 2 : 9;
        }

        /** 1 if the reader read r through the cell, 0 if it read the unlinked cell, 9 for anything else. */
        final int readerSaw(final long p) {
            return p == node ? 1 : p == 0 ? 0 : 9;
        }

        /** The pin's (C1) and, in the default mode, its (C2): a compiler barrier, no fence. */
        final void pinUnfenced() {
            NESTING.setOpaque(this, 1); // (C1)
            VarHandle.acquireFence(); // (C2): a compiler barrier
        }

        /** The pin's (C1), (C2) as ReclaimDomain does it: no fence where membarrier serves the scanner. */
        final void pin() {
            if (Native.MEMBARRIER) {
                pinUnfenced();
            } else {
                NESTING.setOpaque(this, 1); // (C1)
                VarHandle.fullFence(); // (C2) where the kernel lacks membarrier
            }
        }

        /** 1 if the scanner saw the reader in a section, 0 if idle, 9 for anything else. */
        final int scanNesting() {
            final int n = (int) NESTING.getAcquire(this); // (Q3)
            return n == 1 ? 1 : n == 0 ? 0 : 9;
        }
    }

    /** As the scheme does it: the section's read, then the QS's release store (Q1); acquire (4), then free. */
    @JCStressTest
    @Description("lp(r); sr(word, e') || if la(word) == e' then free(r): a scanner that saw the QS frees r only "
            + "after the reader's read of it")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the reader read r live; the scanner saw the QS and freed r after")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "the scanner looked before the QS and freed nothing")
    @Outcome(id = "2, 1", expect = FORBIDDEN, desc = "the reader read what the free wrote: r was freed under it")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote, or a read of a record nobody freed")
    @State
    public static class QuiescentStateReleases extends Base {
        @Actor
        public void reader(final II_Result r) {
            r.r1 = contents(Words.lp(node)); // a section's plain read of the record
            WORDS.setRelease(word, 0, NEXT_EPOCH); // (Q1): the QS
        }

        @Actor
        public void scanner(final II_Result r) {
            r.r2 = freeIfPassed();
        }
    }

    /**
     * BROKEN on purpose (in the memory model): the QS is an opaque store, which orders nothing
     * before it, so the section's read may pass it and see the free's write.
     */
    @JCStressTest
    @Description("BROKEN (x86 cannot show it: x86 keeps a load before a later store; POWER or ARM could): "
            + "lp(r); opaqueStore(word, e') || if la(word) == e' then free(r): the QS does not publish the read")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the reader read r live; the scanner saw the QS and freed r after")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "the scanner looked before the QS and freed nothing")
    @Outcome(id = "2, 1", expect = ACCEPTABLE_INTERESTING,
            desc = "the read passed the unordered QS: the reader read what the free wrote")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote, or a read of a record nobody freed")
    @State
    public static class BrokenQuiescentStateOpaque extends Base {
        @Actor
        public void reader(final II_Result r) {
            r.r1 = contents(Words.lp(node));
            WORDS.setOpaque(word, 0, NEXT_EPOCH); // no release
        }

        @Actor
        public void scanner(final II_Result r) {
            r.r2 = freeIfPassed();
        }
    }

    /**
     * As the scheme does it: the pin's unfenced (C1) and its read, against an unlink, the heavy
     * barrier (8) (a fence where the kernel lacks membarrier, with fenced pins) and the nesting
     * read (Q3).
     */
    @JCStressTest
    @Description("opaqueStore(nesting, 1); la(cell) || cas(cell, r, 0); membarrier; la(nesting): "
            + "the scanner infers an idle reader only if the reader cannot hold r")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the reader read r; the scanner saw it in its section")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the reader's read followed the unlink; the scanner saw it anyway")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the scan ran before the pin; the reader's read followed the unlink")
    @Outcome(id = "1, 0", expect = FORBIDDEN, desc = "the reader holds r, but the scanner inferred it idle and would free r")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class IdleInference extends Base {
        @Actor
        public void reader(final II_Result r) {
            pin();
            r.r1 = readerSaw(Words.la(cell));
        }

        @Actor
        public void unlinkScan(final II_Result r) {
            Words.cas(cell, node, 0);
            if (Native.MEMBARRIER) {
                Native.membarrier(); // (8)
            } else {
                Words.fullFence(); // pairs with the pins' fence (C2)
            }
            r.r2 = scanNesting();
        }
    }

    /**
     * BROKEN on purpose: the reader pins as in the default mode (no fence), and the scanner fences
     * only itself instead of issuing the heavy barrier: the reader's nesting store can still sit in
     * its store buffer when the scanner reads it, after the reader already read r. x86 shows (1, 0).
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: store buffering): opaqueStore(nesting, 1); la(cell) || cas(cell, r, 0); "
            + "fullFence; la(nesting): without the heavy barrier, idle inference may free r under a reader")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the reader read r; the scanner saw it in its section")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the reader's read followed the unlink; the scanner saw it anyway")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the scan ran before the pin; the reader's read followed the unlink")
    @Outcome(id = "1, 0", expect = ACCEPTABLE_INTERESTING,
            desc = "store buffering: the reader holds r, but the scanner saw it idle and would free r")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class BrokenIdleWithoutBarrier extends Base {
        @Actor
        public void reader(final II_Result r) {
            pinUnfenced(); // (C1), no fence
            r.r1 = readerSaw(Words.la(cell));
        }

        @Actor
        public void unlinkScan(final II_Result r) {
            Words.cas(cell, node, 0);
            Words.fullFence();
            r.r2 = scanNesting();
        }
    }
}
