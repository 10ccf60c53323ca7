package dev.limbo.reclaim;

import static dev.limbo.reclaim.ReclaimTestSupport.RECORD;
import static dev.limbo.reclaim.ReclaimTestSupport.leakedBytes;
import static dev.limbo.reclaim.ReclaimTestSupport.settle;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Words;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The misuse catalogue of the reclaim module: every public method with every kind of bad input,
 * each answered by a clear exception, after which the domain still works and accounts for every
 * byte. Cases tested at length elsewhere are listed here by name:
 *
 * <ul>
 *   <li>{@code ReclaimDomain.pin}: after close, and while closing ({@link BadInputTest},
 *       {@link DomainLifecycleTest}); an entry that throws (DomainLifecycleTest).</li>
 *   <li>{@code flush}: inside a section, after close (BadInputTest).</li>
 *   <li>{@code close}: inside a section, with other threads pinned past the timeout, with a step
 *       that fails (DomainLifecycleTest, BadInputTest).</li>
 *   <li>{@code requireSlots}, the builder's ranges and {@code Scheme.of} (BadInputTest).</li>
 *   <li>{@code Guard.protect}, {@code protectIfEqual}: slot out of range, after the outermost close,
 *       from another thread in debug mode (BadInputTest).</li>
 *   <li>{@code Guard.retire}: null, marked, twice, another domain's record, another allocator's
 *       block, an interior pointer, outside the region (BadInputTest).</li>
 * </ul>
 */
@Timeout(60)
class ReclaimMisuseCatalogueTest {

    private static final String ALL = "dev.limbo.reclaim.ReclaimTestSupport#allSchemes";

    private record Case(String what, Class<? extends Throwable> type, String message, Executable call) {
    }

    @ParameterizedTest
    @MethodSource(ALL)
    void everyBadCallThrowsClearlyAndTheDomainStaysIntact(final Scheme scheme) throws Throwable {
        final LimboAllocator a = LimboAllocator.create();
        final LimboAllocator other = LimboAllocator.create();
        final long baseline = settle(a);
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).slots(2).build();
        final long live = d.allocateExclusive();
        final long retired;
        try (Guard g = d.pin()) {
            retired = g.allocate();
            g.retire(retired);
        }
        final long raw = a.allocate(RECORD);
        final long foreign = other.allocate(RECORD + ReclaimDomain.TRAILER_BYTES);
        final Guard stale;
        try (Guard g = d.pin()) {
            stale = g;
        }
        final List<Case> cases = new ArrayList<>(List.of(
                new Case("freeExclusive(0)", IllegalArgumentException.class, "not a record pointer",
                        () -> d.freeExclusive(0)),
                new Case("freeExclusive(negative)", IllegalArgumentException.class, "not a record pointer",
                        () -> d.freeExclusive(-64)),
                new Case("freeExclusive(marked)", IllegalArgumentException.class, "not a record pointer",
                        () -> d.freeExclusive(live | 1)),
                new Case("freeExclusive(misaligned)", IllegalArgumentException.class, "not a record pointer",
                        () -> d.freeExclusive(live + 4)),
                new Case("freeExclusive(interior)", IllegalArgumentException.class, "not a live record",
                        () -> d.freeExclusive(live + 8)),
                new Case("freeExclusive(retired record)", IllegalStateException.class, "retired already",
                        () -> d.freeExclusive(retired)),
                new Case("freeExclusive(block straight from the allocator)", IllegalArgumentException.class,
                        "not a live record", () -> d.freeExclusive(raw)),
                new Case("freeExclusive(another allocator's block)", IllegalArgumentException.class,
                        "not a live record", () -> d.freeExclusive(foreign)),
                new Case("freeExclusive(outside the region)", IllegalArgumentException.class, "outside the off-heap region",
                        () -> d.freeExclusive(1L << 60)),
                new Case("guard.allocate() after its outermost close", IllegalStateException.class,
                        "outside its pinned section", stale::allocate),
                new Case("guard.retire() after its outermost close", IllegalStateException.class,
                        "outside its pinned section", () -> stale.retire(live)),
                new Case("guard.close() once more", IllegalStateException.class, "closed more often than pinned",
                        stale::close),
                new Case("builder(null id)", IllegalArgumentException.class, "unknown reclamation scheme 'null'",
                        () -> ReclaimDomain.builder((String) null)),
                new Case("builder.heavyBarrierInterval(null)", NullPointerException.class, null,
                        () -> ReclaimDomain.builder(scheme).heavyBarrierInterval(null)),
                new Case("builder.heavyBarrierInterval(negative)", IllegalArgumentException.class, "must not be negative",
                        () -> ReclaimDomain.builder(scheme).heavyBarrierInterval(Duration.ofMillis(-1))),
                new Case("builder.closeTimeout(null)", NullPointerException.class, null,
                        () -> ReclaimDomain.builder(scheme).closeTimeout(null)),
                new Case("builder.closeTimeout(negative)", IllegalArgumentException.class, "must not be negative",
                        () -> ReclaimDomain.builder(scheme).closeTimeout(Duration.ofSeconds(-1)))));
        for (final Case c : cases) {
            final Throwable e = assertThrows(c.type(), c.call(), c.what());
            if (c.message() != null) {
                assertTrue(e.getMessage() != null && e.getMessage().contains(c.message()),
                        () -> c.what() + ": unclear message: " + e.getMessage());
            }
        }
        // intact: the live record is still live, the domain pins, retires and frees as before
        assertEquals(1, d.stats().retired());
        try (Guard g = d.pin()) {
            g.retire(live);
            g.retire(g.allocate());
        }
        d.flush();
        final ReclaimStats s = d.stats();
        assertEquals(3, s.retired());
        assertEquals(s.retired() - s.freed(), s.inLimbo());
        d.close();
        final List<Case> closed = List.of(
                new Case("allocateExclusive() after close", IllegalStateException.class, "is closed", d::allocateExclusive),
                new Case("freeExclusive() after close", IllegalStateException.class, "is closed", () -> d.freeExclusive(raw)),
                new Case("pin() after close", IllegalStateException.class, "is closed", d::pin),
                new Case("flush() after close", IllegalStateException.class, "is closed", d::flush));
        for (final Case c : closed) {
            final Throwable e = assertThrows(c.type(), c.call(), c.what());
            assertTrue(e.getMessage().contains(c.message()), () -> c.what() + ": unclear message: " + e.getMessage());
        }
        a.free(raw);
        other.free(foreign);
        assertEquals(baseline + leakedBytes(scheme, 3), settle(a));
    }

    /** The escape hatch refuses a record freed twice, and the record is not handed out twice. */
    @Test
    void freeExclusiveTwiceIsRefused() {
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = ReclaimDomain.builder(Scheme.EBR).allocator(a).recordBytes(RECORD).build();
        try {
            final long x = d.allocateExclusive();
            Words.sp(x, 1);
            d.freeExclusive(x);
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> d.freeExclusive(x));
            assertTrue(e.getMessage().contains("not a live record"), e.getMessage());
            final long y = d.allocateExclusive();
            final long z = d.allocateExclusive();
            assertTrue(y != z);
            d.freeExclusive(y);
            d.freeExclusive(z);
        } finally {
            d.close();
        }
    }
}
