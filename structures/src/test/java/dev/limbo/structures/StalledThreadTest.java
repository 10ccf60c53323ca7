package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Participants;
import dev.limbo.reclaim.Guard;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Restart;
import dev.limbo.reclaim.Scheme;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static dev.limbo.structures.OffHeapStructure.RESERVED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A robust scheme keeps reclaiming while a thread stalls inside a structure operation: one thread
 * pins the tree's domain, runs a lookup in it (a nested section, whose protections last until the
 * outermost close) and stalls there, holding the traversal's protections, while another thread
 * runs 10^6 updates on the tree. Every scheme that declares a finite
 * {@linkplain ReclaimDomain#unreclaimedBound bound} must keep the unreclaimed records within it
 * throughout (only the updater retires; n = participant ids in use), and below a quarter of the
 * records retired during the stall; the schemes without one are covered by the scheme suite's stalled-thread test, which
 * asserts that their garbage grows. The updates end when the updater has done them all (the
 * stalled thread waits on a latch, so no schedule changes what is asserted).
 */
@Timeout(300)
class StalledThreadTest {

    private static final int KEYS = 4_096;
    private static final int UPDATES = 1_000_000;
    private static final int SAMPLE_EVERY = 5_000;

    @ParameterizedTest
    @EnumSource(Scheme.class)
    void aThreadStalledInsideAnOperationDoesNotStopReclamation(final Scheme scheme) throws Exception {
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = Kind.TREE.domain(scheme, a, false, 0);
        final NatarajanMittalTree tree = new NatarajanMittalTree(d);
        // the bound of the domain once it serves the tree (lfrc's depends on the declared links)
        final boolean bounded = d.unreclaimedBound(1) != Long.MAX_VALUE;
        if (!bounded) {
            tree.close();
            d.close();
        }
        assumeTrue(bounded, () -> scheme + " has no garbage bound for the tree: a stalled thread stops it, or "
                + "(lfrc) keeps the chains of retired nodes it reaches (SchemeSuiteTest.stalledThread asserts "
                + "the growth, LfrcTest the bound without links)");
        final LongMapChecks.Subject map = NatarajanMittalTreeTest.subject(tree);
        for (long k = 0; k < KEYS; k += 2) {
            assertEquals(RESERVED, map.putIfAbsent(k, k));
        }
        final CountDownLatch stalled = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final AtomicReference<Throwable> staller = new AtomicReference<>();
        final Thread t = Thread.ofPlatform().name("stalled").start(() -> {
            try (Guard g = d.pin()) {
                final boolean found = map.contains(KEYS / 2);
                stalled.countDown();
                release.await();
                try {
                    g.poll(); // a neutralizing scheme restarted this read phase: its answer is not used
                    assertTrue(found);
                } catch (final Restart neutralized) {
                    // the stall outlived the read phase; nothing read in it is used
                }
            } catch (final Throwable e) {
                staller.set(e);
            } finally {
                stalled.countDown();
                Participants.close();
            }
        });
        long worst = 0;
        long retiredDuringStall = 0;
        long alive = 0;
        try {
            assertTrue(stalled.await(60, TimeUnit.SECONDS), "the stalled thread did not pin");
            // the records alive when the stall began, which an era scheme's stalled reservation may
            // hold back beyond its bound: a leaf per key and an internal node per leaf, and sentinels
            alive = 2 * (map.size() + 3);
            final long retiredBefore = d.stats().retired();
            final SplittableRandom random = new SplittableRandom(scheme.ordinal());
            for (int i = 1; i <= UPDATES; i++) {
                final long key = random.nextInt(KEYS);
                if (random.nextBoolean()) {
                    map.putIfAbsent(key, key);
                } else {
                    map.remove(key);
                }
                if (i % SAMPLE_EVERY == 0) {
                    worst = Math.max(worst, d.stats().inLimbo());
                }
            }
            retiredDuringStall = d.stats().retired() - retiredBefore;
        } finally {
            release.countDown();
            t.join();
        }
        if (staller.get() != null) {
            fail("the stalled thread failed", staller.get());
        }
        // Only the updater retires, so it alone holds what is unreclaimed: one thread's bound, for
        // the participant ids in use (the schemes' thresholds grow with them, and ids of earlier
        // tests' threads count).
        final int n = Participants.highWater();
        final long bound = d.unreclaimedBound(n) + alive;
        final long seen = worst;
        final long retired = retiredDuringStall;
        assertTrue(seen <= bound, () -> scheme + ": " + seen + " unreclaimed during the stall, more than its bound plus the records alive at the stall "
                + bound + " (n = " + n + "; " + retired + " retired during the stall)");
        assertTrue(4 * seen < retired, () -> scheme + ": " + seen + " unreclaimed of the " + retired
                + " records retired during the stall: the stalled thread held reclamation back");
        tree.close();
        d.close();
    }
}
