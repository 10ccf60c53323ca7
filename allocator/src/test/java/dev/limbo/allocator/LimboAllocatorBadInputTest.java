package dev.limbo.allocator;

import static dev.limbo.allocator.TestSupport.assertAllReturned;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.internal.PageMap;
import dev.limbo.core.OffHeapOutOfMemoryError;
import dev.limbo.core.Region;
import dev.limbo.core.Words;

import java.util.Locale;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Checked mode reports every kind of bad pointer and leaves the allocator usable. */
class LimboAllocatorBadInputTest {

    private final LimboAllocator a = LimboAllocator.builder().checked(true).build();

    private <T extends Throwable> T assertRejected(final Class<T> type, final Executable call, final String... words) {
        final T e = assertThrows(type, call);
        final String message = e.getMessage().toLowerCase(Locale.ROOT);
        boolean any = false;
        for (final String w : words) {
            any |= message.contains(w);
        }
        assertTrue(any, "message \"" + e.getMessage() + "\" mentions none of " + String.join(", ", words));
        stillWorks();
        return e;
    }

    private void stillWorks() {
        final long p = a.allocate(32);
        Words.sp(p, 1);
        a.free(p);
        final long q = a.allocate(100_000);
        Words.sp(q, 1);
        a.free(q);
    }

    @AfterEach
    void everythingIsReturned() {
        assertAllReturned(a);
    }

    @Test
    void aSmallDoubleFreeIsReported() {
        final long p = a.allocate(48);
        a.free(p);
        assertRejected(IllegalStateException.class, () -> a.free(p), "not allocated", "double free");
    }

    @Test
    void aSmallDoubleFreeIsReportedAfterTheBlockWasFlushedToItsSuperblock() {
        final long p = a.allocate(48);
        a.free(p);
        a.trim(); // the block leaves the cache; its superblock is released
        assertRejected(IllegalStateException.class, () -> a.free(p), "not allocated", "double free");
        final long keep = a.allocate(48); // a live superblock again, p's block is free in it
        final long q = a.allocate(48);
        a.free(q);
        assertRejected(IllegalStateException.class, () -> a.free(q), "not allocated", "double free");
        a.free(keep);
    }

    @Test
    void aLargeDoubleFreeIsReported() {
        final long p = a.allocate(1 << 20);
        a.free(p);
        assertRejected(IllegalStateException.class, () -> a.free(p), "not allocated", "double free");
    }

    @Test
    void aFreeBlockInsideALiveSuperblockWasNeverAllocated() {
        final long p = a.allocate(32);
        final long q = a.allocate(32);
        // A fresh superblock hands out its blocks in address order: the next one is free.
        final long next = Math.max(p, q) + 32;
        assertEquals(p >>> PageMap.PAGE_SHIFT, next >>> PageMap.PAGE_SHIFT);
        assertRejected(IllegalStateException.class, () -> a.free(next), "not allocated");
        assertRejected(IllegalStateException.class, () -> a.usableSize(next), "not allocated");
        a.free(p);
        a.free(q);
    }

    @Test
    void anAddressInAnUnusedPageWasNeverAllocated() {
        final long unused = Region.global().size() - PageMap.PAGE; // the last page: claimed by nobody
        assertRejected(IllegalStateException.class, () -> a.free(unused), "not allocated");
        assertRejected(IllegalStateException.class, () -> a.free(unused + 64), "not allocated");
    }

    @Test
    void interiorPointersAreRejected() {
        final long small = a.allocate(32);
        assertRejected(IllegalArgumentException.class, () -> a.free(small + 8), "interior");
        final long large = a.allocate(1 << 20);
        assertRejected(IllegalArgumentException.class, () -> a.free(large + 4096), "interior");
        assertRejected(IllegalArgumentException.class, () -> a.free(large + PageMap.PAGE), "interior");
        assertRejected(IllegalArgumentException.class, () -> a.usableSize(large + PageMap.PAGE), "interior");
        a.free(small);
        a.free(large);
    }

    @Test
    void misalignedPointersAreRejected() {
        final long small = a.allocate(32);
        assertRejected(IllegalArgumentException.class, () -> a.free(small + 3), "misaligned");
        a.free(small);
    }

    @Test
    void nullAndOutOfRegionPointersAreRejected() {
        assertRejected(IllegalArgumentException.class, () -> a.free(0), "null");
        assertRejected(IllegalArgumentException.class, () -> a.free(-8), "outside");
        assertRejected(IllegalArgumentException.class, () -> a.free(Region.global().size()), "outside");
        assertRejected(IllegalArgumentException.class, () -> a.free(Long.MAX_VALUE & -8), "outside");
    }

    @Test
    void aPointerOfAnotherAllocatorIsRejectedAndNamesItsOwner() {
        final LimboAllocator other = LimboAllocator.create();
        final long small = other.allocate(64);
        final long large = other.allocate(200_000);
        assertRejected(IllegalArgumentException.class, () -> a.free(small), "belongs to allocator");
        assertRejected(IllegalArgumentException.class, () -> a.free(large), "belongs to allocator");
        assertRejected(IllegalArgumentException.class, () -> a.freeBatch(new long[] {small}, 1),
                "belongs to allocator");
        other.free(small);
        other.free(large);
        assertAllReturned(other);
    }

