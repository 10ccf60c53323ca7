package dev.limbo.allocator;

import static dev.limbo.allocator.TestSupport.assertAllReturned;
import static dev.limbo.allocator.TestSupport.assertPattern;
import static dev.limbo.allocator.TestSupport.writePattern;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.internal.PageMap;
import dev.limbo.core.Region;

import java.util.Arrays;
import java.util.Locale;
import java.util.Random;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

class LimboAllocatorFreeBatchTest {

    private static long sizeFor(final Random rnd) {
        final int dice = rnd.nextInt(100);
        return dice == 0 ? 16_385 + rnd.nextInt(100_000) : dice < 10 ? 1 + rnd.nextInt(16384) : 1 + rnd.nextInt(512);
    }

    private static void shuffle(final long[] a, final Random rnd) {
        for (int i = a.length - 1; i > 0; i--) {
            final int j = rnd.nextInt(i + 1);
            final long t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
    }

    private static void assertDisjoint(final LimboAllocator a, final long[] ptrs) {
        final long[] sorted = ptrs.clone();
        Arrays.sort(sorted);
        for (int i = 1; i < sorted.length; i++) {
            assertTrue(sorted[i - 1] + a.usableSize(sorted[i - 1]) <= sorted[i], "blocks overlap after a batch free");
        }
    }

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void tenThousandMixedBlocksFreedInOneBatchAllComeBackAndAreReusable(final FlushPolicy policy) throws Exception {
        final LimboAllocator a = LimboAllocator.builder().flushPolicy(policy).build();
        final Random rnd = new Random(policy.ordinal());
        for (int round = 0; round < 3; round++) {
            final int n = 10_000;
            final long[] ptrs = new long[n];
            final long[] sizes = new long[n];
            for (int i = 0; i < n; i++) {
                sizes[i] = sizeFor(rnd);
                ptrs[i] = a.allocate(sizes[i]);
                writePattern(ptrs[i], sizes[i]);
            }
            assertDisjoint(a, ptrs);
            for (int i = 0; i < n; i++) {
                assertPattern(ptrs[i], sizes[i]);
            }
            assertTrue(a.stats().bytesInUse() > 0);
            shuffle(ptrs, rnd);
            if (round == 1) {
                // from another thread: every superblock is owned by this thread's cache
                TestSupport.inFreshThread(() -> {
                    a.freeBatch(ptrs, n);
                    return null;
                });
            } else {
                a.freeBatch(ptrs, n);
            }
            assertEquals(0, a.stats().bytesInUse(), "round " + round);
            assertEquals(0, a.stats().largeBytes(), "round " + round);
        }
        assertAllReturned(a);
    }

    /**
     * A batch with one bad entry frees nothing, wherever the bad entry sorts: the large blocks in
     * front of it used to be freed while the batch was still being validated.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aBatchWithABadEntryFreesNothingOfIt(final boolean checked) {
        final LimboAllocator a = LimboAllocator.builder().checked(checked).build();
        final LimboAllocator other = LimboAllocator.create();
        final long[] good = new long[8];
        for (int i = 0; i < good.length; i++) {
            good[i] = a.allocate(i % 2 == 0 ? 200_000 : 48); // large and small, interleaved
        }
        final long large = good[0];
        final long small = good[1];
        final long foreign = other.allocate(64);
        final long unused = Region.global().size() - PageMap.PAGE; // a page nobody claimed
        final Object[][] cases = {
                {Region.global().size(), IllegalArgumentException.class, "outside"},
                {Long.MAX_VALUE & -8, IllegalArgumentException.class, "outside"},
                {small + 3, IllegalArgumentException.class, "misaligned"},
                {small + 8, IllegalArgumentException.class, "interior"},
                {large + 4096, IllegalArgumentException.class, "interior"},
                {large + PageMap.PAGE, IllegalArgumentException.class, "interior"},
                {foreign, IllegalArgumentException.class, "belongs to allocator"},
                {unused, IllegalStateException.class, "not allocated"},
                {large, IllegalStateException.class, "twice"},
                {small, IllegalStateException.class, "twice"},
        };
        final long inUse = a.stats().bytesInUse();
        for (final Object[] c : cases) {
            final long bad = (long) c[0];
            final long[] batch = Arrays.copyOf(good, good.length + 1);
            batch[good.length] = bad;
            @SuppressWarnings("unchecked")
            final Class<? extends Throwable> type = (Class<? extends Throwable>) c[1];
            final Throwable e = assertThrows(type, () -> a.freeBatch(batch, batch.length),
                    () -> String.format(Locale.ROOT, "entry 0x%x", bad));
            assertTrue(e.getMessage().contains((String) c[2]), e.getMessage());
            assertEquals(inUse, a.stats().bytesInUse(),
                    () -> String.format(Locale.ROOT, "a batch rejected for 0x%x freed some of its blocks", bad));
            for (final long p : good) {
                assertTrue(a.usableSize(p) > 0);
            }
        }
        a.freeBatch(good, good.length);
        assertAllReturned(a);
        other.free(foreign);
        assertAllReturned(other);
    }

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void aPartialBatchFreesOnlyItsPrefixAndEmptyBatchesAreFine(final FlushPolicy policy) {
        final LimboAllocator a = LimboAllocator.builder().flushPolicy(policy).build();
        final long[] ptrs = new long[100];
        for (int i = 0; i < ptrs.length; i++) {
            ptrs[i] = a.allocate(32);
        }
        final long[] copy = ptrs.clone();
        a.freeBatch(copy, 0);
        a.freeBatch(copy, 60);
        assertEquals(40 * 32, a.stats().bytesInUse());
        final long[] rest = Arrays.copyOfRange(copy, 60, 100);
        for (final long p : rest) {
            assertEquals(32, a.usableSize(p));
        }
        a.freeBatch(rest, rest.length);
        assertAllReturned(a);
    }
}
