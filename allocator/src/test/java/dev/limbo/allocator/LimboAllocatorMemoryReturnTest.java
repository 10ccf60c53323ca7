package dev.limbo.allocator;

import static dev.limbo.allocator.TestSupport.assertAllReturned;
import static dev.limbo.allocator.TestSupport.ownPageBytes;
import static dev.limbo.allocator.TestSupport.quiesce;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.core.Words;

import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Freed memory goes back to the OS. The page allocator is shared by every allocator in this JVM,
 * so the assertions are on the change this test makes.
 */
class LimboAllocatorMemoryReturnTest {

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void afterFreeingTwoHundredMebibytesAndTrimmingAtMostATenthStaysCommitted(final FlushPolicy policy) {
        final LimboAllocator a = LimboAllocator.builder().flushPolicy(policy).build();
        final long before = quiesce(a).pageBytesCommitted();
        final Random rnd = new Random(11);
        final long target = 200L << 20;
        final long[] ptrs = new long[400_000];
        int n = 0;
        long allocated = 0;
        while (allocated < target) {
            final long size = n % 500 == 0 ? (1 << 20) + rnd.nextInt(1 << 20) : 64 + rnd.nextInt(4096 - 64 + 1);
            final long p = a.allocate(size);
            Words.sp(p, p); // touch it
            ptrs[n++] = p;
            allocated += size;
        }
        final AllocatorStats atPeak = a.stats();
        final long peak = atPeak.pageBytesCommitted();
        assertTrue(ownPageBytes(atPeak) >= target, atPeak::toString);
        // free in an order unlike the allocation order
        for (int i = 0; i < n; i += 2) {
            a.free(ptrs[i]);
        }
        for (int i = 1; i < n; i += 2) {
            a.free(ptrs[i]);
        }
        AllocatorStats settled = quiesce(a);
        // The Cleaner may free other allocators' pages into the reserve after the trim: trim until
        // it finds the reserve empty.
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (settled.pageBytesRetained() != 0 && System.nanoTime() - deadline < 0) {
            settled = quiesce(a);
        }
        final AllocatorStats after = settled;
        assertTrue(after.pageBytesCommitted() - before <= (peak - before) / 10,
                () -> "before " + before + ", peak " + peak + ", after " + after);
        assertEquals(0, after.pageBytesRetained(), after::toString);
        assertAllReturned(a);
    }
}
