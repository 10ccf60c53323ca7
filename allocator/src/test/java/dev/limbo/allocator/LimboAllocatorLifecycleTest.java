package dev.limbo.allocator;

import static dev.limbo.core.testing.Misuse.rejects;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.internal.BestFitPageAllocator;
import dev.limbo.allocator.internal.PageMap;
import dev.limbo.core.Region;
import dev.limbo.core.Words;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * close() gives back everything an allocator holds, a closed allocator refuses every call, ids and
 * memory are reused, and an allocator nobody references is collected and closed by the cleaner.
 * (Before, every allocator kept its descriptor chunk, its heap objects and its release hook for
 * ever, and the 65,536th threw.)
 */
class LimboAllocatorLifecycleTest {

    private static long pageOf(final long ptr) {
        return ptr >>> PageMap.PAGE_SHIFT;
    }

    /** Allocates small and large blocks from this thread and from a thread that ends. */
    private static long[] use(final LimboAllocator a) throws InterruptedException {
        final long[] ptrs = {a.allocate(64), a.allocate(5000), a.allocate(1 << 20), 0};
        final Thread t = new Thread(() -> ptrs[3] = a.allocate(200)); // its cache stays behind, a spare
        t.start();
        t.join();
        for (final long p : ptrs) {
            Words.sp(p, p);
        }
        return ptrs;
    }

    @Test
    void closeGivesBackEveryBlockAndItsCachesAndTheAllocatorStaysIntactForOthers() throws Exception {
        final long claimed = Integrity.claimed();
        final LimboAllocator a = LimboAllocator.builder().checked(true).build();
        final long[] ptrs = use(a);
        a.free(a.allocate(64)); // a cached block too
        a.close();
        assertTrue(a.isClosed());
        for (final long p : ptrs) {
            assertEquals(0, PageMap.owner(pageOf(p)), () -> "page of 0x" + Long.toHexString(p) + " still owned");
        }
        a.close(); // idempotent
        final LimboAllocator b = LimboAllocator.create();
        final long[] again = use(b);
        for (final long p : again) {
            b.free(p);
        }
        b.trim();
        Integrity.assertIntact(b, claimed);
        b.close();
    }

    @Test
    void createUseAndCloseInALoopLeaksNoAddressSpaceAndNoCommittedMemory() throws Exception {
        final Region region = Region.global();
        for (int i = 0; i < 2; i++) { // warm: the page allocator grows to what one cycle needs
            final LimboAllocator a = LimboAllocator.create();
            use(a);
            a.close();
        }
        final long claimedBefore = region.claimedBytes();
        final long committedBefore = BestFitPageAllocator.global().committedBytes();
        final int cycles = 2_000;
        for (int i = 0; i < cycles; i++) {
            final LimboAllocator a = LimboAllocator.create();
            if (i % 100 == 0) {
                use(a);
            } else {
                a.allocate(64);
                a.free(a.allocate(5000));
                a.allocate(1 << 20);
            }
            a.close();
        }
        // Before close() existed, each allocator kept its 64 KiB descriptor chunk: 125 MiB here.
        final long claimedGrowth = region.claimedBytes() - claimedBefore;
        assertTrue(claimedGrowth <= 8L << 20,
                "region claims grew by " + claimedGrowth + " bytes over " + cycles + " cycles");
        final long committedGrowth = BestFitPageAllocator.global().committedBytes() - committedBefore;
        assertTrue(committedGrowth <= 8L << 20, "committed pages grew by " + committedGrowth + " bytes");
    }

    @Test
    @Timeout(300)
    void moreAllocatorsThanThereAreIdsCanBeCreatedWhenEachIsClosed() {
        for (int i = 0; i < Lifecycle.MAX_OPEN + 5_000; i++) {
            LimboAllocator.create().close();
        }
        final LimboAllocator a = LimboAllocator.create();
        a.free(a.allocate(64));
        a.close();
    }

