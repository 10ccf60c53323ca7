package dev.limbo.reclaim;

import static dev.limbo.reclaim.ReclaimTestSupport.RECORD;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.LimboAllocator;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** quiescent(), offline() and online(): their contract, for every scheme. */
@Timeout(60)
class QuiescenceTest {

    @ParameterizedTest
    @MethodSource("dev.limbo.reclaim.ReclaimTestSupport#allSchemes")
    void quiescenceAndOfflineStretchesKeepTheirContract(final Scheme scheme) {
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).build();
        try {
            d.quiescent(); // outside a section: fine, repeatedly
            d.quiescent();
            try (Guard g = d.pin()) {
                g.retire(g.allocate());
                final IllegalStateException q = assertThrows(IllegalStateException.class, d::quiescent);
                assertTrue(q.getMessage().contains("quiescent() inside a pinned section"), q.getMessage());
                assertThrows(IllegalStateException.class, d::offline);
                assertEquals(1, g.depth());
            }
            final IllegalStateException notOffline = assertThrows(IllegalStateException.class, d::online);
            assertTrue(notOffline.getMessage().contains("without offline()"), notOffline.getMessage());
            d.offline();
            final IllegalStateException twice = assertThrows(IllegalStateException.class, d::offline);
            assertTrue(twice.getMessage().contains("offline already"), twice.getMessage());
            final IllegalStateException pin = assertThrows(IllegalStateException.class, d::pin);
            assertTrue(pin.getMessage().contains("while offline"), pin.getMessage());
            d.online();
            try (Guard g = d.pin()) {
                assertEquals(1, g.depth());
                g.retire(g.allocate());
            }
            d.flush();
            assertEquals(2, d.stats().retired());
        } finally {
            d.close();
        }
        assertThrows(IllegalStateException.class, d::quiescent);
        assertThrows(IllegalStateException.class, d::offline);
        assertThrows(IllegalStateException.class, d::online);
    }
}
