package dev.limbo.allocator;

import dev.limbo.allocator.internal.BestFitPageAllocator;
import dev.limbo.allocator.internal.PageMap;
import dev.limbo.core.OffHeapOutOfMemoryError;
import dev.limbo.core.Region;

import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The large allocations of a {@link LimboAllocator}: requests above the largest size class, each a
 * run of whole pages of the best-fit page allocator, recorded in the page map.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm: a run of n pages from the best-fit page allocator (LRMalloc thesis ch. 7); its first
 * page's owner word is LARGE (allocator id), its later pages' LARGE_INTERIOR, and the page map's
 * header of the first page holds n, written by the page allocator when it split the run off.
 *
 * Invariants: while a run is allocated, its first owner word is LARGE (or, in checked mode while
 * the run waits in a quarantine, LARGE_FREED: CheckedMode) and the header of its first page is its
 * length; the interior words are written before the first (so a pointer to the run, validated by
 * the first word, finds them set) and cleared after the first was cleared. largeBytes is the sum of
 * the lengths of the allocator's runs, quarantined ones included.
 *
 * Linearization points: allocate - the page allocator's tree operation that hands out the run;
 * free - the owner-word CAS of the first page (PageMap (2b)), which exactly one of two concurrent
 * frees of one run wins (the loser throws).
 *
 * Progress: lock-free as the page allocator; growing the region may map memory (a system call).
 *
 * Memory ordering: PageMap (2), the release store of each owner word, publishes the run before its
 * pointer escapes; PageMap (2b) makes the free exclusive; the header is the page allocator's
 * (PageMap (3)/(4)), stable while the run is allocated. largeBytes is an atomic counter for stats.
 *
 * Reclamation and ABA: the one free that wins (2b) clears the interior words and gives the pages
 * back; a free of a run that was freed and allocated again sees an identical owner word and cannot
 * be told apart (PageMap's notes), except within checked mode's quarantine.
 * }</pre>
 */
final class LargeRuns {

    private final int id;
    private final BestFitPageAllocator pages;
    private final long regionSize = Region.global().size();
    /** Bytes of the allocator's large runs; shared with its Lifecycle, which gives them back on close. */
    private final AtomicLong largeBytes;

    LargeRuns(final int id, final BestFitPageAllocator pages, final AtomicLong largeBytes) {
        this.id = id;
        this.pages = pages;
        this.largeBytes = largeBytes;
    }

    /** Allocates a run of whole pages for {@code bytes}; see {@link LimboAllocator#allocate}. */
    long allocate(final long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("allocation size must be positive, was " + bytes);
        }
        if (bytes > regionSize - PageMap.PAGE) {
            throw new OffHeapOutOfMemoryError(String.format(Locale.ROOT,
                    "cannot allocate %d bytes: larger than the off-heap region (%d bytes); raise -D%s",
                    bytes, regionSize, Region.SIZE_PROPERTY));
        }
        final long n = (bytes + PageMap.PAGE_MASK) >>> PageMap.PAGE_SHIFT;
        final long page = pages.allocate(n);
        for (long p = page + 1; p < page + n; p++) {
            PageMap.setOwner(p, PageMap.encode(PageMap.LARGE_INTERIOR, id, 0, 0));
        }
        PageMap.setOwner(page, PageMap.encode(PageMap.LARGE, id, 0, 0));
        largeBytes.addAndGet(n << PageMap.PAGE_SHIFT);
        return page << PageMap.PAGE_SHIFT;
    }

    /** Frees a pointer whose page is not a small superblock of this allocator, or reports why not. */
    void freeNotSmall(final long ptr, final long owner) {
        check(ptr, owner);
        free(ptr, owner);
    }

    /**
     * Checks that {@code ptr}, whose page is no small superblock of this allocator, starts one of its large
     * blocks.
     */
    void check(final long ptr, final long owner) {
        LimboAllocator.checkOwnership(ptr, owner, id);
        if (PageMap.kind(owner) != PageMap.LARGE || (ptr & PageMap.PAGE_MASK) != 0) {
            throw interiorLarge(ptr);
        }
        if (PageMap.descriptor(owner) == PageMap.LARGE_FREED) {
            throw new IllegalStateException(String.format(Locale.ROOT,
                    "double free: large allocation 0x%x is not allocated: it was freed, and waits in checked mode's "
                            + "quarantine",
                    ptr));
        }
    }

    /**
     * Frees the large block {@code ptr}, checked by {@link #check} (or quarantined: {@link CheckedMode});
     * {@code owner} is its page's owner word.
     */
    void free(final long ptr, final long owner) {
        final long page = ptr >>> PageMap.PAGE_SHIFT;
        if (!PageMap.clearOwner(page, owner)) {
            throw freedConcurrently(ptr);
        }
        final long n = PageMap.header(page);
        for (long p = page + 1; p < page + n; p++) {
            PageMap.setOwner(p, 0L);
        }
        largeBytes.addAndGet(-(n << PageMap.PAGE_SHIFT));
        pages.free(page, n);
    }

    /** Bytes of this allocator's large runs, quarantined ones included. */
    long bytes() {
        return largeBytes.get();
    }

    static IllegalStateException freedConcurrently(final long ptr) {
        return new IllegalStateException(String.format(Locale.ROOT,
                "double free: large allocation 0x%x was freed concurrently", ptr));
    }

    private static IllegalArgumentException interiorLarge(final long ptr) {
        return new IllegalArgumentException(String.format(Locale.ROOT,
                "interior pointer 0x%x: it points inside a large allocation, not at its start", ptr));
    }
}
