package dev.limbo.allocator;

import static dev.limbo.allocator.TestSupport.assertAllReturned;
import static dev.limbo.allocator.TestSupport.assertPattern;
import static dev.limbo.allocator.TestSupport.stripes;
import static dev.limbo.allocator.TestSupport.writePattern;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.core.Words;

import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A virtual thread that finds every striped cache busy allocates and frees directly on the
 * superblocks. The test holds all stripes itself to force that path.
 */
class LimboAllocatorDirectPathTest {

    private static void inVirtualThreadWithAllStripesBusy(final LimboAllocator a, final Runnable body)
            throws Exception {
        final ThreadCache[] stripes = stripes(a);
        for (final ThreadCache s : stripes) {
            assertTrue(s.tryClaim());
        }
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        try {
            final Thread v = Thread.ofVirtual().start(() -> {
                try {
                    body.run();
                } catch (final Throwable e) {
                    failure.set(e);
                }
            });
            v.join();
        } finally {
            for (final ThreadCache s : stripes) {
                s.release();
            }
        }
        if (failure.get() != null) {
            throw new AssertionError("virtual thread failed", failure.get());
        }
    }

    private static long sizeOf(final int i) {
        return i % 100 == 99 ? 50_000 : 8 + (i * 37L) % 2000;
    }

    private static void roundTrip(final LimboAllocator a) {
        final int n = 600;
        final long[] kept = new long[n];
        for (int round = 0; round < 3; round++) {
            final long[] ptrs = new long[n];
            for (int i = 0; i < n; i++) {
                ptrs[i] = a.allocate(sizeOf(i));
                writePattern(ptrs[i], sizeOf(i));
            }
            final long[] sorted = ptrs.clone();
            java.util.Arrays.sort(sorted);
            for (int i = 1; i < sorted.length; i++) {
                assertTrue(sorted[i - 1] + a.usableSize(sorted[i - 1]) <= sorted[i], "blocks overlap");
            }
            for (int i = 0; i < n; i++) {
                assertPattern(ptrs[i], sizeOf(i));
                Words.SEGMENT.asSlice(ptrs[i], sizeOf(i)).fill((byte) 0x42);
                if (round == 0 && i % 10 == 0) {
                    kept[i] = ptrs[i]; // keeps its superblock alive, so freed blocks are reused
                } else {
                    a.free(ptrs[i]);
                }
            }
        }
        for (final long p : kept) {
            if (p != 0) {
                a.free(p);
            }
        }
    }

    private static void assertStripesUnused(final LimboAllocator a) throws ReflectiveOperationException {
        for (final ThreadCache s : stripes(a)) {
            assertEquals(0, s.takenBytes, "a stripe was used: the direct path was not taken");
            assertEquals(0, s.returnedBytes, "a stripe was used: the direct path was not taken");
        }
    }

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void theDirectPathsGiveDisjointBlocksAndTakeThemAllBack(final FlushPolicy policy) throws Exception {
        final LimboAllocator a = LimboAllocator.builder().flushPolicy(policy).build();
        inVirtualThreadWithAllStripesBusy(a, () -> roundTrip(a));
        assertStripesUnused(a);
        assertEquals(0, a.stats().bytesInUse(), a.stats()::toString);
        assertAllReturned(a);
    }

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void inDebugModeBlocksFreedDirectlyAreNotReportedAsWrittenAfterFree(final FlushPolicy policy)
            throws Exception {
        final LimboAllocator a = LimboAllocator.builder().flushPolicy(policy).debug(true).build();
        inVirtualThreadWithAllStripesBusy(a, () -> roundTrip(a));
        assertStripesUnused(a);
        // and reused through an ordinary cache
        for (int i = 0; i < 3000; i++) {
            a.free(a.allocate(8 + (i * 37L) % 2000));
        }
        assertAllReturned(a);
    }
}
