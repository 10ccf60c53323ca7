package dev.limbo.allocator;

import static dev.limbo.allocator.TestSupport.assertAllReturned;
import static dev.limbo.allocator.TestSupport.page;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.limbo.allocator.internal.PageMap;
import dev.limbo.allocator.internal.SizeClasses;
import dev.limbo.core.Participants;

import java.util.Arrays;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The stats snapshot while blocks are live, and what a flush keeps in the cache under each policy.
 * Each test uses a fresh allocator, used by one thread at a time, so the snapshots are exact.
 */
class LimboAllocatorStatsTest {

    private static final int SIZE = 1024;
    private static final int PER_SUPERBLOCK = (int) (PageMap.PAGE / SIZE);

    /** Allocates every block of two fresh superblocks, the first superblock's blocks first. */
    private static long[] twoFullSuperblocks(final LimboAllocator a) {
        final long[] blocks = new long[2 * PER_SUPERBLOCK];
        for (int i = 0; i < blocks.length; i++) {
            blocks[i] = a.allocate(SIZE);
        }
        assertEquals(page(blocks[0]), page(blocks[PER_SUPERBLOCK - 1]));
        assertEquals(page(blocks[PER_SUPERBLOCK]), page(blocks[blocks.length - 1]));
        return blocks;
    }

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void theStatsCountSuperblocksByStateAndTheBytesInUseAndInCaches(final FlushPolicy policy) {
        final LimboAllocator a = LimboAllocator.builder().flushPolicy(policy).build();
        final long[] first = new long[PER_SUPERBLOCK];
        for (int i = 0; i < first.length; i++) {
            first[i] = a.allocate(SIZE);
        }
        final AllocatorStats allInUse = a.stats();
        assertEquals(1, allInUse.superblocksFull(), allInUse::toString);
        assertEquals(0, allInUse.superblocksPartial(), allInUse::toString);
        assertEquals(0, allInUse.superblocksEmpty(), allInUse::toString);
        assertEquals((long) PER_SUPERBLOCK * SIZE, allInUse.bytesInUse(), allInUse::toString);
        assertEquals(0, allInUse.cachedBytes(), allInUse::toString);

        // One more block: a second superblock goes whole into the cache, which hands out one.
        final long extra = a.allocate(SIZE);
        final AllocatorStats cached = a.stats();
        assertEquals(2, cached.superblocksFull(), cached::toString);
        assertEquals((long) (PER_SUPERBLOCK + 1) * SIZE, cached.bytesInUse(), cached::toString);
        assertEquals((long) (PER_SUPERBLOCK - 1) * SIZE, cached.cachedBytes(), cached::toString);

        // Half the first superblock back, past the cache: FULL -> PARTIAL; under OWNED the first
        // superblock is still this thread's, so the batch waits on its remote list (FULL).
        final long[] half = new long[PER_SUPERBLOCK / 2];
        for (int i = 0; i < half.length; i++) {
            half[i] = first[2 * i];
        }
        a.freeBatch(half, half.length);
        final AllocatorStats partial = a.stats();
        final boolean owned = policy == FlushPolicy.OWNED;
        assertEquals(owned ? 2 : 1, partial.superblocksFull(), partial::toString);
        assertEquals(owned ? 0 : 1, partial.superblocksPartial(), partial::toString);
        assertEquals((long) (PER_SUPERBLOCK / 2 + 1) * SIZE, partial.bytesInUse(), partial::toString);
        assertEquals((long) (PER_SUPERBLOCK - 1) * SIZE, partial.cachedBytes(), partial::toString);

        // A large allocation counts page-rounded, in both largeBytes and bytesInUse.
        final long large = a.allocate(PageMap.PAGE + 1);
        final AllocatorStats withLarge = a.stats();
        assertEquals(2 * PageMap.PAGE, withLarge.largeBytes(), withLarge::toString);
        assertEquals((long) (PER_SUPERBLOCK / 2 + 1) * SIZE + 2 * PageMap.PAGE, withLarge.bytesInUse(),
                withLarge::toString);

        a.free(large);
        a.free(extra);
        for (int i = 1; i < first.length; i += 2) {
            a.free(first[i]);
        }
        assertAllReturned(a);
    }