    @Test
    void theDefaultIsUncheckedButCatchesTheSameBlockFreedTwiceInARow() {
        final LimboAllocator unchecked = LimboAllocator.create();
        assertFalse(unchecked.toString().contains("checked=true"), unchecked.toString());
        final long p = unchecked.allocate(48);
        unchecked.free(p);
        assertRejected(IllegalStateException.class, () -> unchecked.free(p), "double free");
        final long q = unchecked.allocate(48);
        assertEquals(p, q, "the cache still hands the block out once");
        unchecked.free(q);
        assertAllReturned(unchecked);
    }

    @Test
    void thePropertyMakesCheckedModeTheDefault() {
        final String before = System.getProperty(LimboAllocator.CHECKED_PROPERTY);
        System.setProperty(LimboAllocator.CHECKED_PROPERTY, "true");
        try {
            final LimboAllocator checked = LimboAllocator.create();
            final long p = checked.allocate(48);
            final long q = checked.allocate(48);
            checked.free(p);
            checked.free(q);
            assertRejected(IllegalStateException.class, () -> checked.free(p), "not allocated");
            assertAllReturned(checked);
        } finally {
            if (before == null) {
                System.clearProperty(LimboAllocator.CHECKED_PROPERTY);
            } else {
                System.setProperty(LimboAllocator.CHECKED_PROPERTY, before);
            }
        }
    }

    @Test
    void foreignAndMisalignedPointersAreRejectedEvenWithoutCheckedMode() {
        final LimboAllocator unchecked = LimboAllocator.builder().checked(false).build();
        final long mine = a.allocate(64);
        assertThrows(IllegalArgumentException.class, () -> unchecked.free(mine));
        assertThrows(IllegalArgumentException.class, () -> unchecked.free(mine + 3));
        a.free(mine);
        final long p = unchecked.allocate(64);
        unchecked.free(p);
        assertAllReturned(unchecked);
    }

    @Test
    void nonPositiveSizesAreRejected() {
        assertRejected(IllegalArgumentException.class, () -> a.allocate(0), "positive");
        assertRejected(IllegalArgumentException.class, () -> a.allocate(-1), "positive");
        assertRejected(IllegalArgumentException.class, () -> a.allocate(Long.MIN_VALUE), "positive");
        assertRejected(IllegalArgumentException.class, () -> a.allocateZeroed(0), "positive");
        final long p = a.allocate(8);
        assertRejected(IllegalArgumentException.class, () -> a.reallocate(p, 0), "positive");
        a.free(p);
    }

    @Test
    void anImpossibleSizeRaisesOffHeapOutOfMemoryNamingTheRegionSizeProperty() {
        final OffHeapOutOfMemoryError e = assertThrows(OffHeapOutOfMemoryError.class,
                () -> a.allocate(Long.MAX_VALUE));
        assertTrue(e.getMessage().contains(Region.SIZE_PROPERTY), e.getMessage());
        final OffHeapOutOfMemoryError f = assertThrows(OffHeapOutOfMemoryError.class,
                () -> a.allocate(Region.global().size()));
        assertTrue(f.getMessage().contains(Region.SIZE_PROPERTY), f.getMessage());
        stillWorks();
    }

    @Test
    void aBatchWithADuplicateIsRejectedBeforeAnyOfItIsFreed() {
        final long[] ptrs = new long[10];
        for (int i = 0; i < ptrs.length; i++) {
            ptrs[i] = a.allocate(16 + 16 * i);
        }
        final long[] batch = new long[ptrs.length + 1];
        System.arraycopy(ptrs, 0, batch, 0, ptrs.length);
        batch[ptrs.length] = ptrs[3];
        assertRejected(IllegalStateException.class, () -> a.freeBatch(batch, batch.length), "double free",
                "not allocated");
        for (final long p : ptrs) {
            assertEquals(true, a.usableSize(p) > 0, "a block of the rejected batch was freed");
        }
        a.freeBatch(ptrs, ptrs.length);
        final long[] again = {ptrs[0]};
        assertRejected(IllegalStateException.class, () -> a.freeBatch(again, 1), "not allocated", "double free");
    }

    @Test
    void aBatchWithAnInteriorPointerIsRejected() {
        final long p = a.allocate(64);
        final long q = a.allocate(64);
        assertRejected(IllegalArgumentException.class, () -> a.freeBatch(new long[] {p, q + 8}, 2), "interior");
        a.freeBatch(new long[] {p, q}, 2);
    }

    @Test
    void aNegativeSegmentSizeIsRejectedBeforeAnythingIsAllocated() {
        final AllocatorStats before = a.stats();
        for (final long bad : new long[] {-1, -8, Long.MIN_VALUE}) {
            final IllegalArgumentException e = assertRejected(IllegalArgumentException.class,
                    () -> a.asSegmentAllocator().allocate(bad, 8), "negative");
            assertTrue(e.getMessage().contains(Long.toString(bad)), e.getMessage());
        }
        assertEquals(before.bytesInUse(), a.stats().bytesInUse(), "a rejected segment request allocated a block");
    }

    @Test
    void badSegmentAllocatorAlignmentsAreRejected() {
        assertRejected(IllegalArgumentException.class, () -> a.asSegmentAllocator().allocate(8, 3), "alignment");
        assertRejected(IllegalArgumentException.class,
                () -> a.asSegmentAllocator().allocate(8, PageMap.PAGE * 2), "alignment");
    }
}
