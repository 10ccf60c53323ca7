package dev.limbo.allocator;

import static dev.limbo.allocator.TestSupport.assertAllReturned;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Checked mode catches a stale free within the quarantine's reach, and exactly one of two racing frees. */
@Timeout(60)
class LimboAllocatorCheckedTest {

    private static LimboAllocator checked(final FlushPolicy policy) {
        return LimboAllocator.builder().checked(true).flushPolicy(policy).build();
    }

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void aStaleSmallFreeAfterTheSizeWasAllocatedAgainIsADoubleFree(final FlushPolicy policy) {
        try (LimboAllocator a = checked(policy)) {
            final long p = a.allocate(64);
            a.free(p);
            final long q = a.allocate(64);
            final IllegalStateException e = assertThrows(IllegalStateException.class, () -> a.free(p));
            assertTrue(e.getMessage().contains("not allocated"), e.getMessage());
            final long r = a.allocate(64);
            assertNotEquals(q, r, "the live block was handed out again");
            a.free(q);
            a.free(r);
            assertAllReturned(a);
        }
    }

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void aStaleLargeFreeAfterTheSizeWasAllocatedAgainIsADoubleFree(final FlushPolicy policy) {
        try (LimboAllocator a = checked(policy)) {
            final long p = a.allocate(100_000);
            a.free(p);
            final long q = a.allocate(100_000);
            final IllegalStateException e = assertThrows(IllegalStateException.class, () -> a.free(p));
            assertTrue(e.getMessage().contains("double free"), e.getMessage());
            assertThrows(IllegalStateException.class, () -> a.usableSize(p));
            final long r = a.allocate(100_000);
            assertNotEquals(q, r, "the live run was handed out again");
            a.free(q);
            a.free(r);
            assertAllReturned(a);
        }
    }

    @Test
    void exactlyOneOfTwoThreadsFreeingTheSameBlockAtOnceSucceeds() throws Exception {
        final int rounds = 20_000;
        try (LimboAllocator a = checked(FlushPolicy.OWNER_RETURN)) {
            final AtomicLong block = new AtomicLong();
            final AtomicInteger successes = new AtomicInteger();
            final AtomicInteger doubleFrees = new AtomicInteger();
            final AtomicInteger bad = new AtomicInteger();
            final CyclicBarrier start = new CyclicBarrier(3);
            final CyclicBarrier end = new CyclicBarrier(3);
            final Runnable freer = () -> {
                try {
                    for (int i = 0; i < rounds; i++) {
                        start.await();
                        try {
                            a.free(block.get());
                            successes.incrementAndGet();
                        } catch (final IllegalStateException e) {
                            doubleFrees.incrementAndGet();
                        } catch (final RuntimeException e) {
                            bad.incrementAndGet();
                        }
                        end.await();
                    }
                } catch (final Exception e) {
                    throw new AssertionError(e);
                }
            };
            final Thread t1 = new Thread(freer);
            final Thread t2 = new Thread(freer);
            t1.start();
            t2.start();
            for (int i = 0; i < rounds; i++) {
                block.set(a.allocate(16 + 16 * (i & 7)));
                start.await();
                end.await();
                assertEquals(0, bad.get(), "round " + i);
                assertEquals(1, successes.getAndSet(0), "successful frees in round " + i);
                assertEquals(1, doubleFrees.getAndSet(0), "rejected frees in round " + i);
            }
            t1.join();
            t2.join();
            assertAllReturned(a);
        }
    }

    @Test
    void theQuarantineNeverHoldsMoreThanItsBoundInBytes() throws Exception {
        final long bound = 256 << 10;
        try (LimboAllocator a = LimboAllocator.builder().debug(true).build()) {
            final ThreadCache cache = a.context();
            final Method quarantined = ThreadCache.class.getDeclaredMethod("quarantinedBytes");
            quarantined.setAccessible(true);
            final long[] ptrs = new long[64];
            for (int round = 0; round < 3; round++) {
                for (int i = 0; i < ptrs.length; i++) {
                    ptrs[i] = a.allocate(round == 1 ? 100_000 : 16_384);
                }
                long peak = 0;
                for (final long p : ptrs) {
                    a.free(p);
                    final long held = (long) quarantined.invoke(cache);
                    assertTrue(held <= bound, "quarantined " + held + " bytes, bound " + bound);
                    peak = Math.max(peak, held);
                }
                assertTrue(peak > bound / 2, "quarantined only " + peak + " bytes");
            }
            assertAllReturned(a);
        }
    }

    /** A checked allocator whose quarantine holds a 200,000-byte run and a small block at once. */
    private static LimboAllocator roomy() {
        return LimboAllocator.builder().checked(true).quarantineBytes(1 << 20).build();
    }

    @Test
    void trimReleasesTheQuarantineAndItsCommittedPages() {
        try (LimboAllocator a = roomy()) {
            a.free(a.allocate(1000)); // carves the descriptor table, which stays
            final long before = TestSupport.quiesce(a).pageBytesCommitted();
            final long small = a.allocate(1000);
            final long large = a.allocate(200_000);
            a.free(small);
            a.free(large);
            final AllocatorStats held = a.stats();
            assertTrue(held.cachedBytes() >= 1024 + 4 * 65536, held::toString);
            assertEquals(0, held.bytesInUse(), held::toString);
            assertEquals(0, held.largeBytes(), held::toString);
            a.trim();
            final AllocatorStats after = a.stats();
            assertEquals(0, after.cachedBytes(), after::toString);
            assertTrue(after.pageBytesCommitted() <= before, () -> "before " + before + ", after " + after);
            assertThrows(IllegalStateException.class, () -> a.free(large)); // freed for real: no owner any more
            assertAllReturned(a);
        }
    }

    @Test
    void closeReleasesQuarantinedRuns() {
        final LimboAllocator probe = LimboAllocator.create();
        final long before = TestSupport.quiesce(probe).pageBytesCommitted();
        final LimboAllocator a = roomy();
        a.free(a.allocate(200_000));
        a.free(a.allocate(1000));
        assertTrue(a.stats().cachedBytes() >= 4 * 65536, a.stats()::toString);
        a.close();
        final AllocatorStats after = TestSupport.quiesce(probe);
        assertTrue(after.pageBytesCommitted() <= before, () -> "before " + before + ", after " + after);
        probe.close();
    }

    @Test
    void aThreadsQuarantineIsReleasedWhenItsCacheRetires() throws Exception {
        try (LimboAllocator a = roomy()) {
            TestSupport.inFreshThread(() -> {
                a.free(a.allocate(200_000));
                a.free(a.allocate(1000));
                assertTrue(a.stats().cachedBytes() >= 4 * 65536, a.stats()::toString);
                return null;
            });
            assertAllReturned(a);
        }
    }

    @Test
    void aNegativeQuarantineBoundIsRejected() {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LimboAllocator.builder().quarantineBytes(-1));
        assertTrue(e.getMessage().contains("quarantine"), e.getMessage());
    }
}
