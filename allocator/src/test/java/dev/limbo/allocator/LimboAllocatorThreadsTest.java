package dev.limbo.allocator;

import static dev.limbo.allocator.TestSupport.assertAllReturned;
import static dev.limbo.allocator.TestSupport.assertPattern;
import static dev.limbo.allocator.TestSupport.quiesce;
import static dev.limbo.allocator.TestSupport.reap;
import static dev.limbo.allocator.TestSupport.stripes;
import static dev.limbo.allocator.TestSupport.writePattern;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.internal.SizeClasses;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Many short-lived platform threads, and many virtual threads. */
@Timeout(120)
class LimboAllocatorThreadsTest {

    private static final long SLACK = 4L << 20;

    private final List<Throwable> failures = new CopyOnWriteArrayList<>();

    private void churn(final LimboAllocator a, final int threads, final int parallel,
                       final ConcurrentLinkedQueue<long[]> leftovers) throws InterruptedException {
        for (int started = 0; started < threads; started += parallel) {
            final List<Thread> batch = new ArrayList<>();
            for (int i = 0; i < parallel; i++) {
                batch.add(Thread.ofPlatform().start(() -> {
                    try {
                        final ThreadLocalRandom rnd = ThreadLocalRandom.current();
                        final List<long[]> mine = new ArrayList<>();
                        for (int k = 0; k < 100; k++) {
                            final long size = rnd.nextInt(50) == 0 ? 30_000 : 1 + rnd.nextInt(2048);
                            final long p = a.allocate(size);
                            writePattern(p, size);
                            mine.add(new long[] {p, size});
                        }
                        for (final long[] b : mine) {
                            if (rnd.nextInt(10) == 0) {
                                leftovers.add(b); // freed later by the main thread
                            } else {
                                assertPattern(b[0], b[1]);
                                a.free(b[0]);
                            }
                        }
                    } catch (final Throwable e) {
                        failures.add(e);
                    }
                }));
            }
            for (final Thread t : batch) {
                t.join();
            }
        }
        for (long[] b = leftovers.poll(); b != null; b = leftovers.poll()) {
            assertPattern(b[0], b[1]);
            a.free(b[0]);
        }
        assertEquals(List.of(), failures);
    }

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void committedMemoryDoesNotGrowWithTheNumberOfShortLivedThreads(final FlushPolicy policy) throws Exception {
        final LimboAllocator a = LimboAllocator.builder().flushPolicy(policy).build();
        final ConcurrentLinkedQueue<long[]> leftovers = new ConcurrentLinkedQueue<>();
        churn(a, 200, 4, leftovers);
        final AllocatorStats after200 = quiesce(a);
        assertEquals(0, after200.bytesInUse(), after200::toString);
        churn(a, 800, 4, leftovers);
        final AllocatorStats after1000 = quiesce(a);
        assertEquals(0, after1000.bytesInUse(), after1000::toString);
        assertTrue(after1000.pageBytesCommitted() <= after200.pageBytesCommitted() + SLACK,
                () -> "after 200 threads: " + after200 + "\nafter 1000 threads: " + after1000);
        assertTrue(after1000.regionBytesCommitted() <= after200.regionBytesCommitted() + SLACK,
                () -> "after 200 threads: " + after200 + "\nafter 1000 threads: " + after1000);
        assertTrue(after1000.descriptors() <= after200.descriptors() + 1024,
                () -> "descriptors after 200 threads: " + after200 + "\nafter 1000 threads: " + after1000);
        assertAllReturned(a);
    }

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void aTerminatedThreadsCachePassesWholeToTheNextNewThread(final FlushPolicy policy) throws Exception {
        final LimboAllocator a = LimboAllocator.builder().flushPolicy(policy).build();
        final long[] freedByFirst = new long[1];
        final long[] takenBySecond = new long[1];
        final Thread first = Thread.ofPlatform().start(() -> {
            freedByFirst[0] = a.allocate(64);
            a.free(freedByFirst[0]); // now the top of the dying thread's cached list
        });
        first.join();
        reap();
        final AllocatorStats spare = a.stats();
        assertEquals(0, spare.bytesInUse(), spare::toString);
        assertTrue(spare.cachedBytes() > 0, () -> "the spare cache's blocks are counted as cached: " + spare);
        final Thread second = Thread.ofPlatform().start(() -> {
            takenBySecond[0] = a.allocate(64);
            a.free(takenBySecond[0]);
        });
        second.join();
        // The block is in no superblock while the spare holds it, so only the spare can hand it out.
        assertEquals(freedByFirst[0], takenBySecond[0], "the new thread did not start with the dead thread's cache");
        assertAllReturned(a);
    }

