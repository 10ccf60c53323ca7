package dev.limbo.reclaim.internal;

import dev.limbo.core.Region;
import dev.limbo.core.Words;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A lock-free stack of {@link BlockLayout blocks}: the shared part of DEBRA's pool (§4.6), through
 * which threads hand whole blocks of free records to each other.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm: Treiber's stack (IBM RJ 5118, 1986) with a version tag in the head word, as the
 * lrmalloc digest §8 and the DEBRA digest §8.1 prescribe for off-heap nodes (no double-wide CAS).
 *
 * Invariants: head = tag:27 | (block >>> 3):37 (INDEX_BITS); the blocks reachable from head form
 * a chain through their NEXT words, each pushed once and not popped since. The tag grows by one on
 * every successful CAS, so a head word never repeats within 2^27 updates.
 *
 * Linearization points: push - its successful CAS (1); pop - its successful CAS (1), or the load
 * (2) that saw an empty stack.
 *
 * Progress: lock-free; a CAS fails only because another push or pop succeeded.
 *
 * Memory ordering: (1) the head CAS is volatile: a push's plain NEXT store and the block's
 * contents happen-before the CAS, and a pop's acquiring load (2) of the head that the CAS wrote
 * sees them. (3) the pop's plain load of NEXT may read a block that another thread popped and
 * reused meanwhile; the value is then garbage, but the CAS (1) fails because the tag changed.
 *
 * Reclamation and ABA: a popped block may be reused or freed to the allocator at once. A stale
 * popper then reads region memory that stays mapped (a stale read, never a crash), and its CAS
 * fails on the tag: A popped, B popped, A pushed back leaves head = (A, tag + 3), not (A, tag).
 * }</pre>
 */
public final class BlockStack {

    private static final int INDEX_BITS = 37; // block >>> 3 addresses a region of up to 1 TiB
    private static final long INDEX_MASK = (1L << INDEX_BITS) - 1;
    private static final long TAG_ONE = 1L << INDEX_BITS;
    private static final VarHandle HEAD;

    static {
        if (Region.global().size() > (INDEX_MASK << 3)) {
            throw new ExceptionInInitializerError("block stack heads address at most 1 TiB; the region is "
                    + Region.global().size() + " bytes (-D" + Region.SIZE_PROPERTY + ")");
        }
        try {
            HEAD = MethodHandles.lookup().findVarHandle(BlockStack.class, "head", long.class)
                    .withInvokeExactBehavior();
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused") // accessed through HEAD
    private volatile long head;

    /** Pushes a detached block. */
    public void push(final long block) {
        long h;
        do {
            h = (long) HEAD.getAcquire(this); // (2)
            Words.sp(block + BlockLayout.NEXT, (h & INDEX_MASK) << 3);
        } while (!(boolean) HEAD.compareAndSet(this, h, next(h, block))); // (1)
    }

    /** Pops a block, or returns 0 if the stack is empty. */
    public long pop() {
        long h;
        long block;
        do {
            h = (long) HEAD.getAcquire(this); // (2)
            block = (h & INDEX_MASK) << 3;
            if (block == 0) {
                return 0;
            }
        } while (!(boolean) HEAD.compareAndSet(this, h, next(h, Words.lp(block + BlockLayout.NEXT)))); // (3), (1)
        Words.sp(block + BlockLayout.NEXT, 0);
        return block;
    }

    /** Whether the stack looked empty at some moment during the call. */
    public boolean isEmpty() {
        return ((long) HEAD.getAcquire(this) & INDEX_MASK) == 0;
    }

    /** The head word after a CAS that installs {@code block}: the tag is incremented, recomputed per retry. */
    private static long next(final long head, final long block) {
        return ((head & ~INDEX_MASK) + TAG_ONE) | (block >>> 3);
    }
}
