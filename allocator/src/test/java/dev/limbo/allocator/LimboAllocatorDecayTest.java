package dev.limbo.allocator;

import static dev.limbo.allocator.TestSupport.assertAllReturned;
import static dev.limbo.allocator.TestSupport.ownPageBytes;
import static dev.limbo.allocator.TestSupport.quiesce;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.internal.DescriptorLayout;
import dev.limbo.allocator.internal.PageMap;
import dev.limbo.allocator.internal.SizeClasses;
import dev.limbo.core.Words;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The thread cache's decay (jemalloc's tcache GC, counted in events): a class a thread used once
 * goes back to its superblocks after a few passes of {@link ThreadCache#DECAY_EVENTS} events of
 * other classes, so that a burst of threads that then sit idle pins no superblock of it, and
 * {@link LimboAllocator#trim()} decommits it.
 */
@Timeout(120)
class LimboAllocatorDecayTest {

    private static final int ONCE = 1024; // the class used once
    private static final int BUSY = 16; // the class in use
    private static final int THREADS = 8;
    private static final int WORKING_SET = 64;
    /**
     * Passes until a class used once is gone: one moves its list aside, and each later one returns
     * 3/4 of what is left (rounded up), so log4 of the blocks per superblock, plus slack; under
     * OWNED the class is drained once its reserve sat untouched for IDLE_PASSES passes.
     */
    private static final int MAX_PASSES = Math.max(ThreadCache.IDLE_PASSES + 2,
            4 + (64 - Long.numberOfLeadingZeros(PageMap.PAGE / ONCE)) / 2);

    /** Allocates and frees one block of {@link #BUSY} until the cache holds no block of {@code sc}; returns the events. */
    private static long decayUntilGone(final LimboAllocator a, final ThreadCache cache, final int sc) {
        long events = 0;
        while (cache.cached(sc) > 0 && events < (long) MAX_PASSES * ThreadCache.DECAY_EVENTS) {
            a.free(a.allocate(BUSY));
            events += 2;
        }
        return events;
    }

    /**
     * One superblock per thread, plus the pages of the descriptors carved since {@code start}
     * (rounded up to whole pages).
     */
    private static long bound(final AllocatorStats start, final AllocatorStats after) {
        final long descriptorBytes = (after.descriptors() - start.descriptors()) * DescriptorLayout.SIZE;
        return (THREADS + (descriptorBytes + PageMap.PAGE - 1) / PageMap.PAGE) * PageMap.PAGE;
    }

    @Test
    void decayReturnsAClassUsedOnceAfterEventsOfAnotherClass() {
        try (LimboAllocator a = LimboAllocator.create()) {
            final ThreadCache cache = a.context();
            final int sc = SizeClasses.classOf(ONCE);
            a.free(a.allocate(ONCE));
            final int filled = cache.cached(sc);
            assertTrue(filled > 0, "the fill left the superblock's blocks in the cache");
            final long events = decayUntilGone(a, cache, sc);
            assertEquals(0, cache.cached(sc), () -> "still cached after " + events + " events: " + cache.cached(sc));
            assertTrue(events >= 2L * ThreadCache.DECAY_EVENTS - 2,
                    () -> "gone after " + events + " events: a list is set aside one pass and returned the next");
            final AllocatorStats s = a.stats();
            // At most: the busy class (one block in a loop) may have been drained in the same pass.
            assertTrue(s.superblocksFull() + s.superblocksPartial() <= 1, () -> "only the busy class's superblock: " + s);
            assertAllReturned(a);
        }
    }

    @ParameterizedTest
    @EnumSource(value = FlushPolicy.class, names = {"OWNER_RETURN", "OWNED"})
    void decayKeepsTheBlocksAClassInUseNeeds(final FlushPolicy policy) {
        try (LimboAllocator a = LimboAllocator.builder().flushPolicy(policy).build()) {
            final ThreadCache cache = a.context();
            final int sc = SizeClasses.classOf(BUSY);
            final long[] live = new long[WORKING_SET];
            for (int events = 0; events < 4 * ThreadCache.DECAY_EVENTS; events += 2 * WORKING_SET) {
                for (int i = 0; i < WORKING_SET; i++) {
                    live[i] = a.allocate(BUSY);
                }
                for (int i = 0; i < WORKING_SET; i++) {
                    a.free(live[i]);
                }
            }
            final int kept = cache.cached(sc);
            // A capped cache returns what the class does not need; an owned superblock is kept whole.
            final long most = policy == FlushPolicy.OWNED ? PageMap.PAGE / BUSY : PageMap.PAGE / BUSY - 1;
            assertTrue(kept >= WORKING_SET && kept <= most,
                    () -> "kept " + kept + ": the working set, at most " + most);
            assertAllReturned(a);
        }
    }

    /**
     * Threadtest's pattern (8-byte blocks) with a working set of 1.2 superblocks: allocate it, then
     * free it in the same order. Under OWNED, the frees of the current superblock's blocks and the
     * next round's pops of them touch no other owned superblock: with 8,192 blocks a superblock,
     * that is two decay intervals, so a pass finds the class untouched for a whole interval while
     * it is in use. Its superblocks stay owned: nothing goes back from this cache after the
     * first round.
     */
    @Test
    void decayKeepsTheOwnedSuperblocksOfAWorkingSetLargerThanOneSuperblock() {
        try (LimboAllocator a = LimboAllocator.create()) {
            final ThreadCache cache = a.context();
            final int blocks = (int) (PageMap.PAGE / Long.BYTES);
            final long[] live = new long[blocks + blocks / 5];
            long events = 0;
            long returned = -1;
            while (events < 16L * ThreadCache.DECAY_EVENTS) {
                for (int i = 0; i < live.length; i++) {
                    live[i] = a.allocate(Long.BYTES);
                }
                for (final long block : live) {
                    a.free(block);
                }
                events += 2L * live.length;
                if (returned < 0) {
                    returned = cache.returnedBytes; // after the first round
                }
            }
            assertEquals(returned, cache.returnedBytes, "bytes this cache gave back while the class was in use");
            assertAllReturned(a);
        }
    }

    @Test
    void afterABurstOfThreadsThatUsedAClassOnceAndSitIdleTrimLeavesOneSuperblockPerThread() throws Exception {
        try (LimboAllocator a = LimboAllocator.create()) {
            final AllocatorStats start = quiesce(a);
            final long before = start.pageBytesCommitted();
            final CountDownLatch decayed = new CountDownLatch(THREADS);
            final CountDownLatch finish = new CountDownLatch(1);
            final List<Throwable> failures = new CopyOnWriteArrayList<>();
            final long[] peaks = new long[THREADS];
            final List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                final int thread = t;
                threads.add(Thread.ofPlatform().start(() -> {
                    try {
                        final ThreadCache cache = a.context();
                        final long p = a.allocate(ONCE);
                        Words.sp(p, p); // touch it
                        a.free(p);
                        a.free(a.allocate(BUSY));
                        peaks[thread] = ownPageBytes(a.stats());
                        decayUntilGone(a, cache, SizeClasses.classOf(ONCE));
                        assertEquals(0, cache.cached(SizeClasses.classOf(ONCE)), "decayed");
                    } catch (final Throwable e) {
                        failures.add(e);
                    } finally {
                        decayed.countDown();
                    }
                    try {
                        finish.await(); // idle, alive, with its cache
                    } catch (final InterruptedException e) {
                        failures.add(e);
                    }
                }));
            }
            decayed.await();
            assertEquals(List.of(), failures);
            long peak = 0;
            for (final long p : peaks) {
                peak = Math.max(peak, p);
            }
            final long superblockBytes = peak;
            a.trim();
            final AllocatorStats after = a.stats();
            // Bound: each idle thread pins at most the one superblock of the class it still uses,
            // nothing of the class it used once (without the decay: two superblocks per thread).
            // Where membarrier exists, trim() drains the idle threads' caches and they pin nothing.
            assertTrue(after.pageBytesCommitted() - before <= bound(start, after),
                    () -> "before " + before + ", superblocks at the peak " + superblockBytes + " bytes, after " + after);
            assertTrue(superblockBytes >= 2L * PageMap.PAGE,
                    () -> "the burst took a superblock per class: " + superblockBytes + " bytes");
            finish.countDown();
            for (final Thread thread : threads) {
                thread.join();
            }
            assertEquals(List.of(), failures);
            assertAllReturned(a);
        }
    }

    @Test
    void trimHasAThreadInsideAnOperationDrainItsCacheAtItsNextAllocation() throws Exception {
        try (LimboAllocator a = LimboAllocator.create()) {
            final AllocatorStats start = quiesce(a);
            final long before = start.pageBytesCommitted();
            final CountDownLatch used = new CountDownLatch(THREADS);
            final CountDownLatch trimmed = new CountDownLatch(1);
            final CountDownLatch stepped = new CountDownLatch(THREADS);
            final CountDownLatch finish = new CountDownLatch(1);
            final List<Throwable> failures = new CopyOnWriteArrayList<>();
            final ThreadCache[] caches = new ThreadCache[THREADS];
            final List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                final int thread = t;
                threads.add(Thread.ofPlatform().start(() -> {
                    try {
                        caches[thread] = a.context();
                        a.free(a.allocate(ONCE));
                        assertTrue(caches[thread].enter(), "nobody holds the cache");
                        used.countDown();
                        trimmed.await(); // marked as inside an operation while trim() runs
                        caches[thread].leave();
                        a.free(a.allocate(BUSY)); // one event: the requested drain runs first
                        stepped.countDown();
                        finish.await();
                    } catch (final Throwable e) {
                        failures.add(e);
                    }
                }));
            }
            used.await();
            assertEquals(List.of(), failures);
            final int sc = SizeClasses.classOf(ONCE);
            for (final ThreadCache cache : caches) {
                assertTrue(cache.cached(sc) > 0, "each thread caches the superblock it used once");
            }
            a.trim(); // drains the caller's cache, asks the live threads to drain theirs
            for (final ThreadCache cache : caches) {
                assertTrue(cache.cached(sc) > 0, "trim() leaves the cache of a thread inside an operation alone");
            }
            trimmed.countDown();
            stepped.await();
            assertEquals(List.of(), failures);
            for (final ThreadCache cache : caches) {
                assertEquals(0, cache.cached(sc), "drained at the thread's next allocation");
            }
            a.trim();
            final AllocatorStats after = a.stats();
            // Bound: each thread pins the superblock of the class it allocated after the request,
            // nothing of the class it used before (without the request: two superblocks per thread).
            assertTrue(after.pageBytesCommitted() - before <= bound(start, after),
                    () -> "before " + before + ", after " + after);
            finish.countDown();
            for (final Thread thread : threads) {
                thread.join();
            }
            assertEquals(List.of(), failures);
            assertAllReturned(a);
        }
    }
}