    @Test
    void aSpareCachesNewThreadOwnsTheSuperblockItAllocatesFromSoRemoteFreesGoBackToIt() throws Exception {
        final LimboAllocator a = LimboAllocator.builder().flushPolicy(FlushPolicy.OWNER_RETURN).build();
        final Thread first = Thread.ofPlatform().start(() -> a.free(a.allocate(8))); // leaves a cached list
        first.join();
        reap(); // its cache becomes a spare, owning nothing
        final long[] handed = new long[1];
        final CountDownLatch allocated = new CountDownLatch(1);
        final CountDownLatch freed = new CountDownLatch(1);
        final Thread second = Thread.ofPlatform().start(() -> {
            handed[0] = a.allocate(8); // from the spare's list
            allocated.countDown();
            try {
                freed.await(); // stays alive, and the owner, while this thread frees and allocates
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        allocated.await();
        a.free(handed[0]); // a remote free
        final long next = a.allocate(8);
        freed.countDown();
        second.join();
        a.free(next);
        // Had the block's superblock been unowned, the free would have pushed it onto this thread's
        // cache, and the allocation would have handed it out again (passive false sharing).
        assertNotEquals(handed[0], next, "a remotely freed block of the spare's superblock came back to the freeing thread");
        assertAllReturned(a);
    }

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void tenThousandLiveVirtualThreadsShareTheStripedCachesInsteadOfEachGettingOne(final FlushPolicy policy)
            throws Exception {
        final LimboAllocator a = LimboAllocator.builder().flushPolicy(policy).build();
        final int threads = 10_000;
        final int size = 16;
        final long[] kept = new long[threads];
        final CountDownLatch allocated = new CountDownLatch(threads);
        final CountDownLatch exit = new CountDownLatch(1);
        final List<Thread> started = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            final int n = i;
            started.add(Thread.ofVirtual().start(() -> {
                try {
                    kept[n] = a.allocate(size);
                    a.free(a.allocate(size)); // a block back into whichever cache served it
                } catch (final Throwable e) {
                    failures.add(e);
                }
                allocated.countDown();
                try {
                    exit.await(); // stay alive: a cache of its own would still hold its blocks
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        allocated.await();
        assertEquals(List.of(), failures);
        final AllocatorStats live = a.stats();
        final ThreadCache[] stripes = stripes(a);
        // A cache fills with a whole superblock's free list, at most cap blocks of the class: with a
        // cache per virtual thread, 10,000 caches would hold about 10,000 x 64 KiB.
        final long perCache = (long) a.cap[SizeClasses.classOf(size)] * size;
        assertEquals((long) threads * size, live.bytesInUse(), live::toString);
        assertTrue(live.cachedBytes() > 0, () -> "the stripes hold the freed blocks: " + live);
        assertTrue(live.cachedBytes() <= stripes.length * perCache, () -> "more cached than " + stripes.length
                + " stripes of " + perCache + " bytes can hold: " + live);
        long taken = 0;
        for (final ThreadCache stripe : stripes) {
            taken += stripe.takenBytes;
        }
        assertTrue(taken > 0, "no stripe served the virtual threads");
        exit.countDown();
        for (final Thread t : started) {
            t.join();
        }
        for (final long p : kept) {
            a.free(p);
        }
        final AllocatorStats after = a.stats();
        assertEquals(0, after.bytesInUse(), after::toString); // trim() leaves the stripes' cached blocks
    }

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void tenThousandVirtualThreadsAllocateAndFreeAndReturnEveryByte(final FlushPolicy policy) throws Exception {
        final LimboAllocator a = LimboAllocator.builder().flushPolicy(policy).build();
        final AtomicInteger done = new AtomicInteger();
        final ConcurrentLinkedQueue<long[]> handedOver = new ConcurrentLinkedQueue<>();
        final List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            final int n = i;
            threads.add(Thread.ofVirtual().start(() -> {
                try {
                    final long[] ptrs = new long[5];
                    for (int k = 0; k < ptrs.length; k++) {
                        final long size = k == 4 && n % 100 == 0 ? 40_000 : 8 + (n * 7 + k * 131) % 3000;
                        ptrs[k] = a.allocate(size);
                        writePattern(ptrs[k], Math.min(size, 3000));
                        if (k == 1) {
                            Thread.yield(); // let others run on this carrier in between
                        }
                    }
                    for (int k = 0; k < ptrs.length; k++) {
                        final long size = k == 4 && n % 100 == 0 ? 40_000 : 8 + (n * 7 + k * 131) % 3000;
                        if (k == 0) {
                            handedOver.add(new long[] {ptrs[k], Math.min(size, 3000)}); // freed by another
                            continue;
                        }
                        assertPattern(ptrs[k], Math.min(size, 3000));
                        a.free(ptrs[k]);
                    }
                    for (long[] b = handedOver.poll(); b != null; b = handedOver.poll()) {
                        assertPattern(b[0], b[1]);
                        a.free(b[0]);
                    }
                    done.incrementAndGet();
                } catch (final Throwable e) {
                    failures.add(e);
                }
            }));
        }
        for (final Thread t : threads) {
            t.join();
        }
        for (long[] b = handedOver.poll(); b != null; b = handedOver.poll()) {
            assertPattern(b[0], b[1]);
            a.free(b[0]);
        }
        assertEquals(List.of(), failures);
        assertEquals(10_000, done.get());
        final AllocatorStats s = a.stats();
        assertEquals(0, s.bytesInUse(), s::toString);
        assertEquals(0, s.largeBytes(), s::toString);
        reap();
    }
}
