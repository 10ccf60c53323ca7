package dev.limbo.reclaim;

import static dev.limbo.reclaim.ReclaimTestSupport.RECORD;
import static dev.limbo.reclaim.ReclaimTestSupport.runThreads;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Participants;
import dev.limbo.core.internal.Native;
import dev.limbo.core.testing.Progress;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What the shared suite does not cover of qsbr, nebr and rcu: quiescent states and offline threads
 * (qsbr), regions that span operations (nebr), the epoch clock and reservations (rcu), and the
 * invariant of the schemes that announce without a fence per operation.
 */
@Timeout(180)
class EpochFamilyTest {

    /** Runs tasks on one other thread, in order, each to its end: a second thread under the test's control. */
    private static final class Other implements AutoCloseable {
        private final ExecutorService thread = Executors.newSingleThreadExecutor();

        void run(final Runnable task) throws Exception {
            thread.submit(task).get(60, TimeUnit.SECONDS);
        }

        @Override
        public void close() throws InterruptedException {
            thread.shutdown();
            assertTrue(thread.awaitTermination(60, TimeUnit.SECONDS));
        }
    }

    private static void retire(final ReclaimDomain d, final int n) {
        try (Guard g = d.pin()) {
            for (int i = 0; i < n; i++) {
                g.retire(g.allocate());
            }
        }
    }

    private static void operations(final ReclaimDomain d, final int n) {
        for (int i = 0; i < n; i++) {
            d.pin().close();
        }
    }

    // ------------------------------------------------------------------------------------- qsbr

