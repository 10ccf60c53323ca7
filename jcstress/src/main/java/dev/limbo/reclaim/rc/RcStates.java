package dev.limbo.reclaim.rc;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Words;

/**
 * The shared domain of the {@link Cdrc} jcstress tests and the observer that lets an arbiter tell
 * whether a counted object died without reading a freed block.
 *
 * <p>jcstress creates states by the thousand, so every state of a run shares one {@link Cdrc} over
 * one checked {@link LimboAllocator} (a double free throws) and allocates only its own small
 * objects, which die through the domain or, at the latest, when the arbiter drops its observer.
 *
 * <p>The observer is a weak reference ({@link Cdrc#weakOf}) taken when the object is built: it keeps
 * the block, not the object, so the object dies as it would without it (the strong count alone
 * decides), but its header stays readable: a dead object's {@link Cdrc#count} reads 0 and its
 * {@link Cdrc#weakCount} drops from 2 to 1, and an increment of it throws instead of writing into
 * a freed block. The arbiter reads both, then drops the observer; the block is freed by whichever
 * of that drop and the death comes last.
 */
final class RcStates {

    /** The allocator of every counted object of the tests. */
    static final LimboAllocator ALLOCATOR = LimboAllocator.builder().checked(true).build();
    /** The domain every state shares. */
    static final Cdrc RC = new Cdrc(ALLOCATOR);
    /** A leaf's payload word: the stamp it was built with. */
    static final long PAYLOAD = Cdrc.HEADER;
    /** A leaf: the header and a payload word. */
    static final int LEAF = RC.register(new RcType("leaf", Cdrc.HEADER + Long.BYTES));
    /** A node's strong counted field. */
    static final long NEXT = Cdrc.HEADER;
    /** A node: the header and one strong counted field, {@link #NEXT}. */
    static final int NODE = RC.register(new RcType("node", Cdrc.HEADER + Long.BYTES, NEXT));

    /** Final verdict: the object died (count 0, only the observer's weak count left). */
    static final int DIED = 0;
    /** Final verdict: the object lives with count 1 (one reference or one delayed retire left). */
    static final int ONE_LEFT = 1;
    /** Final verdict: any other count, or a weak count that contradicts it. */
    static final int BAD = 9;

    /** Spin waits in {@link #stall()}. */
    private static final int STALL_SPINS = 32;

    private RcStates() {
    }

    /**
     * A broken variant's stall inside its race window (about a microsecond of spin waits), so that
     * the other actor's store and flush (a scan: a fence, every announcement, a sort) fit in it
     * often enough for every run to show the bug. The correct variants have no window to widen.
     */
    static void stall() {
        for (int i = 0; i < STALL_SPINS; i++) {
            Thread.onSpinWait();
        }
    }

    /** A new leaf holding {@code stamp}, with count 1 owned by the caller. */
    static long leaf(final long stamp) {
        final long p = RC.allocate(LEAF);
        Words.sp(p + PAYLOAD, stamp);
        return p;
    }

    /**
     * Reads what is left of the observed object {@code p}, then drops the observer (arbiter, when no
     * actor runs).
     *
     * @return {@link #DIED}, {@link #ONE_LEFT} or {@link #BAD}
     */
    static int finalCount(final long p) {
        final long count = RC.count(p);
        final long weak = RC.weakCount(p);
        RC.releaseWeak(p);
        if (count == 0 && weak == 1) {
            return DIED;
        }
        return count == 1 && weak == 2 ? ONE_LEFT : BAD;
    }
}