    @Test
    void aClosedAllocatorRejectsEveryCallNamingTheProblem() throws Exception {
        final LimboAllocator a = LimboAllocator.create();
        final ThreadCache context = a.context();
        final SegmentAllocator segments = a.asSegmentAllocator();
        final MemorySegment segment = segments.allocate(16);
        final long p = a.allocate(64);
        final long large = a.allocate(1 << 20);
        a.close();
        final String[] words = {"closed", "limbo#"};
        rejects(IllegalStateException.class, () -> a.allocate(64), words);
        rejects(IllegalStateException.class, () -> a.allocate(1 << 20), words);
        rejects(IllegalStateException.class, () -> a.allocateZeroed(64), words);
        rejects(IllegalStateException.class, () -> a.free(p), words);
        rejects(IllegalStateException.class, () -> a.free(large), words);
        rejects(IllegalStateException.class, () -> a.free(0), words);
        rejects(IllegalStateException.class, () -> a.free(segment), words);
        rejects(IllegalStateException.class, () -> a.freeBatch(new long[] {p}, 1), words);
        rejects(IllegalStateException.class, () -> a.usableSize(p), words);
        rejects(IllegalStateException.class, () -> a.reallocate(p, 128), words);
        rejects(IllegalStateException.class, () -> a.reallocate(0, 128), words);
        rejects(IllegalStateException.class, a::asSegmentAllocator, words);
        rejects(IllegalStateException.class, () -> segments.allocate(16), words);
        rejects(IllegalStateException.class, a::context, words);
        rejects(IllegalStateException.class, () -> context.allocate(64), words);
        rejects(IllegalStateException.class, () -> context.free(p), words);
        rejects(IllegalStateException.class, a::trim, words);
        rejects(IllegalStateException.class, a::stats, words);
        final AtomicReference<Throwable> fromVirtual = new AtomicReference<>();
        Thread.ofVirtual().start(() -> {
            try {
                a.allocate(64);
            } catch (final Throwable e) {
                fromVirtual.set(e);
            }
        }).join();
        assertTrue(fromVirtual.get() instanceof IllegalStateException e && e.getMessage().contains("closed"),
                () -> "a virtual thread's allocate: " + fromVirtual.get());
        assertTrue(a.toString().startsWith("limbo#"), a::toString);
    }

    @Test
    void theSharedAllocatorRefusesToClose() {
        final LimboAllocator shared = LimboAllocator.shared();
        rejects(IllegalStateException.class, shared::close, "shared()", "cannot be closed");
        assertTrue(!shared.isClosed());
        shared.free(shared.allocate(64));
    }

    /** Uses a new allocator from this thread and from one that stays alive; returns a weak reference to it. */
    private static WeakReference<LimboAllocator> useAndDrop(final long[] ptrs, final CountDownLatch release)
            throws Exception {
        final LimboAllocator a = LimboAllocator.create();
        System.arraycopy(use(a), 0, ptrs, 0, 4);
        a.free(a.allocate(64)); // this thread's cache holds a block
        final AtomicReference<LimboAllocator> handOver = new AtomicReference<>(a);
        final CountDownLatch used = new CountDownLatch(1);
        final Thread helper = new Thread(() -> {
            useOnce(handOver); // in a frame of its own, which ends before the wait: no local keeps it
            used.countDown();
            try {
                release.await(); // alive, holding its participant id and its cache, until the test ends
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        helper.setDaemon(true);
        helper.start();
        used.await();
        return new WeakReference<>(a);
    }

    private static void useOnce(final AtomicReference<LimboAllocator> handOver) {
        final LimboAllocator a = handOver.getAndSet(null);
        a.free(a.allocate(128));
    }

    @Test
    void anAllocatorNobodyReferencesIsCollectedAndItsMemoryGivenBack() throws Exception {
        final long[] ptrs = new long[4];
        final CountDownLatch release = new CountDownLatch(1);
        try {
            final WeakReference<LimboAllocator> ref = useAndDrop(ptrs, release);
            final long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (ref.get() != null) {
                assertTrue(System.nanoTime() < deadline,
                        "the allocator was not collected in 60 s: something references it");
                System.gc();
            }
            assertNull(ref.get());
            // The cleaner then closes it: every page it owned is given back.
            for (final long p : ptrs) {
                while (PageMap.owner(pageOf(p)) != 0) {
                    assertTrue(System.nanoTime() < deadline,
                            "the cleaner did not close the collected allocator in 60 s");
                    System.gc();
                    TimeUnit.MILLISECONDS.sleep(1); // waiting for the cleaner thread, not timing anything
                }
            }
        } finally {
            release.countDown();
        }
    }
}
