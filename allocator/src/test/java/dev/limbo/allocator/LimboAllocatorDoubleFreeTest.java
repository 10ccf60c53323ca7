package dev.limbo.allocator;

import static dev.limbo.allocator.TestSupport.inFreshThread;
import static dev.limbo.allocator.TestSupport.quiesce;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.internal.PageMap;
import dev.limbo.allocator.internal.SizeClasses;
import dev.limbo.core.Words;

import java.util.Locale;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Double frees in unchecked mode (the default) may hand a block out twice, but never make the
 * allocator follow a link out of its superblock, so its metadata stays intact: the lists a double
 * free broke are dropped when the allocator reaches them (their blocks leak), and it carries on.
 */
@Timeout(120)
class LimboAllocatorDoubleFreeTest {

    private static final int SIZE = 64;
    private static final int BLOCKS = (int) (PageMap.PAGE / SIZE);

    /** Asserts that {@code p} starts a block of class {@code size} in a superblock of {@code a}. */
    static void assertBlock(final LimboAllocator a, final long p, final long size) {
        final int sc = SizeClasses.classOf(size);
        final long offset = p & PageMap.PAGE_MASK;
        assertTrue(p > 0 && p < Words.SEGMENT.byteSize()
                        && PageMap.owner(p >>> PageMap.PAGE_SHIFT) >>> 32 == PageMap.encode(PageMap.SMALL, a.id, sc, 0) >>> 32
                        && offset % SizeClasses.size(sc) == 0 && offset + SizeClasses.size(sc) <= PageMap.PAGE,
                () -> String.format(Locale.ROOT, "0x%x is not a %d-byte block of %s", p, size, a));
    }

    /** The owner allocates one superblock's worth of blocks, so that its cache refills from the remote list. */
    private static void allocateThroughARefill(final LimboAllocator a) {
        for (int i = 0; i < BLOCKS + 1; i++) {
            assertBlock(a, a.allocate(SIZE), SIZE);
        }
    }

    @Test
    void aBlockFreedTwiceByAnotherThreadDoesNotBreakItsOwnersNextAllocations() throws Exception {
        final long claimed = Integrity.claimed();
        final LimboAllocator a = LimboAllocator.create();
        final long p = a.allocate(SIZE); // a fresh superblock, owned by this thread's cache
        inFreshThread(() -> {
            a.free(p);
            a.free(p); // its remote list now links p to itself
            return null;
        });
        allocateThroughARefill(a); // used to throw IndexOutOfBoundsException in the refill
        assertEquals(1, a.stats().brokenLists(), () -> a.stats().toString());
        quiesce(a);
        Integrity.assertIntact(a, claimed);
    }

    @Test
    void aDoubleFreeAroundAnotherBlockCannotSteerTheRemoteListIntoTheRegionHeader() throws Exception {
        final long claimed = Integrity.claimed();
        final LimboAllocator a = LimboAllocator.create();
        final long p = a.allocate(SIZE);
        a.allocate(SIZE);
        a.allocate(SIZE);
        final long q = a.allocate(SIZE);
        assertEquals(p + 3 * SIZE, q, "a fresh superblock hands out its blocks in address order");
        inFreshThread(() -> {
            a.free(p);
            a.free(q);
            a.free(p); // the remote list is p, q, p, q, ...
            return null;
        });
        // The owner's relink used to turn p's link relative, follow it as an absolute one to
        // offset 128 in the region header, and store the claim pointer minus 192 there.
        allocateThroughARefill(a);
        assertEquals(1, a.stats().brokenLists(), () -> a.stats().toString());
        quiesce(a);
        Integrity.assertIntact(a, claimed);
    }

    @Test
    void aBlockFreedTwiceByItsOwnerAndThenWrittenCannotSteerTheCacheOutOfItsSuperblock() throws Exception {
        final long claimed = Integrity.claimed();
        final LimboAllocator a = LimboAllocator.create();
        final long[] b = new long[4];
        for (int i = 0; i < b.length; i++) {
            b[i] = a.allocate(SIZE);
        }
        a.free(b[0]);
        a.free(b[1]);
        a.free(b[0]); // not in a row, so unchecked mode lets it through: the cache is b0, b1, b0, b1, ...
        assertEquals(b[0], a.allocate(SIZE));
        assertEquals(b[1], a.allocate(SIZE));
        // The program writes into the block it holds, b0, which the cache still lists: its link now
        // leads to offset 128, the region's claim pointer.
        Words.sp(b[0], 128 - (b[0] + SIZE));
        assertEquals(b[0], a.allocate(SIZE), "the double free hands b0 out twice");
        final long next = a.allocate(SIZE); // used to be 128
        assertNotEquals(128, next);
        assertBlock(a, next, SIZE);
        assertEquals(1, a.stats().brokenLists(), () -> a.stats().toString());
        quiesce(a);
        Integrity.assertIntact(a, claimed);
    }
}
