package dev.limbo.reclaim;

import static dev.limbo.reclaim.ReclaimTestSupport.RECORD;
import static dev.limbo.reclaim.ReclaimTestSupport.closeAndMeasure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.internal.BlockLayout;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Amortized free (the -af schemes but hp-af, {@link #batchSchemes}): a batch that becomes safe is not freed at once but a few
 * records per pin, freesPerPin of them (adapting to the backlog when adaptive). Single-threaded
 * and deterministic: minCalls(1) and scanThreshold(1) let one thread advance the epoch on its own.
 */
@Timeout(30)
class AmortizedFreeTest {

    private static final String AMORTIZED = "dev.limbo.reclaim.AmortizedFreeTest#batchSchemes";
    private static final int MAX_PINS = 100_000;

    /**
     * The amortized schemes whose batch of retires becomes safe whole, by pins alone or at once:
     * all but hp-af, which scans only every R = 2 slots n + B retires (n the test JVM's participant
     * high water), so a batch is not scanned whole; NbrTest#theAmortizedFormsFreeAFewRecordsPerPin
     * covers it.
     */
    static Stream<Scheme> batchSchemes() {
        return ReclaimTestSupport.amortizedSchemes().filter(s -> s != Scheme.HP_AF);
    }

    /** A builder of a domain whose epoch may advance on every pin (symmetric fences: no rationed heavy barriers). */
    private static ReclaimDomain.Builder builder(final Scheme scheme, final LimboAllocator a) {
        return ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).minCalls(1).scanThreshold(1)
                .asymmetricFence(false);
    }

    private static ReclaimDomain domain(final Scheme scheme, final LimboAllocator a, final int freesPerPin,
                                        final boolean adaptive) {
        return builder(scheme, a).freesPerPin(freesPerPin).adaptive(adaptive).build();
    }

    /** Retires {@code n} fresh records in one section. */
    private static void retireBatch(final ReclaimDomain d, final int n) {
        try (Guard g = d.pin()) {
            for (int i = 0; i < n; i++) {
                g.retire(g.allocate());
            }
        }
    }

    /** Pins and unpins until {@code target} records are freed; returns the freed count after each pin. */
    private static List<Long> pinUntilFreed(final ReclaimDomain d, final long target) {
        final List<Long> deltas = new ArrayList<>();
        long freed = d.stats().freed();
        for (int i = 0; i < MAX_PINS && freed < target; i++) {
            d.pin().close(); // an empty operation
            final long now = d.stats().freed();
            deltas.add(now - freed);
            freed = now;
        }
        assertEquals(target, freed, "not everything was freed after " + deltas.size() + " pins");
        return deltas;
    }

    @ParameterizedTest
    @MethodSource(AMORTIZED)
    void aSafeBatchIsFreedAtMostFreesPerPinRecordsPerPin(final Scheme scheme) {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        final int f = 3;
        final int n = 100;
        final ReclaimDomain d = domain(scheme, a, f, false);
        try {
            retireBatch(d, n);
            assertEquals(0, d.stats().freed());
            assertFreedPerPin(scheme, pinUntilFreed(d, n), n, f);
            try (Guard g = d.pin()) {
                assertEquals(f, g.freesPerPin, "freesPerPin changed without adaptive");
            }
        } finally {
            d.close();
        }
        assertEquals(baseline, closeAndMeasure(d, a));
    }

    /**
     * The default is the paper's (Token-EBR paper §3.3, the artifact's numFreesPerStartOp = 1): a
     * domain built without {@code freesPerPin} frees a safe batch one record per pin, and does not
     * adapt.
     */
    @ParameterizedTest
    @MethodSource(AMORTIZED)
    void byDefaultASafeBatchIsFreedOneRecordPerPinAsInThePaper(final Scheme scheme) {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        final int n = 100;
        final ReclaimDomain d = builder(scheme, a).build();
        try {
            retireBatch(d, n);
            assertFreedPerPin(scheme, pinUntilFreed(d, n), n, 1);
            try (Guard g = d.pin()) {
                assertEquals(1, g.freesPerPin, "the default frees per pin");
            }
        } finally {
            d.close();
        }
        assertEquals(baseline, closeAndMeasure(d, a));
    }

    /**
     * A remove-heavy load: every operation retires two records, and one is freed per pin. The
     * backlog of safe records must stay within the builder's limit, with adaptation off (the bound
     * alone) and on (the default).
     */
    @ParameterizedTest
    @MethodSource(AMORTIZED)
    void theBacklogStaysBoundedWhenEveryOperationRetiresTwo(final Scheme scheme) {
        for (final boolean adaptive : new boolean[] {false, true}) {
            final LimboAllocator a = LimboAllocator.create();
            final long baseline = a.stats().bytesInUse();
            final long limit = 300;
            final ReclaimDomain d = builder(scheme, a).adaptive(adaptive).backlogLimit(limit).build();
            try {
                long worst = 0;
                for (int i = 0; i < 20_000; i++) {
                    try (Guard g = d.pin()) {
                        g.retire(g.allocate());
                        g.retire(g.allocate());
                        worst = Math.max(worst, g.freeable.size());
                    }
                }
                assertTrue(worst <= limit, "backlog reached " + worst + ", limit " + limit + " (adaptive " + adaptive + ")");
                assertTrue(d.stats().freed() >= 40_000 - 4 * limit, () -> "too little freed: " + d.stats());
            } finally {
                d.close();
            }
            assertEquals(baseline, closeAndMeasure(d, a));
        }
    }

    /**
     * bypassPool (the Token-EBR paper frees straight to the allocator, where batch frees hurt):
     * every record freed goes back to the allocator at its free, none waits in the pool's bags.
     * Without it, the same frees leave the records cached in the thread's pool bag, still in use
     * as far as the allocator can tell.
     */
    @ParameterizedTest
    @MethodSource(AMORTIZED)
    void bypassPoolSendsEveryFreedRecordStraightToTheAllocator(final Scheme scheme) {
        for (final boolean bypass : new boolean[] {false, true}) {
            final LimboAllocator a = LimboAllocator.create();
            final ReclaimDomain d = builder(scheme, a).freesPerPin(1000).adaptive(false).bypassPool(bypass).build();
            try {
                d.pin().close(); // the thread's guard and its bags exist before the baseline
                if (bypass) {
                    // and its cache of empty bag blocks is warm: a scheme that scans several times
                    // per batch (the era family) splices a partial block per scan into the freeable
                    // list, and the emptied blocks fill the thread's block cache (16 blocks) once
                    retireBatch(d, 500);
                    pinUntilFreed(d, 500);
                }
                final long baseline = a.stats().bytesInUse();
                retireBatch(d, 500);
                pinUntilFreed(d, bypass ? 1000 : 500);
                final long cached = a.stats().bytesInUse() - baseline;
                if (bypass) { // what stays is the bags' own pointer blocks (2 KiB each), not records
                    assertTrue(cached < 500 * RECORD / 2, "with bypassPool, " + cached + " bytes stayed in use");
                } else {
                    assertTrue(cached >= 500 * RECORD, "without bypassPool the pool caches the records: " + cached + " bytes");
                }
            } finally {
                d.close();
            }
        }
    }

    /**
     * Asserts the frees per pin of a batch of {@code n}: nothing for at least two pins (the batch
     * waits for its grace period: three epochs; rcu's is one tick of its clock past every
     * reservation, so one pin; token-af's is a trip of the token around this one-thread ring, one pin;
     * the era family's, nbr-af's and nbr+-af's is none: an era scan frees what no reservation holds,
     * and with scanThreshold(1) each retire's nbr round makes it safe), then exactly {@code f} per pin
     * until fewer than f are left.
     */
    private static void assertFreedPerPin(final Scheme scheme, final List<Long> deltas, final int n, final int f) {
        int i = 0;
        while (deltas.get(i) == 0) {
            i++;
        }
        // token-af's grace period is one trip of the token around the ring: in this one-thread ring, the pin after the retiring one
        // the era family's: none; a scan frees what no reservation holds, and the retiring section reserves nothing
        final int grace = scheme == Scheme.RCU_AF || scheme == Scheme.TOKEN_AF ? 1
                : scheme == Scheme.IBR_AF || scheme == Scheme.HE_AF || scheme == Scheme.WFE_AF
                || scheme == Scheme.NBR_AF || scheme == Scheme.NBR_PLUS_AF ? 0 : 2;
        assertTrue(i >= grace, "the batch was freed before its grace period passed: " + deltas);
        final List<Long> expected = new ArrayList<>();
        for (int left = n; left > 0; left -= f) {
            expected.add((long) Math.min(f, left));
        }
        assertEquals(expected, deltas.subList(i, deltas.size()), "frees per pin once the batch was safe");
    }

    @ParameterizedTest
    @MethodSource(AMORTIZED)
    void withoutAmortizationTheSameBatchIsFreedInOnePin(final Scheme scheme) {
        // The non-amortized twin of each amortized scheme frees the whole batch at once.
        final Scheme twin = scheme == Scheme.EBR_AF ? Scheme.EBR : scheme == Scheme.DEBRA_AF ? Scheme.DEBRA
                : scheme == Scheme.TOKEN_AF ? Scheme.TOKEN_PASSFIRST : null;
        if (twin == null) {
            return; // a future amortized scheme without a twin: nothing to compare
        }
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = domain(twin, a, 3, false);
        try {
            retireBatch(d, 100);
            final List<Long> deltas = pinUntilFreed(d, 100);
            assertEquals(100, deltas.get(deltas.size() - 1), "frees per pin: " + deltas);
        } finally {
            d.close();
        }
    }

    @ParameterizedTest
    @MethodSource(AMORTIZED)
    void adaptiveGrowsFreesPerPinWhileTheBacklogExceedsABlock(final Scheme scheme) {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        final int n = 8 * BlockLayout.CAPACITY;
        // no backlog limit: adaptation alone
        final ReclaimDomain d = builder(scheme, a).freesPerPin(1).adaptive(true).backlogLimit(Long.MAX_VALUE).build();
        try {
            final Guard g;
            try (Guard first = d.pin()) {
                g = first;
            }
            assertEquals(1, g.freesPerPin);
            retireBatch(d, n);
            final List<Long> deltas = new ArrayList<>();
            long freed = d.stats().freed();
            int maxF = 1;
            for (int i = 0; i < MAX_PINS && freed < n; i++) {
                final int allowed = g.freesPerPin; // what this pin may free
                d.pin().close();
                final long now = d.stats().freed();
                assertTrue(now - freed <= allowed, "freed " + (now - freed) + " in one pin with freesPerPin "
                        + allowed);
                deltas.add(now - freed);
                freed = now;
                maxF = Math.max(maxF, g.freesPerPin);
            }
            assertEquals(n, freed);
            assertTrue(maxF > 1, "freesPerPin never grew with a backlog of " + n);
            final long max = deltas.stream().mapToLong(Long::longValue).max().orElse(0);
            assertTrue(max > 1, "never more than one free per pin: " + deltas);
            assertTrue(deltas.size() < n / 2, "adaptive free took " + deltas.size() + " pins for " + n + " records");

            // With nothing left, freesPerPin shrinks back to 1, one step per new epoch. (nbr-af and
            // nbr+-af take their steps at their rounds, which only retires bring: empty pins leave it.)
            if (scheme != Scheme.NBR_AF && scheme != Scheme.NBR_PLUS_AF) {
                for (int i = 0; i < 20 * maxF * (dev.limbo.core.Participants.highWater() + 2) && g.freesPerPin > 1; i++) {
                    d.pin().close();
                }
                assertEquals(1, g.freesPerPin, "freesPerPin did not shrink once the backlog was gone");
            }
        } finally {
            d.close();
        }
        assertEquals(baseline, closeAndMeasure(d, a));
    }

    @ParameterizedTest
    @MethodSource(AMORTIZED)
    void adaptiveKeepsOneFreePerPinWhileTheBacklogIsBelowABlock(final Scheme scheme) {
        final LimboAllocator a = LimboAllocator.create();
        final int n = BlockLayout.CAPACITY / 2;
        final ReclaimDomain d = domain(scheme, a, 1, true);
        try {
            retireBatch(d, n);
            final List<Long> deltas = pinUntilFreed(d, n);
            assertTrue(deltas.stream().allMatch(x -> x <= 1), "more than one free per pin: " + deltas);
            assertTrue(deltas.stream().filter(x -> x == 1).count() == n);
        } finally {
            d.close();
        }
    }
}
