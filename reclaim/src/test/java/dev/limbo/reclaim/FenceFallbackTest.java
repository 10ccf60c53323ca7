package dev.limbo.reclaim;

import static dev.limbo.reclaim.ReclaimTestSupport.RECORD;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.internal.Native;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A heavy barrier that fails at run time: the domain falls back to fenced pins, counts it, and
 * reclamation goes on once every thread that used the domain has pinned or unpinned again (a
 * thread idle since before the failure holds it back until then).
 */
@Timeout(60)
class FenceFallbackTest {

    @ParameterizedTest
    @MethodSource("dev.limbo.reclaim.ReclaimTestSupport#epochSchemes")
    void aFailingHeavyBarrierFallsBackToFencedPinsAndReclamationGoesOn(final Scheme scheme) throws Exception {
        assumeTrue(Native.MEMBARRIER, "no membarrier here: the domain fences every pin anyway");
        final LimboAllocator a = LimboAllocator.create();
        final EpochDomain d = (EpochDomain) ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD)
                .asymmetricFence(true).heavyBarrierInterval(Duration.ZERO).scanThreshold(1).minCalls(1).build();
        final CountDownLatch idle = new CountDownLatch(1);
        final CountDownLatch wake = new CountDownLatch(1);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread sleeper = Thread.ofPlatform().start(() -> {
            try {
                d.pin().close(); // an unfenced word, written before the failure
                idle.countDown();
                assertTrue(wake.await(50, TimeUnit.SECONDS));
                d.pin().close(); // after the failure: a fenced word
                idle.countDown();
            } catch (final Throwable t) {
                failure.set(t);
            }
        });
        try {
            assertTrue(idle.await(50, TimeUnit.SECONDS));
            d.heavyBarrierCall = () -> { // from now on the kernel refuses
                throw new IllegalStateException("membarrier refused (injected)");
            };
            final int n = 100;
            try (Guard g = d.pin()) {
                for (int i = 0; i < n; i++) {
                    g.retire(g.allocate());
                }
            }
            for (int i = 0; i < 1_000; i++) {
                d.pin().close();
            }
            final ReclaimStats held = d.stats();
            assertEquals(1, held.fenceFallbacks(), () -> "the failure was not counted: " + held);
            assertEquals(0, held.freed(), () -> "an unfenced word from before the failure was trusted: " + held);
            wake.countDown();
            sleeper.join();
            for (int i = 0; i < 1_000 && d.stats().freed() < n; i++) {
                d.pin().close();
            }
            final ReclaimStats after = d.stats();
            assertEquals(n, after.freed(), () -> "reclamation did not go on after the fallback: " + after);
            assertEquals(1, after.fenceFallbacks());
        } finally {
            wake.countDown();
            sleeper.join();
            d.close();
        }
        assertEquals(null, failure.get());
    }
}
