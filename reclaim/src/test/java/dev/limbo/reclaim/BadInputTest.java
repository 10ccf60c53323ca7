package dev.limbo.reclaim;

import static dev.limbo.reclaim.ReclaimTestSupport.RECORD;
import static dev.limbo.reclaim.ReclaimTestSupport.debugAllocator;
import static dev.limbo.reclaim.ReclaimTestSupport.runThreads;
import static dev.limbo.reclaim.ReclaimTestSupport.settle;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Words;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Misuse of domains, guards and builders fails fast with a message that says what went wrong. */
@Timeout(30)
class BadInputTest {

    private static final String ALL = "dev.limbo.reclaim.ReclaimTestSupport#allSchemes";

    /** Runs {@code body} with a domain of {@code scheme} (3 slots) and a cell holding a record. */
    private static void withDomain(final Scheme scheme, final boolean debug, final DomainBody body) throws Exception {
        final LimboAllocator a = debugAllocator();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).slots(3).debug(debug)
                .build();
        final long cell = a.allocateZeroed(Long.BYTES);
        try {
            body.run(d, a, cell);
        } finally {
            d.close();
            a.free(cell);
        }
    }

    @FunctionalInterface
    private interface DomainBody {
        void run(ReclaimDomain d, LimboAllocator a, long cell) throws Exception;
    }

    @ParameterizedTest
    @MethodSource(ALL)
    void slotIndexOutOfRangeThrowsNamingTheSlots(final Scheme scheme) throws Exception {
        withDomain(scheme, false, (d, a, cell) -> {
            try (Guard g = d.pin()) {
                for (final int slot : new int[] {-1, 3, 15, Integer.MAX_VALUE}) {
                    final IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class,
                            () -> g.protect(slot, cell));
                    assertTrue(e.getMessage().contains("slot " + slot), e.getMessage());
                    assertTrue(e.getMessage().contains("[0, 3)"), e.getMessage());
                    assertTrue(e.getMessage().contains("slots(3)"), e.getMessage());
                    assertThrows(IndexOutOfBoundsException.class, () -> g.protectIfEqual(slot, cell, 0));
                }
                assertEquals(0, g.protect(2, cell)); // the last slot is fine
                assertTrue(g.protectIfEqual(2, cell, 0));
            }
        });
    }

    @ParameterizedTest
    @MethodSource(ALL)
    void usingAGuardAfterItsOutermostCloseThrows(final Scheme scheme) throws Exception {
        withDomain(scheme, false, (d, a, cell) -> {
            final Guard g = d.pin();
            final long node = g.allocate();
            g.close();
            final IllegalStateException e = assertThrows(IllegalStateException.class, () -> g.protect(0, cell));
            assertTrue(e.getMessage().contains("outside its pinned section"), e.getMessage());
            assertThrows(IllegalStateException.class, () -> g.protectIfEqual(0, cell, 0));
            assertThrows(IllegalStateException.class, () -> g.retire(node));
            assertEquals(0, d.stats().retired(), "a refused retire was counted");
            d.freeExclusive(node);
        });
    }

    @ParameterizedTest
    @MethodSource(ALL)
    void retiringNullOrAMarkedPointerThrows(final Scheme scheme) throws Exception {
        withDomain(scheme, false, (d, a, cell) -> {
            try (Guard g = d.pin()) {
                final long node = g.allocate();
                final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> g.retire(0));
                assertTrue(e.getMessage().contains("not a record pointer"), e.getMessage());
                for (long mark = 1; mark <= Guard.MARK_BITS; mark++) {
                    final long marked = node | mark;
                    assertThrows(IllegalArgumentException.class, () -> g.retire(marked));
                }
                assertEquals(0, d.stats().retired());
                g.retire(node);
                assertEquals(1, d.stats().retired());
            }
        });
    }

    @ParameterizedTest
    @MethodSource(ALL)
    void aNodeRetiredTwiceIsRejectedInEveryMode(final Scheme scheme) throws Exception {
        for (final boolean debug : new boolean[] {false, true}) {
            withDomain(scheme, debug, (d, a, cell) -> {
                try (Guard g = d.pin()) {
                    final long node = g.allocate();
                    g.retire(node);
                    final IllegalStateException e = assertThrows(IllegalStateException.class, () -> g.retire(node));
                    assertTrue(e.getMessage().contains("retired already"), e.getMessage());
                    assertTrue(e.getMessage().contains(String.format("0x%x", node)), e.getMessage());
                    assertEquals(1, d.stats().retired());
                    assertThrows(IllegalStateException.class, () -> d.freeExclusive(node));
                }
            });
        }
    }

    /**
     * Without debug mode, retire refuses whatever is not a live record of its domain: a record of
     * another domain (smaller records, same allocator), a block straight from the allocator, a
     * block of another allocator, an interior pointer, a pointer outside the region. The other
     * domain's record stays intact, and both domains close cleanly.
     */
    @ParameterizedTest
    @MethodSource(ALL)
    void retireRefusesWhatIsNotALiveRecordOfTheDomain(final Scheme scheme) {
        final LimboAllocator a = LimboAllocator.create();
        final LimboAllocator other = LimboAllocator.create();
        final long baseline = settle(a);
        final ReclaimDomain small = ReclaimDomain.builder(scheme).allocator(a).recordBytes(16).build();
        final ReclaimDomain big = ReclaimDomain.builder(scheme).allocator(a).recordBytes(64).build();
        final long raw = a.allocate(64);
        final long foreign = other.allocate(72);
        final long record;
        try (Guard g = small.pin()) {
            record = g.allocate();
            Words.sp(record, 7);
            Words.sp(record + 8, 8);
        }
        try (Guard g = big.pin()) {
            for (final long p : new long[] {record, raw, foreign, raw + 8}) {
                final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> g.retire(p));
                assertTrue(e.getMessage().contains("not a live record of reclamation domain"), e.getMessage());
                assertTrue(e.getMessage().contains(String.format("0x%x", p)), e.getMessage());
            }
            final IllegalArgumentException outside = assertThrows(IllegalArgumentException.class,
                    () -> g.retire(1L << 60));
            assertTrue(outside.getMessage().contains("outside the off-heap region"), outside.getMessage());
            assertThrows(IllegalArgumentException.class, () -> g.retire(-8));
        }
        assertEquals(0, big.stats().retired());
        assertEquals(7, Words.lp(record));
        assertEquals(8, Words.lp(record + 8));
        try (Guard g = small.pin()) {
            g.retire(record); // its own domain still takes it
        }
        big.close();
        small.close();
        a.free(raw);
        other.free(foreign);
        assertEquals(baseline + (scheme == Scheme.NONE ? 16 + ReclaimDomain.TRAILER_BYTES : 0), settle(a));
    }

    /**
     * A record freed behind the domain's back (a double free through the allocator) makes one
     * step of close() fail: close() still runs every other step, ends closed, and reports it.
     */
    @Test
    void closeRunsEveryCleanupStepAndReportsTheOneThatFailed() {
        final LimboAllocator a = LimboAllocator.builder().checked(true).build();
        final long baseline = settle(a);
        final ReclaimDomain d = ReclaimDomain.builder(Scheme.EBR).allocator(a).recordBytes(RECORD).build();
        final long x;
        try (Guard g = d.pin()) {
            x = g.allocate();
            g.retire(x);
        }
        a.free(x); // the misuse
        final IllegalStateException e = assertThrows(IllegalStateException.class, d::close);
        assertTrue(e.getMessage().contains("cleanup step(s) failed"), e.getMessage());
        assertTrue(d.isClosed());
        assertEquals(baseline, settle(a), "close() skipped the steps after the failing one");
    }

    @ParameterizedTest
    @MethodSource(ALL)
    void debugModeRejectsAPointerTheAllocatorNeverHandedOut(final Scheme scheme) throws Exception {
        final LimboAllocator other = LimboAllocator.create();
        final long foreign = other.allocate(RECORD);
        try {
            withDomain(scheme, true, (d, a, cell) -> {
                try (Guard g = d.pin()) {
                    final long node = g.allocate();
                    // interior pointer of a live record, a pointer of another allocator, a freed record
                    assertThrows(RuntimeException.class, () -> g.retire(node + Long.BYTES));
                    assertThrows(RuntimeException.class, () -> g.retire(foreign));
                    final long freed = a.allocate(RECORD);
                    a.free(freed);
                    assertThrows(RuntimeException.class, () -> g.retire(freed));
                    assertEquals(0, d.stats().retired(), "a rejected pointer was counted as retired");
                    g.retire(node); // the guard still works
                    assertEquals(1, d.stats().retired());
                }
            });
        } finally {
            other.free(foreign);
        }
    }

    @ParameterizedTest
    @MethodSource(ALL)
    void debugModeRejectsAGuardUsedByAnotherThread(final Scheme scheme) throws Exception {
        withDomain(scheme, true, (d, a, cell) -> {
            try (Guard g = d.pin()) {
                final long node = g.allocate();
                final AtomicReference<String> failures = new AtomicReference<>("");
                runThreads(1, t -> {
                    for (final Consumer<Guard> misuse : java.util.List.<Consumer<Guard>>of(
                            h -> h.protect(0, cell), h -> h.protectIfEqual(0, cell, 0), h -> h.retire(node),
                            Guard::allocate, Guard::close)) {
                        final IllegalStateException e = assertThrows(IllegalStateException.class,
                                () -> misuse.accept(g));
                        if (!e.getMessage().contains("used by thread 'reclaim-test-0'")) {
                            failures.set(failures.get() + e.getMessage() + "\n");
                        }
                    }
                });
                assertEquals("", failures.get());
                assertEquals(1, g.depth(), "another thread's close() changed the depth");
                assertEquals(0, d.stats().retired());
                g.retire(node);
            }
        });
    }

    @ParameterizedTest
    @MethodSource(ALL)
    void pinAndFlushAfterCloseThrow(final Scheme scheme) throws Exception {
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).build();
        try (Guard g = d.pin()) {
            g.retire(g.allocate());
        }
        assertFalse(d.isClosed());
        d.close();
        assertTrue(d.isClosed());
        final IllegalStateException e = assertThrows(IllegalStateException.class, d::pin);
        assertTrue(e.getMessage().contains("is closed"), e.getMessage());
        assertThrows(IllegalStateException.class, d::flush);
        assertThrows(IllegalStateException.class, d::allocateExclusive);
        assertDoesNotThrow(d::close); // idempotent
        // a thread that never used the domain cannot pin it either
        runThreads(1, t -> assertThrows(IllegalStateException.class, d::pin));
    }

    @ParameterizedTest
    @MethodSource(ALL)
    void flushInsideAPinnedSectionThrows(final Scheme scheme) throws Exception {
        withDomain(scheme, false, (d, a, cell) -> {
            try (Guard g = d.pin()) {
                final IllegalStateException e = assertThrows(IllegalStateException.class, d::flush);
                assertTrue(e.getMessage().contains("inside a pinned section"), e.getMessage());
                try (Guard inner = d.pin()) {
                    assertEquals(2, inner.depth());
                    assertThrows(IllegalStateException.class, d::flush);
                }
                assertEquals(1, g.depth());
            }
            assertDoesNotThrow(() -> d.flush());
        });
    }

    @ParameterizedTest
    @MethodSource(ALL)
    void requireSlotsRejectsMoreSlotsThanTheDomainHas(final Scheme scheme) throws Exception {
        withDomain(scheme, false, (d, a, cell) -> {
            assertEquals(3, d.slots());
            assertDoesNotThrow(() -> d.requireSlots(3));
            assertDoesNotThrow(() -> d.requireSlots(1));
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> d.requireSlots(4));
            assertTrue(e.getMessage().contains("needs 4 protection slots"), e.getMessage());
            assertTrue(e.getMessage().contains("has 3"), e.getMessage());
            assertTrue(e.getMessage().contains("slots(4)"), e.getMessage());
        });
    }

    @ParameterizedTest
    @MethodSource(ALL)
    void nestingDeeperThanMaxNestingThrowsAndKeepsTheSections(final Scheme scheme) {
        final LimboAllocator a = LimboAllocator.create();
        try (ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).maxNesting(2).build()) {
            try (Guard outer = d.pin(); Guard inner = d.pin()) {
                final IllegalStateException e = assertThrows(IllegalStateException.class, d::pin);
                assertTrue(e.getMessage().contains("nested deeper than 2"), e.getMessage());
                assertEquals(2, inner.depth());
                inner.retire(inner.allocate());
            }
            try (Guard g = d.pin()) {
                assertEquals(1, g.depth());
            }
        }
    }

    @Test
    void builderRejectsMoreThan64SlotWords() {
        final ReclaimDomain.Builder b = ReclaimDomain.builder(Scheme.HP).recordBytes(RECORD).slots(15).maxNesting(5);
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, b::build);
        assertTrue(e.getMessage().contains("at most 64"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> b.maxNesting(0));
        assertThrows(IllegalArgumentException.class, () -> b.maxNesting(65));
    }

    @Test
    void builderRejectsAMissingOrOutOfRangeRecordSize() {
        final ReclaimDomain.Builder b = ReclaimDomain.builder(Scheme.EBR);
        final IllegalStateException missing = assertThrows(IllegalStateException.class, b::build);
        assertTrue(missing.getMessage().contains("recordBytes"), missing.getMessage());
        for (final long bad : new long[] {-1, 0, 7, 16385, Long.MAX_VALUE}) {
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> b.recordBytes(bad));
            assertTrue(e.getMessage().contains("[8, 16384]"), e.getMessage());
            assertTrue(e.getMessage().contains(Long.toString(bad)), e.getMessage());
        }
        assertDoesNotThrow(() -> b.recordBytes(8));
        assertDoesNotThrow(() -> b.recordBytes(16384));
    }

    @Test
    void builderRejectsSlotsOutsideOneToFifteen() {
        final ReclaimDomain.Builder b = ReclaimDomain.builder(Scheme.HP);
        for (final int bad : new int[] {-1, 0, 16, 100}) {
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> b.slots(bad));
            assertTrue(e.getMessage().contains("[1, 15]"), e.getMessage());
        }
        assertDoesNotThrow(() -> b.slots(1));
        assertDoesNotThrow(() -> b.slots(ReclaimDomain.MAX_SLOTS));
    }

    @Test
    void builderRejectsNonPositiveTuning() {
        final ReclaimDomain.Builder b = ReclaimDomain.builder(Scheme.DEBRA_AF);
        assertThrows(IllegalArgumentException.class, () -> b.freesPerPin(0));
        assertThrows(IllegalArgumentException.class, () -> b.minCalls(0));
        assertThrows(IllegalArgumentException.class, () -> b.scanThreshold(0));
        assertThrows(IllegalArgumentException.class, () -> b.pool(-1, 1));
        assertThrows(IllegalArgumentException.class, () -> b.pool(1, -1));
        assertThrows(NullPointerException.class, () -> b.allocator(null));
        assertThrows(NullPointerException.class, () -> ReclaimDomain.builder((Scheme) null));
    }

    @Test
    void unknownSchemeIdListsTheKnownOnes() {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Scheme.of("nope"));
        assertTrue(e.getMessage().contains("'nope'"), e.getMessage());
        for (final Scheme s : Scheme.values()) {
            assertTrue(e.getMessage().contains(s.id()), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> ReclaimDomain.builder("nope"));
        assertThrows(IllegalArgumentException.class, () -> Scheme.of("EBR")); // ids are lower case
        for (final Scheme s : Scheme.values()) {
            assertEquals(s, Scheme.of(s.id()));
            assertEquals(s.id(), s.toString());
        }
    }
}
