package dev.limbo.allocator;

import static dev.limbo.allocator.TestSupport.assertAllReturned;
import static dev.limbo.allocator.TestSupport.ownPageBytes;
import static dev.limbo.allocator.TestSupport.quiesce;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.core.Words;

import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link LimboAllocator#trim()} gives back what idle caches hold: the striped caches of virtual
 * threads, and (through decay) the classes a platform thread stopped using. The page allocator is
 * shared by every allocator in this JVM, so the assertions are on the change each test makes.
 */
@Timeout(120)
class LimboAllocatorTrimTest {

    private static final int THREADS = 1_000;
    private static final int BLOCKS = 32;

    @Test
    void afterAVirtualThreadBurstFreedEveryBlockTrimLeavesAtMostOnePercentOfThePeakCommitted() throws Exception {
        try (LimboAllocator a = LimboAllocator.create()) {
            final long before = quiesce(a).pageBytesCommitted();
            final long[][] blocks = new long[THREADS][BLOCKS];
            final List<Throwable> failures = new CopyOnWriteArrayList<>();
            try (ExecutorService burst = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int t = 0; t < THREADS; t++) {
                    final int thread = t;
                    burst.execute(() -> {
                        try {
                            final SplittableRandom rnd = new SplittableRandom(thread);
                            for (int i = 0; i < BLOCKS; i++) {
                                final long p = a.allocate(16 + rnd.nextInt(2048));
                                Words.sp(p, p); // touch it
                                blocks[thread][i] = p;
                            }
                        } catch (final Throwable e) {
                            failures.add(e);
                        }
                    });
                }
            }
            assertEquals(List.of(), failures);
            final AllocatorStats atPeak = a.stats();
            final long peak = atPeak.pageBytesCommitted() - before;
            assertTrue(ownPageBytes(atPeak) >= THREADS * BLOCKS * 16L, atPeak::toString);
            // Other virtual threads free them, each the blocks of another allocating thread, so that
            // the blocks land in stripes other than the ones they came from.
            try (ExecutorService burst = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int t = 0; t < THREADS; t++) {
                    final int thread = (t * 7 + 3) % THREADS;
                    burst.execute(() -> {
                        try {
                            for (int i = BLOCKS - 1; i >= 0; i--) {
                                assertEquals(blocks[thread][i], Words.lp(blocks[thread][i]), "block overwritten");
                                a.free(blocks[thread][i]);
                            }
                        } catch (final Throwable e) {
                            failures.add(e);
                        }
                    });
                }
            }
            assertEquals(List.of(), failures);
            a.trim();
            final AllocatorStats after = a.stats();
            assertTrue(after.pageBytesCommitted() - before <= peak / 100,
                    () -> "before " + before + ", peak +" + peak + ", after " + after);
            assertEquals(0, after.cachedBytes(), after::toString);
            assertAllReturned(a);
        }
    }
}
