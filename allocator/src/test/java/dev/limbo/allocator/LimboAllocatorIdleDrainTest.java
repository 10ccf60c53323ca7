package dev.limbo.allocator;

import static dev.limbo.allocator.TestSupport.assertAllReturned;
import static dev.limbo.allocator.TestSupport.assertPattern;
import static dev.limbo.allocator.TestSupport.writePattern;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.limbo.allocator.internal.SizeClasses;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link LimboAllocator#trim()} drains the caches of live platform threads that are outside the
 * allocator ({@link IdleCacheHandshake}): parked threads give everything back while they stay
 * parked, under every flush policy and in checked mode (quarantine included), and an owner whose
 * cache trim() holds is served by the striped caches meanwhile. Needs membarrier (the kernel's,
 * through {@code Native}); without it the handshake is off and these tests are skipped.
 */
@Timeout(120)
class LimboAllocatorIdleDrainTest {

    private static final int THREADS = 4;
    private static final int SMALL = 16;
    private static final int MEDIUM = 1024;
    private static final int BLOCKS = 200;

    static Stream<Arguments> allocators() {
        return Stream.of(
                Arguments.of("owned", (Supplier<LimboAllocator>) LimboAllocator::create),
                Arguments.of("owner return", (Supplier<LimboAllocator>) () ->
                        LimboAllocator.builder().flushPolicy(FlushPolicy.OWNER_RETURN).build()),
                Arguments.of("partial flush", (Supplier<LimboAllocator>) () ->
                        LimboAllocator.builder().flushPolicy(FlushPolicy.PARTIAL_FLUSH).build()),
                Arguments.of("checked", (Supplier<LimboAllocator>) () ->
                        LimboAllocator.builder().checked(true).build()));
    }

    /** Allocates and frees {@code BLOCKS} blocks of two classes, checking each block's pattern. */
    private static void churn(final LimboAllocator a) {
        final long[] blocks = new long[BLOCKS];
        for (int i = 0; i < BLOCKS; i++) {
            final int size = i % 4 == 0 ? MEDIUM : SMALL;
            blocks[i] = a.allocate(size);
            writePattern(blocks[i], size);
        }
        for (int i = 0; i < BLOCKS; i++) {
            assertPattern(blocks[i], i % 4 == 0 ? MEDIUM : SMALL);
            a.free(blocks[i]);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("allocators")
    void trimDrainsTheCachesOfThreadsParkedOutsideTheAllocator(final String name,
            final Supplier<LimboAllocator> allocator) throws Exception {
        assumeTrue(IdleCacheHandshake.ENABLED, "membarrier is not available: trim() asks the threads instead");
        try (LimboAllocator a = allocator.get()) {
            final CountDownLatch used = new CountDownLatch(THREADS);
            final CountDownLatch trimmed = new CountDownLatch(1);
            final List<Throwable> failures = new CopyOnWriteArrayList<>();
            final ThreadCache[] caches = new ThreadCache[THREADS];
            final List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                final int thread = t;
                threads.add(Thread.ofPlatform().start(() -> {
                    try {
                        caches[thread] = a.context();
                        churn(a);
                        used.countDown();
                        trimmed.await(); // parked, outside the allocator, while trim() runs
                        churn(a); // the drained cache works as before
                    } catch (final Throwable e) {
                        failures.add(e);
                    }
                }));
            }
            used.await();
            assertEquals(List.of(), failures);
            for (final ThreadCache cache : caches) {
                assertTrue(cache.cachedBytes() > 0, "each thread keeps the blocks it freed");
            }
            assertAllReturned(a); // its trim() drains the parked threads' caches
            for (final ThreadCache cache : caches) {
                assertEquals(0, cache.cachedBytes(), "drained while its thread is parked");
            }
            trimmed.countDown();
            for (final Thread thread : threads) {
                thread.join();
            }
            assertEquals(List.of(), failures);
            assertAllReturned(a);
        }
    }

    @Test
    void aThreadWhoseLastFreeWasRejectedIsDrainedToo() throws Exception {
        assumeTrue(IdleCacheHandshake.ENABLED, "membarrier is not available: trim() asks the threads instead");
        try (LimboAllocator a = LimboAllocator.create()) {
            final CountDownLatch used = new CountDownLatch(1);
            final CountDownLatch trimmed = new CountDownLatch(1);
            final List<Throwable> failures = new CopyOnWriteArrayList<>();
            final ThreadCache[] cache = new ThreadCache[1];
            final Thread thread = Thread.ofPlatform().start(() -> {
                try {
                    cache[0] = a.context();
                    final long p = a.allocate(SMALL);
                    a.free(p);
                    final IllegalStateException rejected = assertThrows(IllegalStateException.class, () -> a.free(p));
                    assertTrue(rejected.getMessage().contains("double free"), rejected::getMessage);
                    used.countDown();
                    trimmed.await(); // parked after an operation that threw
                } catch (final Throwable e) {
                    failures.add(e);
                }
            });
            used.await();
            assertEquals(List.of(), failures);
            assertTrue(cache[0].cachedBytes() > 0, "the thread keeps the block it freed");
            assertAllReturned(a);
            assertEquals(0, cache[0].cachedBytes(), "drained while its thread is parked");
            trimmed.countDown();
            thread.join();
            assertEquals(List.of(), failures);
        }
    }

    @Test
    void anOwnerWhoseCacheTrimHoldsIsServedByTheStripes() {
        assumeTrue(IdleCacheHandshake.ENABLED, "membarrier is not available: trim() never holds a thread's cache");
        try (LimboAllocator a = LimboAllocator.create()) {
            final ThreadCache cache = a.context();
            final int sc = SizeClasses.classOf(SMALL);
            a.free(a.allocate(SMALL));
            final int cached = cache.cached(sc);
            assertTrue(cache.tryClaim(), "nobody holds the cache");
            try { // as trim() holds it while it drains
                final long p = a.allocate(SMALL);
                final long q = cache.allocate(SMALL); // the context's path too
                writePattern(p, SMALL);
                writePattern(q, SMALL);
                assertPattern(p, SMALL);
                a.free(p);
                cache.free(q);
                assertEquals(cached, cache.cached(sc), "the held cache was not touched");
            } finally {
                cache.release();
            }
            a.free(a.allocate(SMALL));
            assertEquals(cached, cache.cached(sc), "the released cache is the owner's again");
            assertAllReturned(a);
        }
    }
}
