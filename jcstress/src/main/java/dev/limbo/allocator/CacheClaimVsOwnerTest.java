package dev.limbo.allocator;

import dev.limbo.core.Words;
import dev.limbo.core.internal.Native;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * The handshake by which {@link LimboAllocator#trim()} drains an idle platform thread's cache
 * ({@link IdleCacheHandshake}, (A1)-(A4), (C1), (M)), on the class itself: the owner enters an
 * operation (marks itself active (A1), reads the claim word (A2)); trim() claims the cache (C1),
 * issues membarrier (M), and reads the owner's mark (A4). The owner never leaves in these states,
 * so a clear mark means the owner had not entered. Result (owner, trim): owner 1 = it entered and
 * may use its cache, 0 = it found the cache claimed; trim 1 = it read the mark clear and would
 * drain, 0 = it saw the owner active (and only asks it to drain itself). (1, 1) is the bug: both
 * would work on the cache at once.
 *
 * <p>The owner's side has no fence at all (an opaque store, then an acquire load): the store can
 * wait in the store buffer while the load runs, which x86 shows. {@link Asymmetric} is the
 * allocator's pairing, membarrier on trim()'s side (where the kernel lacks it, the handshake is
 * off and so is this check: both sides then record 0). {@link BrokenNoMembarrier} has the same
 * owner and a trim() with only its CAS (itself a full fence on x86) and no membarrier.
 */
public final class CacheClaimVsOwnerTest {

    private CacheClaimVsOwnerTest() {
    }

    /** A cache's two handshake words, nobody holding it and the owner outside its operations. */
    abstract static class Base extends IdleCacheHandshake {
        /** The owner's entry into an operation: 1 if it may use its cache. */
        final int owner() {
            return enter() ? 1 : 0;
        }
    }

    /** As the allocator does it: a claim, then membarrier, then the owner's mark. */
    @JCStressTest
    @Description("sOpaque(active, 1); la(claim) || cas(claim, 0, 1); membarrier; la(active): "
            + "trim() drains a cache only while its owner is outside its operations")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "the owner entered; trim() saw it active and leaves the cache alone")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "trim() claimed first and drains; the owner found the cache claimed")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the owner found the cache claimed; trim() saw its mark anyway")
    @Outcome(id = "1, 1", expect = FORBIDDEN, desc = "the owner uses its cache while trim() drains it")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class Asymmetric extends Base {
        @Actor
        public void owner(final II_Result r) {
            r.r1 = IdleCacheHandshake.ENABLED ? owner() : 0;
        }

        @Actor
        public void trim(final II_Result r) {
            if (!IdleCacheHandshake.ENABLED) {
                r.r2 = 0; // no membarrier: trim() only asks owners to drain themselves
                return;
            }
            final boolean claimed = tryClaim(); // (C1)
            Native.membarrier(); // (M)
            r.r2 = claimed && ownerIdle() ? 1 : 0; // (A4)
        }
    }

    /**
     * BROKEN on purpose: trim() claims with its CAS and reads the mark with no membarrier, so the
     * owner's mark can still sit in its store buffer while its own read finds the cache unclaimed.
     */
    @JCStressTest
    @Description("BROKEN (store buffering, which x86 shows): sOpaque(active, 1); la(claim) || cas(claim, 0, 1); "
            + "la(active): without membarrier, trim() may read the mark clear while the owner is inside")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "the owner entered; trim() saw it active and leaves the cache alone")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "trim() claimed first and drains; the owner found the cache claimed")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the owner found the cache claimed; trim() saw its mark anyway")
    @Outcome(id = "1, 1", expect = ACCEPTABLE_INTERESTING,
            desc = "the owner's mark was still in its store buffer: both use the cache at once")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class BrokenNoMembarrier extends Base {
        @Actor
        public void owner(final II_Result r) {
            r.r1 = owner();
        }

        @Actor
        public void trim(final II_Result r) {
            final boolean claimed = tryClaim(); // (C1), and no (M)
            Words.fullFence(); // even a fence of trim()'s own cannot stand in for the owner's
            r.r2 = claimed && ownerIdle() ? 1 : 0;
        }
    }
}
