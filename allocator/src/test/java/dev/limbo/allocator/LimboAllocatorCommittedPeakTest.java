package dev.limbo.allocator;

import static dev.limbo.allocator.TestSupport.quiesce;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.internal.BestFitPageAllocator;
import dev.limbo.allocator.internal.PageMap;
import dev.limbo.core.testing.Progress;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The page allocator commits no more than the work needs: under Threadtest (each thread allocates a
 * batch of 8-byte blocks and frees it, over and over), freed superblocks are retained and reused
 * instead of fresh pages being committed beside them. The region starts fragmented, as after other
 * work: single decommitted pages between pages in use, each a best fit for a superblock.
 */
@Timeout(180)
class LimboAllocatorCommittedPeakTest {

    private static final int THREADS = 2;
    private static final int BATCH = 10_000;
    private static final int SIZE = 8;
    private static final long ROUNDS = 400;
    private static final int HOLES = 256;

    @Test
    void underTwoThreadThreadtestThePeakCommittedStaysWithinTwiceLiveCachedAndOneSuperblockPerThread()
            throws InterruptedException {
        try (LimboAllocator a = LimboAllocator.create()) {
            final BestFitPageAllocator pages = BestFitPageAllocator.global();
            final long[] held = new long[HOLES];
            for (int i = 0; i < HOLES; i++) {
                final long hole = pages.allocate(1);
                held[i] = pages.allocate(1);
                pages.free(hole, 1);
            }
            final long before = quiesce(a).pageBytesCommitted(); // the trim decommits the holes
            pages.resetPeak();
            final Progress progress = new Progress(150, "thread 0 rounds", ROUNDS, "thread 1 rounds", ROUNDS);
            final List<Throwable> failures = new CopyOnWriteArrayList<>();
            final Thread[] threads = new Thread[THREADS];
            for (int t = 0; t < THREADS; t++) {
                final int side = t;
                threads[t] = Thread.ofPlatform().start(() -> {
                    final long[] blocks = new long[BATCH];
                    try {
                        while (!progress.done()) {
                            for (int i = 0; i < BATCH; i++) {
                                blocks[i] = a.allocate(SIZE);
                            }
                            for (int i = 0; i < BATCH; i++) {
                                a.free(blocks[i]);
                            }
                            progress.add(side, 1);
                        }
                    } catch (final Throwable e) {
                        failures.add(e);
                        progress.stop();
                    }
                });
            }
            for (final Thread t : threads) {
                t.join();
            }
            for (final long page : held) {
                pages.free(page, 1);
            }
            assertEquals(List.of(), failures);
            final long peak = pages.peakCommittedBytes() - before;
            // Per thread: the live batch, a full cache of the class (64 KiB by default), and one
            // superblock (a page) that a fill takes while the cache still holds blocks of another.
            final long live = (long) BATCH * SIZE;
            final long cached = 64 << 10;
            final long bar = 2L * THREADS * (live + cached + PageMap.PAGE);
            assertTrue(peak <= bar, () -> "peak committed +" + peak + " bytes (" + peak / PageMap.PAGE
                    + " pages), bar " + bar + " (" + bar / PageMap.PAGE + " pages); " + a.stats());
        }
    }
}
