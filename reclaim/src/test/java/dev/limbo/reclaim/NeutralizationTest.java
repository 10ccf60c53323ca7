package dev.limbo.reclaim;

import static dev.limbo.reclaim.ReclaimTestSupport.RECORD;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Participants;
import dev.limbo.core.Words;

import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Cooperative neutralization (Guard, "Neutralization"): the mark, the polls that throw
 * {@link Restart}, write phases, reservations, nested sections and restart injection, for every
 * scheme. Polling is switched on by restart injection with a period so long that no restart is
 * injected during a test, so that only the neutralizations the test makes restart a read phase.
 */
@Timeout(60)
class NeutralizationTest {

    private static final int NEVER = Integer.MAX_VALUE;

    private static ReclaimDomain polling(final Scheme scheme, final LimboAllocator a) {
        return ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).slots(2).restartInjection(NEVER).build();
    }

    @ParameterizedTest
    @MethodSource("dev.limbo.reclaim.ReclaimTestSupport#allSchemes")
    void aNeutralizedReadPhaseRestartsAtItsNextPollAndOnlyOnce(final Scheme scheme) {
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = polling(scheme, a);
        final long cell = a.allocateZeroed(8);
        try (Guard g = d.pin()) {
            Words.sr(cell, g.allocate());
            g.protect(0, cell);
            assertTrue(d.neutralize(Participants.current()));
            assertSame(Restart.INSTANCE, assertThrows(Restart.class, () -> g.protect(0, cell)));
            g.protect(0, cell); // the restarted read phase goes on
            g.poll();
            d.neutralize(Participants.current());
            assertThrows(Restart.class, () -> g.protectIfEqual(1, cell, Words.lv(cell)));
            d.neutralize(Participants.current());
            assertThrows(Restart.class, g::poll);
            d.neutralize(Participants.current());
            assertThrows(Restart.class, g::beginWrite); // the write phase never starts on a stale read phase
            g.retire(Words.lv(cell));
        }
        assertEquals(4, d.stats().restarts());
        d.neutralize(Participants.current()); // outside a section: the next section starts clean
        try (Guard g = d.pin()) {
            g.protect(0, cell);
        }
        assertEquals(4, d.stats().restarts());
        d.close();
        a.free(cell);
    }

    @ParameterizedTest
    @MethodSource("dev.limbo.reclaim.ReclaimTestSupport#allSchemes")
    void aWritePhaseIsNotNeutralizedUntilItEnds(final Scheme scheme) {
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = polling(scheme, a);
        final long cell = a.allocateZeroed(8);
        try (Guard g = d.pin()) {
            final long node = g.allocate();
            g.reserve(0, node);
            g.beginWrite();
            d.neutralize(Participants.current());
            g.protect(0, cell); // no restart inside the write phase
            g.poll();
            g.initLink(node, 0L);
            g.store(cell, node);
            assertTrue(g.cas(cell, node, 0L));
            g.endWrite();
            assertThrows(Restart.class, g::poll); // the mark waited for the write phase's end
            g.retire(node);
        }
        d.close();
        a.free(cell);
    }

    @ParameterizedTest
    @MethodSource("dev.limbo.reclaim.ReclaimTestSupport#allSchemes")
    void aRestartInANestedSectionRestartsEveryEnclosingReadPhase(final Scheme scheme) {
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = polling(scheme, a);
        final long cell = a.allocateZeroed(8);
        try (Guard outer = d.pin()) {
            outer.protect(0, cell);
            try (Guard inner = d.pin()) {
                inner.protect(0, cell);
                d.neutralize(Participants.current());
                assertThrows(Restart.class, () -> inner.protect(0, cell));
                inner.protect(0, cell); // the inner operation restarted and completes
                inner.poll();
            }
            // what the outer section read before the nested one may be gone: its next poll restarts it
            assertThrows(Restart.class, () -> outer.protect(1, cell));
            outer.poll();
            try (Guard inner = d.pin()) { // the pending restart of depth 1 does not leak into depth 2
                inner.poll();
            }
            outer.poll();
        }
        assertEquals(2, d.stats().restarts());
        d.close();
        a.free(cell);
    }

    @ParameterizedTest
    @MethodSource("dev.limbo.reclaim.ReclaimTestSupport#allSchemes")
    void reservationsAreVisibleToOtherThreadsUntilTheSectionEnds(final Scheme scheme) throws Exception {
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = polling(scheme, a);
        final long node;
        try (Guard g = d.pin()) {
            node = g.allocate();
            try (Guard nested = d.pin()) {
                nested.reserve(1, node | 1); // marks are ignored
                assertTrue(CompletableFuture.supplyAsync(() -> d.isReserved(node)).get());
            }
            assertFalse(CompletableFuture.supplyAsync(() -> d.isReserved(node)).get(), "the nested window's reservations end with it");
            g.reserve(0, node + RECORD); // just past the record: not it
            assertFalse(CompletableFuture.supplyAsync(() -> d.isReserved(node)).get());
            g.reserve(0, node + RECORD - Long.BYTES); // a word inside it (a link's address) reserves it
            assertTrue(CompletableFuture.supplyAsync(() -> d.isReserved(node)).get());
            g.reserve(0, node);
            g.beginWrite();
            g.endWrite();
            assertTrue(CompletableFuture.supplyAsync(() -> d.isReserved(node)).get(), "reservations outlive the write phase");
            g.retire(node);
        }
        assertFalse(CompletableFuture.supplyAsync(() -> d.isReserved(node)).get());
        d.close();
    }

    @ParameterizedTest
    @MethodSource("dev.limbo.reclaim.ReclaimTestSupport#allSchemes")
    void restartInjectionRestartsAboutOnePollInN(final Scheme scheme) {
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).restartInjection(10).build();
        final long cell = a.allocateZeroed(8);
        int restarts = 0;
        try (Guard g = d.pin()) {
            for (int i = 0; i < 10_000; i++) {
                try {
                    g.protect(0, cell);
                } catch (final Restart r) {
                    restarts++;
                }
            }
        }
        assertEquals(restarts, d.stats().restarts());
        assertTrue(restarts > 500 && restarts < 2_000, "injected restarts: " + restarts);
        d.close();
        a.free(cell);
    }

    @ParameterizedTest
    @MethodSource("dev.limbo.reclaim.ReclaimTestSupport#allSchemes")
    void withoutNeutralizationNothingRestarts(final Scheme scheme) {
        assumeFalse(scheme.capabilities().contains(Capability.NEUTRALIZATION), "the scheme neutralizes");
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).build();
        final long cell = a.allocateZeroed(8);
        try (Guard g = d.pin()) {
            d.neutralize(Participants.current()); // a scheme that does not neutralize never polls
            g.protect(0, cell);
            g.poll();
            g.beginWrite();
            g.endWrite();
        }
        assertEquals(0, d.stats().restarts());
        d.close();
        a.free(cell);
    }

    @Test
    void linksAreDeclaredOnceAndChecked() {
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = ReclaimDomain.builder(Scheme.EBR).allocator(a).recordBytes(32).build();
        assertNull(d.links());
        d.declareLinks(24, 16);
        d.declareLinks(16, 24); // a second structure with the same nodes
        assertArrayEquals(new long[] {16, 24}, d.links());
        final IllegalStateException other = assertThrows(IllegalStateException.class, () -> d.declareLinks(8));
        assertTrue(other.getMessage().contains("must have the same node links"), other.getMessage());
        assertThrows(IllegalStateException.class, d::declareLinks, "no countable links: conflicts with links");
        for (final long bad : new long[] {-8, 4, 32, 40}) {
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> d.declareLinks(bad));
            assertTrue(e.getMessage().contains("not an 8-aligned word inside the domain's 32-byte records"), e.getMessage());
        }
        final IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
                () -> ReclaimDomain.builder(Scheme.EBR).restartInjection(-1));
        assertTrue(negative.getMessage().contains("must be >= 0"), negative.getMessage());
        d.close();
    }
}
