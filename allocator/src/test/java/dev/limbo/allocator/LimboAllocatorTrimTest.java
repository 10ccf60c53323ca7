package dev.limbo.allocator;

import static dev.limbo.allocator.TestSupport.assertAllReturned;
import static dev.limbo.allocator.TestSupport.quiesce;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.internal.PageMap;
import dev.limbo.core.Words;

import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

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
            final long peak = a.stats().pageBytesCommitted() - before;
            assertTrue(peak >= THREADS * BLOCKS * 16L, "peak " + peak);
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

    /** The owner word of the page of {@code ptr}: it changes once the superblock is released. */
    private static long ownerWord(final long ptr) {
        return PageMap.owner(ptr >>> PageMap.PAGE_SHIFT);
    }

    @Test
    void aSizeClassUsedOnceGoesBackWithItsSuperblockWhileTheThreadKeepsWorkingOnAnother() throws Exception {
        final ExecutorService thread = Executors.newSingleThreadExecutor();
        try (LimboAllocator a = LimboAllocator.create()) {
            final Future<long[]> used = thread.submit(() -> {
                final long p = a.allocate(100);
                final long owner = ownerWord(p);
                a.free(p);
                for (int i = 0; i < 2 * ThreadCache.DECAY_INTERVAL; i++) { // two ticks
                    a.free(a.allocate(16));
                }
                return new long[] {p, owner, ownerWord(p)};
            });
            final long[] r = used.get();
            assertTrue(r[1] != r[2], () -> String.format("the 112-byte superblock of 0x%x is still the thread's (owner "
                    + "word %x) after two decay intervals of work on another class", r[0], r[2]));
        } finally {
            thread.shutdown();
        }
    }

    @Test
    void anIdlePlatformThreadGivesBackWhatItDidNotUseSinceTheLastTrimOnItsNextCall() throws Exception {
        final ExecutorService thread = Executors.newSingleThreadExecutor();
        try (LimboAllocator a = LimboAllocator.create()) {
            final long before = quiesce(a).pageBytesCommitted();
            final long[] blocks = new long[2_000];
            final long sample = thread.submit(() -> {
                for (int i = 0; i < blocks.length; i++) {
                    blocks[i] = a.allocate(1000);
                }
                for (final long p : blocks) {
                    a.free(p);
                }
                return blocks[0];
            }).get();
            final long owner = ownerWord(sample);
            final long held = a.stats().cachedBytes();
            assertTrue(held >= 1_000, "cached " + held);
            final Runnable oneCall = () -> a.free(a.allocate(16));
            for (int trims = 0; trims < 2; trims++) {
                a.trim(); // the thread is idle: trim asks for a tick on its next call
                thread.submit(oneCall).get();
            }
            assertTrue(owner != ownerWord(sample), "a superblock of the idle class is still held");
            a.trim();
            final AllocatorStats after = a.stats();
            assertTrue(after.cachedBytes() <= 64 << 10, () -> "cached: " + after); // the 16-byte class at most
            assertTrue(after.pageBytesCommitted() - before <= 2 * PageMap.PAGE, () -> "before " + before + ", after " + after);
        } finally {
            thread.shutdown();
        }
    }
}
