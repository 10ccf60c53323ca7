package dev.limbo.reclaim;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Words;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.junit.jupiter.api.Assertions.assertEquals;

class SmokeTest {

    @ParameterizedTest
    @EnumSource(Scheme.class)
    void retireFlushClose(final Scheme scheme) {
        final LimboAllocator alloc = LimboAllocator.create();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(alloc).recordBytes(32).build();
        final long cell = alloc.allocateZeroed(8);
        for (int i = 0; i < 10_000; i++) {
            try (Guard g = d.pin()) {
                final long node = g.allocate();
                Words.sr(cell, node);
                assertEquals(node, g.protect(0, cell));
                g.retire(node);
            }
        }
        d.flush();
        final ReclaimStats s = d.stats();
        System.out.println(s);
        assertEquals(10_000, s.retired());
        if (scheme != Scheme.NONE) {
            assertEquals(10_000, s.freed());
        }
        d.close();
        alloc.free(cell);
        alloc.trim();
        System.out.println(alloc.stats());
    }
}
