package dev.limbo.allocator;

import dev.limbo.core.internal.Native;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The two words by which one thread at a time holds a {@link ThreadCache}: the claim word, which a
 * virtual thread takes by a CAS for one call on a striped cache, and which {@link LimboAllocator#trim()}
 * takes on a platform thread's cache to drain it; and the owner's activity mark, which lets
 * trim() tell that the owner of a platform thread's cache is outside its operations (parked,
 * blocked, computing elsewhere) without the owner paying a fence on every operation.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm: an asymmetric Dekker handshake (the pairing of Linux membarrier(2) with program-order
 * marks, as the epoch schemes use it: EpochDomain (2), (3), (8)). The owner, around each operation
 * on its cache, marks itself active (A1), reads the claim word (A2), and clears the mark when done
 * (A3). trim() claims the cache (C1), issues membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) (M), and
 * drains the cache only if it then reads the mark clear (A4). An owner that finds the cache claimed
 * leaves it alone for that operation (the allocator serves it from a striped cache instead), so
 * it never waits for a drain.
 *
 * Invariant: a claimed cache is touched only by its claimer; an unclaimed platform cache only by
 * its owner, between A1 and A3 (or by the thread that adopts or retires it when its owner has
 * died, under the Lifecycle's monitor, which trim's claims are made under as well).
 *
 * Linearization points: claim - the CAS C1; the owner's entry - its read A2 of the unclaimed word.
 *
 * Progress: every method is wait-free; an owner that meets a claim is not blocked by it.
 *
 * Memory ordering:
 *  (C1) tryClaim's CAS 0 -> 1 (volatile; on x86 a locked instruction, a full fence); pairs with
 *      (C2), the release store of 0 in release(): a claimer acquires what the previous holder
 *      wrote to the cache, and (A2) acquires what a draining trim() wrote.
 *  (A1) the owner's opaque store of 1 into active. (A2) its acquire load of the claim word. The
 *      Java memory model does not order a store before a later load of another variable; an
 *      opaque access is a barrier to HotSpot's compilers, so (A2) is not scheduled before (A1), and
 *      the hardware may still hold (A1) in its store buffer: (M) carries the whole fence. Where the
 *      kernel has no membarrier, or -Dlimbo.alloc.drainIdleCaches=false, ENABLED is false: no
 *      marks, no claims of platform caches, and trim() only asks such caches to drain themselves.
 *  (M)  after (C1) and before (A4): when membarrier returns, every thread of the process that was
 *      running has executed a full barrier, and every other one passes a context switch (a full
 *      barrier) before it runs again. For an owner O: if O's (A1) came before O's barrier, (A4)
 *      sees it (or O's later (A3)); if not, the (A2) that follows it in program order executes
 *      after O's barrier and sees (C1). So trim() never reads the mark clear while O is between
 *      an (A2) that found the word unclaimed and its (A3) (jcstress CacheClaimVsOwnerTest; its
 *      broken variant without (M) shows the race).
 *  (A3) the owner's release store of 0 into active; pairs with (A4), trim()'s acquire load: a
 *      drain sees every write of the owner's last operation.
 *  An operation that throws clears the mark too (the caller's finally): its cache is as the
 *  owner's next operation would find it, so a drain may take it as well.
 *
 * Reclamation and ABA: none here; caches are heap objects. A claim is a plain 0/1 word, and an
 * owner that read it unclaimed is covered by (M), whatever claims came and went meanwhile.
 * }</pre>
 */
abstract class IdleCacheHandshake {

    /** The system property that turns the drain of idle threads' caches off ({@code false}). */
    static final String PROPERTY = "limbo.alloc.drainIdleCaches";
    /** Whether owners mark their operations and trim() drains idle platform threads' caches. */
    static final boolean ENABLED = Native.MEMBARRIER
            && !"false".equalsIgnoreCase(System.getProperty(PROPERTY));

    private static final VarHandle CLAIM;
    private static final VarHandle ACTIVE;

    static {
        try {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            CLAIM = lookup.findVarHandle(IdleCacheHandshake.class, "claim", int.class).withInvokeExactBehavior();
            ACTIVE = lookup.findVarHandle(IdleCacheHandshake.class, "active", int.class).withInvokeExactBehavior();
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused") // accessed through CLAIM
    private volatile int claim;
    @SuppressWarnings("unused") // accessed through ACTIVE
    private volatile int active;

    /** Takes the cache for the calling thread, if nobody holds it. */
    final boolean tryClaim() {
        // (C1) CAS; acquires the previous holder's writes, released by (C2).
        return (int) CLAIM.getOpaque(this) == 0 && (boolean) CLAIM.compareAndSet(this, 0, 1);
    }

    /** Gives the cache back. */
    final void release() {
        // (C2) release store; pairs with (C1) and (A2).
        CLAIM.setRelease(this, 0);
    }

    /**
     * The owner's entry into an operation: true if it may use the cache (then {@link #leave()}
     * follows), false if trim() holds it (the mark is cleared again).
     */
    final boolean enter() {
        ACTIVE.setOpaque(this, 1); // (A1)
        if ((int) CLAIM.getAcquire(this) == 0) { // (A2)
            return true;
        }
        ACTIVE.setRelease(this, 0);
        return false;
    }

    /** The owner's exit from an operation that {@link #enter()} admitted. */
    final void leave() {
        ACTIVE.setRelease(this, 0); // (A3)
    }

    /**
     * For the claimer, after (M): whether the owner is outside its operations, and stays out of
     * this cache until {@link #release()}.
     */
    final boolean ownerIdle() {
        return (int) ACTIVE.getAcquire(this) == 0; // (A4)
    }
}
