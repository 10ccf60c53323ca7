package dev.limbo.reclaim;

import static dev.limbo.reclaim.ReclaimTestSupport.RECORD;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.LimboAllocator;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * DEBRA's own rules, single-threaded and deterministic: symmetric fences (no rationed heavy
 * barriers) and no flush, so every scan and advance comes from the incremental scan steps of pins.
 */
@Timeout(30)
class DebraTest {

    private static ReclaimDomain domain(final Scheme scheme, final LimboAllocator a, final int minCalls) {
        return ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).minCalls(minCalls)
                .asymmetricFence(false).build();
    }

    /**
     * The incremental scan counts in {@link ReclaimStats#scans()} once a pass has read every
     * thread's announcement, so scans (not only flush's) and advances both grow under pins alone,
     * and every advance follows a completed pass.
     */
    @ParameterizedTest
    @EnumSource(names = {"DEBRA", "DEBRA_AF"})
    void scansAndAdvancesGrowUnderPins(final Scheme scheme) {
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = domain(scheme, a, 1);
        try {
            ReclaimStats before = d.stats();
            for (int phase = 0; phase < 2; phase++) {
                for (int i = 0; i < 2_000; i++) {
                    d.pin().close();
                }
                final ReclaimStats after = d.stats();
                final ReclaimStats was = before;
                assertTrue(after.scans() > was.scans(), () -> "no scan counted in 2000 pins: " + was + " -> " + after);
                assertTrue(after.advances() > was.advances(), () -> "no advance in 2000 pins: " + was + " -> " + after);
                assertTrue(after.scans() >= after.advances(), () -> "an advance without a completed scan: " + after);
                before = after;
            }
        } finally {
            d.close();
        }
    }

    /**
     * DEBRA advances the epoch only after the advancing thread made minCalls pins in it (the
     * paper's MIN_CALLS): with one thread, consecutive advances are at least minCalls pins apart,
     * counting from the pin that entered the epoch, and advances still happen.
     */
    @ParameterizedTest
    @EnumSource(names = {"DEBRA", "DEBRA_AF"})
    void noAdvanceBeforeMinCallsPinsInTheEpoch(final Scheme scheme) {
        final LimboAllocator a = LimboAllocator.create();
        final int minCalls = 200;
        final ReclaimDomain d = domain(scheme, a, minCalls);
        try {
            final List<Integer> advancedAt = new ArrayList<>();
            advancedAt.add(0); // the first pin enters epoch 0
            long advances = d.stats().advances();
            for (int pin = 1; pin <= 5_000; pin++) {
                d.pin().close();
                final long now = d.stats().advances();
                if (now != advances) {
                    assertTrue(now == advances + 1, "more than one advance in one pin");
                    advancedAt.add(pin);
                    advances = now;
                }
            }
            assertTrue(advancedAt.size() > 5, "too few advances to test anything: " + advancedAt);
            for (int i = 1; i < advancedAt.size(); i++) {
                // the epoch was entered by the pin after the previous advance (pin 1 for the first)
                final int pinsInEpoch = advancedAt.get(i) - advancedAt.get(i - 1);
                assertTrue(pinsInEpoch >= minCalls, "advanced after " + pinsInEpoch + " pins in an epoch, minCalls "
                        + minCalls + ": " + advancedAt);
            }
        } finally {
            d.close();
        }
    }
}