    @Test
    void aFullPartialFlushCacheReturnsItsOlderHalfAndKeepsTheRecentlyFreedHalfOnTop() {
        final LimboAllocator a = LimboAllocator.builder().flushPolicy(FlushPolicy.PARTIAL_FLUSH).build();
        final int cap = a.cap[SizeClasses.classOf(SIZE)];
        assertEquals(PER_SUPERBLOCK, cap, "the cache holds one superblock of this class");
        final long[] blocks = twoFullSuperblocks(a);
        for (int i = 0; i < PER_SUPERBLOCK; i++) {
            a.free(blocks[i]); // the first superblock, oldest first: the cache is full, not yet flushed
        }
        assertEquals((long) cap * SIZE, a.stats().cachedBytes(), () -> a.stats().toString());

        final long trigger = blocks[PER_SUPERBLOCK];
        a.free(trigger); // finds the cache full: flush, then push
        final AllocatorStats after = a.stats();
        assertEquals((long) (cap / 2 + 1) * SIZE, after.cachedBytes(), () -> "kept half plus the freed block: " + after);
        assertEquals(1, after.superblocksPartial(), () -> "the returned half went to its superblock: " + after);
        assertEquals(1, after.superblocksFull(), after::toString);

        // The kept half is the most recently freed one, under the block that triggered the flush.
        final long[] expected = new long[cap / 2 + 1];
        expected[0] = trigger;
        for (int i = 1; i < expected.length; i++) {
            expected[i] = blocks[PER_SUPERBLOCK - i];
        }
        final long[] reused = new long[expected.length];
        for (int i = 0; i < reused.length; i++) {
            reused[i] = a.allocate(SIZE);
        }
        assertEquals(Arrays.toString(expected), Arrays.toString(reused));
        assertEquals(0, a.stats().cachedBytes(), () -> a.stats().toString());

        for (final long p : reused) {
            a.free(p);
        }
        for (int i = PER_SUPERBLOCK + 1; i < blocks.length; i++) {
            a.free(blocks[i]);
        }
        assertAllReturned(a);
    }

    @ParameterizedTest
    @EnumSource(value = FlushPolicy.class, names = {"FLUSH_ALL", "OWNER_RETURN"})
    void theOtherPoliciesEmptyAFullCacheOnAFlush(final FlushPolicy policy) {
        final LimboAllocator a = LimboAllocator.builder().flushPolicy(policy).build();
        final long[] blocks = twoFullSuperblocks(a);
        for (int i = 0; i <= PER_SUPERBLOCK; i++) {
            a.free(blocks[i]); // the last of these finds the cache full
        }
        final AllocatorStats after = a.stats();
        assertEquals(SIZE, after.cachedBytes(), () -> "only the block freed after the flush: " + after);
        for (int i = PER_SUPERBLOCK + 1; i < blocks.length; i++) {
            a.free(blocks[i]);
        }
        assertAllReturned(a);
    }

    /**
     * A thread allocates a block and dies, the test's thread frees it (so the two caches' counts
     * are +64 and -64 bytes), and a reaper's release hook moves the dead thread's cache to the
     * spares or retires it while the test's thread reads the stats: every read counts that cache
     * once, never twice or not at all (the hook and stats() hold the allocator's lifecycle monitor).
     */
    @Test
    void theStatsCountADeadThreadsCacheOnceWhileItsReleaseHookMovesIt() throws Exception {
        try (LimboAllocator a = LimboAllocator.create()) {
            final long[] handed = new long[1];
            for (int round = 0; round < 2_000; round++) {
                final Thread owner = Thread.ofPlatform().start(() -> handed[0] = a.allocate(64));
                owner.join();
                a.free(handed[0]);
                final Thread reaper = Thread.ofPlatform().start(Participants::reapTerminated);
                do {
                    final AllocatorStats s = a.stats();
                    assertEquals(0, s.bytesInUse(), () -> "while a hook moved a dead thread's cache: " + s);
                } while (reaper.isAlive());
                reaper.join();
            }
        }
    }
}
