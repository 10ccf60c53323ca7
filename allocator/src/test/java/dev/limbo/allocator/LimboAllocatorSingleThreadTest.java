package dev.limbo.allocator;

import static dev.limbo.allocator.TestSupport.assertAllReturned;
import static dev.limbo.allocator.TestSupport.assertPattern;
import static dev.limbo.allocator.TestSupport.writePattern;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.internal.PageMap;
import dev.limbo.allocator.internal.SizeClasses;
import dev.limbo.core.Words;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class LimboAllocatorSingleThreadTest {

    private static LimboAllocator allocator(final FlushPolicy policy) {
        return LimboAllocator.builder().flushPolicy(policy).build();
    }

    /** Asserts the blocks {@code [ptrs[i], ptrs[i] + size)} are pairwise disjoint. */
    private static void assertDisjoint(final long[] ptrs, final long size) {
        final long[] sorted = ptrs.clone();
        Arrays.sort(sorted);
        for (int i = 1; i < sorted.length; i++) {
            final long prev = sorted[i - 1];
            final long cur = sorted[i];
            assertTrue(prev + size <= cur,
                    () -> String.format("blocks 0x%x and 0x%x of %d bytes overlap", prev, cur, size));
        }
    }

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void everySizeClassGivesAlignedDisjointWritableBlocksOfItsSizeAcrossSeveralSuperblocks(final FlushPolicy policy) {
        final LimboAllocator a = allocator(policy);
        for (int sc = 1; sc <= SizeClasses.COUNT; sc++) {
            final int size = SizeClasses.size(sc);
            final int smallest = sc == 1 ? 1 : SizeClasses.size(sc - 1) + 1;
            final int perSuperblock = (int) (PageMap.PAGE / size);
            final int n = 2 * perSuperblock + 3; // spans at least three superblocks
            final long[] ptrs = new long[n];
            final Set<Long> pages = new HashSet<>();
            for (int i = 0; i < n; i++) {
                final long request = (i & 1) == 0 ? size : smallest + (i % (size - smallest + 1));
                final long p = a.allocate(request);
                ptrs[i] = p;
                assertEquals(0, p & 7, "misaligned block " + p);
                if (Integer.bitCount(size) == 1) {
                    assertEquals(0, p % size, "power-of-two class " + size + " block not aligned to it");
                }
                assertEquals(size, a.usableSize(p), "usable size of a " + request + "-byte request");
                assertTrue(p > 0 && p + size <= Words.SEGMENT.byteSize());
                writePattern(p, size);
                pages.add(p >>> PageMap.PAGE_SHIFT);
            }
            assertTrue(pages.size() >= 3, "class " + size + ": " + n + " blocks on " + pages.size() + " pages");
            assertEquals((long) n * size, a.stats().bytesInUse(), "bytes in use, class " + size);
            assertDisjoint(ptrs, size);
            for (final long p : ptrs) {
                assertPattern(p, size);
            }
            for (final long p : ptrs) {
                a.free(p);
            }
        }
        assertAllReturned(a);
    }

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void freedBlocksAreReusedAndRemainDisjointFromLiveOnes(final FlushPolicy policy) {
        final LimboAllocator a = allocator(policy);
        final java.util.Random rnd = new java.util.Random(42);
        final List<long[]> live = new ArrayList<>();
        for (int round = 0; round < 20_000; round++) {
            if (!live.isEmpty() && rnd.nextInt(3) == 0) {
                final long[] b = live.remove(rnd.nextInt(live.size()));
                assertPattern(b[0], b[1]);
                a.free(b[0]);
            } else {
                final long size = 1 + rnd.nextInt(rnd.nextInt(10) == 0 ? 16384 : 512);
                final long p = a.allocate(size);
                writePattern(p, size);
                live.add(new long[] {p, size});
            }
        }
        final long[][] sorted = live.toArray(new long[0][]);
        Arrays.sort(sorted, (x, y) -> Long.compare(x[0], y[0]));
        for (int i = 1; i < sorted.length; i++) {
            assertTrue(sorted[i - 1][0] + sorted[i - 1][1] <= sorted[i][0], "live blocks overlap");
        }
        for (final long[] b : live) {
            assertPattern(b[0], b[1]);
            a.free(b[0]);
        }
        assertAllReturned(a);
    }

    @Test
    void allocateZeroedReturnsZeroesEvenWhereADirtyBlockIsReused() {
        final LimboAllocator a = LimboAllocator.create();
        for (final int size : new int[] {8, 24, 100, 1000, 4096, 16384, 70_000}) {
            final long dirty = a.allocate(size);
            Words.SEGMENT.asSlice(dirty, size).fill((byte) 0x5A);
            a.free(dirty);
            final long p = a.allocateZeroed(size);
            assertEquals(-1, Words.SEGMENT.asSlice(p, size).mismatch(MemorySegment.ofArray(new byte[size])),
                    "non-zero byte in a zeroed " + size + "-byte block");
            a.free(p);
        }
        assertAllReturned(a);
    }

    @Test
    void reallocateKeepsThePointerWhenItFitsAndOtherwiseMovesTheContents() {
        final LimboAllocator a = LimboAllocator.create();
        long p = a.allocate(20); // class 24
        assertEquals(24, a.usableSize(p));
        writePattern(p, 24);
        assertEquals(p, a.reallocate(p, 24), "a request that fits keeps the block");
        assertEquals(p, a.reallocate(p, 1), "shrinking keeps the block");
        long size = 24;
        for (final long next : new long[] {100, 2000, 16384, 40_000, 300_000}) {
            final long q = a.reallocate(p, next);
            assertNotEquals(p, q, "grown to " + next);
            assertEquals(-1, TestSupport.checkMovedPattern(q, p, size), "contents lost growing to " + next);
            assertTrue(a.usableSize(q) >= next);
            size = a.usableSize(q);
            writePattern(q, size);
            p = q;
        }
        assertEquals(p, a.reallocate(p, 200_000), "a large block shrinks in place");
        a.free(p);
        final long fresh = a.reallocate(0, 64);
        assertEquals(64, a.usableSize(fresh));
        a.free(fresh);
        assertAllReturned(a);
    }

    @Test
    void largeAllocationsArePageAlignedPageRoundedAndWritable() {
        final LimboAllocator a = LimboAllocator.create();
        final long[] sizes = {SizeClasses.MAX_SMALL + 1, 20 << 10, PageMap.PAGE, PageMap.PAGE + 1, 1 << 20, 5 << 20};
        final long[] ptrs = new long[sizes.length];
        long expectedLarge = 0;
        for (int i = 0; i < sizes.length; i++) {
            final long p = a.allocate(sizes[i]);
            ptrs[i] = p;
            assertEquals(0, p & PageMap.PAGE_MASK, "large block not page-aligned");
            final long rounded = (sizes[i] + PageMap.PAGE_MASK) & -PageMap.PAGE;
            assertEquals(rounded, a.usableSize(p), "usable size of " + sizes[i]);
            expectedLarge += rounded;
            writePattern(p, rounded);
        }
        assertEquals(expectedLarge, a.stats().largeBytes());
        for (int i = 0; i < sizes.length; i++) {
            assertPattern(ptrs[i], a.usableSize(ptrs[i]));
        }
        final long[] sorted = ptrs.clone();
        Arrays.sort(sorted);
        for (int i = 1; i < sorted.length; i++) {
            assertTrue(sorted[i - 1] + a.usableSize(sorted[i - 1]) <= sorted[i], "large blocks overlap");
        }
        for (final long p : ptrs) {
            a.free(p);
        }
        assertEquals(0, a.stats().largeBytes());
        assertAllReturned(a);
    }

    @Test
    void theSegmentAllocatorHonoursAlignmentsUpToTheOsPageAndItsSegmentsCanBeFreed() {
        final LimboAllocator a = LimboAllocator.create();
        final SegmentAllocator sa = a.asSegmentAllocator();
        final long base = Words.SEGMENT.address();
        final List<MemorySegment> segments = new ArrayList<>();
        for (long align = 8; align <= 4096; align <<= 1) {
            for (final long size : new long[] {1, 7, 8, 100, 3000, 16384, 20_000}) {
                final MemorySegment s = sa.allocate(size, align);
                assertEquals(size, s.byteSize());
                assertEquals(0, s.address() % align, "size " + size + " alignment " + align);
                assertTrue(s.address() >= base && s.address() + size <= base + Words.SEGMENT.byteSize(),
                        "segment outside the region");
                s.fill((byte) align);
                segments.add(s);
            }
        }
        final MemorySegment ints = sa.allocate(ValueLayout.JAVA_INT, 1000);
        ints.setAtIndex(ValueLayout.JAVA_INT, 999, 7);
        segments.add(ints);
        for (final MemorySegment s : segments) {
            a.free(s);
        }
        assertAllReturned(a);
    }

    @Test
    void alignmentsBeyondTheOsPageAreHonouredUpToWhatTheRegionBaseAllowsAndRejectedBeyond() {
        final LimboAllocator a = LimboAllocator.create();
        final SegmentAllocator sa = a.asSegmentAllocator();
        final long baseAlignment = Long.lowestOneBit(Words.SEGMENT.address());
        for (long align = 8192; align <= PageMap.PAGE; align <<= 1) {
            for (final long size : new long[] {1, 5000, 70_000}) {
                final long al = align;
                if (align <= baseAlignment) {
                    final MemorySegment s = sa.allocate(size, align);
                    assertEquals(0, s.address() % align, "size " + size + " alignment " + align);
                    a.free(s);
                } else {
                    assertThrows(IllegalArgumentException.class, () -> sa.allocate(size, al));
                }
            }
        }
        assertAllReturned(a);
    }

    @Test
    void theContextCacheAllocatesAndFreesLikeTheAllocator() throws Exception {
        final LimboAllocator a = LimboAllocator.create();
        final ThreadCache cache = a.context();
        final long[] ptrs = new long[1000];
        for (int i = 0; i < ptrs.length; i++) {
            ptrs[i] = cache.allocate(1 + i * 17);
            writePattern(ptrs[i], 1 + i * 17);
        }
        for (int i = 0; i < ptrs.length; i++) {
            assertPattern(ptrs[i], 1 + i * 17);
            cache.free(ptrs[i]);
        }
        final Thread v = Thread.ofVirtual().unstarted(() -> assertThrows(IllegalStateException.class, a::context));
        final java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
        v.setUncaughtExceptionHandler((t, e) -> failure.set(e));
        v.start();
        v.join();
        assertEquals(null, failure.get());
        assertAllReturned(a);
    }
}