    /**
     * qsbr without idle inference (the heavy barrier refuses, so scans cannot tell that a thread
     * is outside its sections): a thread in view that passes no quiescent state holds the epoch
     * at most one step past its own, and nothing retired meanwhile is freed; each quiescent() it
     * calls lets the epoch advance exactly one more step; once it goes offline it holds nothing
     * back, and after online() and a pin it is in view again.
     */
    @ParameterizedTest
    @EnumSource(value = Scheme.class, names = {"QSBR", "QSBR_AF"})
    void reclamationWaitsForAThreadInViewUntilItPassesAQuiescentStateOrGoesOffline(final Scheme scheme)
            throws Exception {
        assumeTrue(Native.MEMBARRIER, "without membarrier pins fence, and idle threads are always inferred");
        final LimboAllocator a = LimboAllocator.create();
        final EpochDomain d = (EpochDomain) ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD)
                .scanThreshold(1).heavyBarrierInterval(Duration.ZERO).build();
        d.heavyBarrierCall = () -> {
            throw new IllegalStateException("membarrier refused (injected): no idle inference");
        };
        try (Other other = new Other()) {
            final AtomicLong otherId = new AtomicLong();
            other.run(() -> {
                d.pin().close(); // in view, then idle without a quiescent state
                otherId.set(Participants.current());
            });
            final long stale = d.globalEpoch();
            retire(d, 100);
            operations(d, 1_000);
            final ReclaimStats held = d.stats();
            assertEquals(0, held.freed(), () -> "freed while a thread in view passed no quiescent state: " + held);
            final long advances = held.advances();
            assertEquals(stale + 1, d.globalEpoch(), () -> "the epoch should stop at the stale thread's epoch + 1: " + held);
            other.run(d::quiescent); // announces the current epoch (and may advance it itself)
            final long announced = d.announcementOf((int) otherId.get()) >>> 2;
            assertTrue(announced > stale, "the quiescent state announced no newer epoch");
            operations(d, 1_000);
            assertEquals(announced + 1, d.globalEpoch(), "after one quiescent state the epoch stops one past it again");
            assertTrue(d.stats().advances() > advances);
            other.run(d::offline);
            operations(d, 1_000);
            final ReclaimStats free = d.stats();
            assertEquals(100, free.freed(), () -> "an offline thread held reclamation back: " + free);
            other.run(() -> {
                d.online();
                d.pin().close();
            });
            final long back = d.globalEpoch();
            retire(d, 10);
            operations(d, 1_000);
            assertEquals(back + 1, d.globalEpoch(), "the thread back in view is waited for again");
            assertEquals(100, d.stats().freed(), "freed what was retired after the thread came back");
            other.run(d::quiescent);
            other.run(d::offline);
            operations(d, 1_000);
            assertEquals(110, d.stats().freed());
        } finally {
            d.close();
        }
    }

    /**
     * qsbr: a thread inside a pinned section is never quiescent, at any depth: a nested unpin is
     * no quiescent state, the outermost one is; quiescent() inside a section throws.
     */
    @ParameterizedTest
    @EnumSource(value = Scheme.class, names = {"QSBR", "QSBR_AF", "NEBR", "NEBR_AF"})
    void aPinnedThreadIsNeverQuiescentAtAnyDepth(final Scheme scheme) throws Exception {
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).scanThreshold(1)
                .heavyBarrierInterval(Duration.ZERO).build();
        final AtomicReference<Guard> held = new AtomicReference<>();
        try (Other other = new Other()) {
            other.run(() -> {
                held.set(d.pin());
                d.pin(); // depth 2
            });
            retire(d, 100);
            operations(d, 1_000);
            assertEquals(0, d.stats().freed());
            other.run(() -> held.get().close()); // depth 1: still pinned
            operations(d, 1_000);
            assertEquals(0, d.stats().freed(), "a nested unpin counted as a quiescent state");
            other.run(() -> {
                try {
                    d.quiescent();
                    throw new AssertionError("quiescent() inside a section");
                } catch (final IllegalStateException expected) {
                    // the contract
                }
            });
            operations(d, 1_000);
            assertEquals(0, d.stats().freed());
            other.run(() -> held.get().close()); // the outermost unpin
            d.flush();
            assertEquals(100, d.stats().freed(), "the outermost unpin did not end the section");
        } finally {
            d.close();
        }
    }

    /**
     * qsbr and nebr: a thread that stopped using the domain (no offline()) is found idle by the
     * scans (its nesting after a heavy barrier) and does not hold reclamation back.
     */
    @ParameterizedTest
    @EnumSource(value = Scheme.class, names = {"QSBR", "NEBR"})
    void anIdleThreadInViewDoesNotHoldReclamationBack(final Scheme scheme) throws Exception {
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).scanThreshold(1)
                .heavyBarrierInterval(Duration.ZERO).build();
        try (Other other = new Other()) {
            other.run(() -> d.pin().close());
            retire(d, 100);
            for (int i = 0; i < 100_000 && d.stats().freed() < 100; i++) {
                d.pin().close();
            }
            assertEquals(100, d.stats().freed(), () -> "an idle thread held reclamation back: " + d.stats());
        } finally {
            d.close();
        }
    }

    /**
     * The invariant of the schemes that announce without a fence per operation (qsbr, nebr): while
     * a thread is pinned at local epoch e, E stays at most e + 1, with threads outnumbering cores,
     * idle stretches between sections (inferred idle by the scans), and epochs advancing as often
     * as the scheme allows, in both fence modes.
     */
    @ParameterizedTest
    @EnumSource(value = Scheme.class, names = {"QSBR", "NEBR"})
    void whilePinnedTheEpochAdvancesAtMostOnce(final Scheme scheme) throws InterruptedException {
        for (final boolean asymmetric : new boolean[] {false, true}) {
            final LimboAllocator a = LimboAllocator.create();
            final EpochDomain d = (EpochDomain) ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD)
                    .scanThreshold(1).asymmetricFence(asymmetric).heavyBarrierInterval(Duration.ZERO).build();
            try {
                final AtomicLong violations = new AtomicLong();
                final AtomicLong maxLead = new AtomicLong();
                final Progress progress = new Progress(60, "pins", 100_000, "advances", 51);
                runThreads(4, progress, t -> {
                    for (int i = 0; !progress.done(); i++) {
                        if ((i & 255) == 255) {
                            progress.add(0, 256);
                            progress.observe(1, d.advances());
                            for (int spin = 0; spin < (t + 1) * 64; spin++) {
                                Thread.onSpinWait(); // idle between sections: found idle, or stale
                            }
                        }
                        try (Guard g = d.pin()) {
                            final long local = ((EpochDomain.EpochGuard) g).epoch;
                            for (int spin = 0; spin < (i & 15); spin++) {
                                Thread.onSpinWait();
                            }
                            final long lead = d.globalEpoch() - local;
                            if (lead > 1) {
                                violations.incrementAndGet();
                                maxLead.accumulateAndGet(lead, Math::max);
                            }
                        }
                    }
                });
                assertEquals(0, violations.get(), "pinned sections saw the epoch " + maxLead + " ahead of their own");
            } finally {
                d.close();
            }
        }
    }

    // ------------------------------------------------------------------------------------- nebr

    /**
     * nebr: a region spans {@link HartNewEbr#REGION} operations: the thread stays announced
     * active between them, and the region's last unpin (or quiescent(), offline(), flush())
     * announces it quiescent.
     */
    @ParameterizedTest
    @EnumSource(value = Scheme.class, names = {"NEBR", "NEBR_AF"})
    void aRegionSpansManyOperations(final Scheme scheme) {
        final LimboAllocator a = LimboAllocator.create();
        final EpochDomain d = (EpochDomain) ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).build();
        try {
            final int id;
            try (Guard g = d.pin()) {
                id = g.id;
            }
            assertEquals(EpochDomain.ACTIVE, d.announcementOf(id) & EpochDomain.ACTIVE, "the region ended with its first operation");
            operations(d, HartNewEbr.REGION - 2);
            assertEquals(EpochDomain.ACTIVE, d.announcementOf(id) & EpochDomain.ACTIVE, "the region ended early");
            operations(d, 1);
            assertEquals(0, d.announcementOf(id) & EpochDomain.ACTIVE, "the region outlived its operations");
            operations(d, 1);
            assertEquals(EpochDomain.ACTIVE, d.announcementOf(id) & EpochDomain.ACTIVE, "no new region");
            d.quiescent();
            assertEquals(0, d.announcementOf(id) & EpochDomain.ACTIVE, "quiescent() did not end the region");
        } finally {
            d.close();
        }
    }

    // ------------------------------------------------------------------------------------- rcu

    /** rcu: the epoch is a clock that one thread advances every EPOCH_FREQ x n of its allocations (n: threads in the domain). */
    @ParameterizedTest
    @EnumSource(value = Scheme.class, names = {"RCU", "RCU_AF"})
    void theEpochAdvancesEveryEpochFreqTimesNAllocations(final Scheme scheme) throws Exception {
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).build();
        final int f = RcuEpochReservation.EPOCH_FREQ;
        try (Other other = new Other()) {
            retire(d, 3 * f - 1);
            assertEquals(2, d.stats().advances(), "one thread: a tick every " + f + " allocations");
            retire(d, 1);
            assertEquals(3, d.stats().advances());
            other.run(() -> d.pin().close()); // n = 2 from now on
            retire(d, 2 * f - 1);
            assertEquals(3, d.stats().advances(), "two threads: a tick every " + 2 * f + " allocations");
            retire(d, 1);
            assertEquals(4, d.stats().advances());
        } finally {
            d.close();
        }
    }

    /**
     * rcu: a thread's reservation holds back every record retired at or after its epoch, however
     * far the clock runs; when its section ends, they are freed.
     */
    @ParameterizedTest
    @EnumSource(value = Scheme.class, names = {"RCU", "RCU_AF"})
    void aReservationHoldsBackWhatWasRetiredSince(final Scheme scheme) throws Exception {
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).scanThreshold(1)
                .asymmetricFence(false).build();
        final AtomicReference<Guard> held = new AtomicReference<>();
        try (Other other = new Other()) {
            other.run(() -> held.set(d.pin()));
            retire(d, 1_000); // the clock ticks a few times meanwhile
            for (int i = 0; i < 10; i++) {
                d.flush();
            }
            assertTrue(d.stats().advances() >= 10, () -> "the clock stopped: " + d.stats());
            assertEquals(0, d.stats().freed(), "freed while a reservation from before the retires stood");
            other.run(() -> held.get().close());
            d.flush();
            assertEquals(1_000, d.stats().freed());
        } finally {
            d.close();
        }
    }

    /** The ids of the new schemes, as benchmarks and reports use them. */
    @Test
    void idsAndAmortizedForms() {
        for (final String id : new String[] {"qsbr", "nebr", "rcu"}) {
            assertTrue(!Scheme.of(id).amortized() && Scheme.of(id + "-af").amortized(), id);
        }
    }
}
