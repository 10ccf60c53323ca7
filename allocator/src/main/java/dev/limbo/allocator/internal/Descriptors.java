package dev.limbo.allocator.internal;

import dev.limbo.core.Layouts;
import dev.limbo.core.OffHeapOutOfMemoryError;
import dev.limbo.core.Region;
import dev.limbo.core.Words;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * One allocator's superblock descriptors: a never-freed table addressed by index (0 is null), a
 * lock-free recycle stack of unused descriptors, and one lock-free partial stack per size class.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm and sources: LRMalloc thesis §5.4 (descriptors, partial lists, DescriptorAlloc and
 * DescriptorRetire); digest §3.7 and §7.1. The table grows in chunks of 1024 descriptors (64 KiB),
 * each a run of pages of the page allocator (so that release() can give the table back when its
 * allocator closes); a chunk's first descriptor goes to the caller and the rest are pushed onto
 * the recycle stack with one CAS. A carver that finds the recycle stack filled once it has its
 * pages (another thread carved meanwhile) gives the pages back and pops instead.
 *
 * Invariants:
 *  - A descriptor index, once handed out, always addresses the same 64 bytes (type stability), so
 *    a stale read of a link is in bounds and returns some index that was once valid.
 *  - Link fields hold indices < carved() or 0.
 *  - Each stack head is tag:32 | index:32; every successful push or pop increments the tag,
 *    computed from the head read in the same retry (the 2019 LRMalloc bug).
 *
 * Linearization points: push and pop - the successful CAS of the head (4, 6); a pop of an empty
 * stack - the head load (5) that read index 0.
 *
 * Progress: lock-free. A failed CAS means another push or pop succeeded.
 *
 * Memory ordering:
 *  (1) chunk directory store: plain, published by the CAS (4) that pushes the chunk's descriptors
 *      (the carving thread keeps the first one); every index a reader obtains came through a head
 *      load (5) or a link read after one, so offset() sees the store.
 *  (2) volatile load of the head in push: the expected value of (4) and the link stored by (3);
 *      reads the value of the last (4) or (6).
 *  (3) plain store of the pushed chain's last link; published by (4).
 *  (4) head CAS of a push (volatile, so release): publishes (1), (3) and every descriptor field the
 *      pusher wrote before it; pairs with (5).
 *  (5) volatile load of the head in pop; acquires the (4) or (6) whose value it reads. (5b) plain
 *      load of the popped descriptor's link - stale values are harmless because (6) fails unless
 *      the head (with its tag) is unchanged since (5).
 *  (6) head CAS of a pop; pairs with (2) and (5) of later operations.
 *
 * Reclamation and ABA: descriptors are never freed. ABA on a head (pop reads head A and next B;
 * others pop A, pop B, push A; our CAS would install the stale B) is prevented by the 32-bit tag:
 * the head value A' differs from A in its tag, so the CAS fails. A wrap needs 2^32 operations
 * inside one pop's window.
 * }</pre>
 */
public final class Descriptors {

    static final int CHUNK_SHIFT = 10;
    static final int CHUNK = 1 << CHUNK_SHIFT;
    private static final int STRIDE = (int) (Layouts.PADDED / Long.BYTES);
    private static final int RECYCLE = 0;

    /** Pages of the page allocator per chunk: one, or two where pages are 32 KiB. */
    private static final long CHUNK_PAGES = Math.max(1, (CHUNK * DescriptorLayout.SIZE) >>> PageMap.PAGE_SHIFT);

    private final long[] chunks;
    private final AtomicInteger carvedChunks = new AtomicInteger();
    private final BestFitPageAllocator pages;
    /** Stack heads, each alone in 128 bytes: slot 0 the recycle stack, slot c the partial stack of class c. */
    private final AtomicLongArray heads = new AtomicLongArray((SizeClasses.COUNT + 2) * STRIDE);

    /** A table whose chunks come from the {@linkplain BestFitPageAllocator#global() global} page allocator. */
    public Descriptors() {
        this(BestFitPageAllocator.global());
    }

    /** A table whose chunks come from {@code pages}. */
    public Descriptors(final BestFitPageAllocator pages) {
        this.pages = pages;
        this.chunks = new long[(int) Math.min(PageMap.MAX_DESCRIPTORS / CHUNK, (2 * PageMap.PAGES) / CHUNK + 2)];
    }

    /** The region offset of descriptor {@code index}. */
    public long offset(final int index) {
        return chunks[index >>> CHUNK_SHIFT] + ((long) (index & (CHUNK - 1)) * DescriptorLayout.SIZE);
    }

    /** A descriptor from the recycle stack, or from a newly carved chunk. */
    public int allocate() {
        final int recycled = pop(RECYCLE, DescriptorLayout.NEXT_FREE);
        return recycled != 0 ? recycled : carve();
    }

    /** Returns a descriptor whose superblock is gone to the recycle stack. */
    public void retire(final int index) {
        Words.sp(offset(index) + DescriptorLayout.SIZE_CLASS, 0); // marks it unused for stats scans
        push(RECYCLE, DescriptorLayout.NEXT_FREE, index, index);
    }

    public void pushPartial(final int sizeClass, final int index) {
        push(sizeClass, DescriptorLayout.NEXT_PARTIAL, index, index);
    }

    /** Pops a descriptor from the partial stack of {@code sizeClass}; 0 if empty. */
    public int popPartial(final int sizeClass) {
        return pop(sizeClass, DescriptorLayout.NEXT_PARTIAL);
    }

    /** Descriptors carved so far (indices below this were handed out at least once). */
    public int carved() {
        return carvedChunks.get() * CHUNK;
    }

    private int carve() {
        final long run = pages.allocate(CHUNK_PAGES); // before the index: a failure reserves nothing
        // Threads that found the recycle stack empty at once all get here; the page allocation may
        // block (a grow's monitor), and a virtual thread blocked there lets others in. Once one of
        // them pushed its chunk, the others take from it instead of carving chunks nobody needs.
        final int recycled = pop(RECYCLE, DescriptorLayout.NEXT_FREE);
        if (recycled != 0) {
            pages.free(run, CHUNK_PAGES);
            return recycled;
        }
        final int chunk = carvedChunks.getAndIncrement();
        if (chunk >= chunks.length) {
            carvedChunks.decrementAndGet();
            pages.free(run, CHUNK_PAGES);
            throw new OffHeapOutOfMemoryError("descriptor table full: " + chunks.length * CHUNK
                    + " descriptors; raise -D" + Region.SIZE_PROPERTY + " or -D" + PageMap.PAGE_SHIFT_PROPERTY);
        }
        final long base = run << PageMap.PAGE_SHIFT;
        if (!pages.isClean(run, CHUNK_PAGES)) {
            Words.SEGMENT.asSlice(base, CHUNK * DescriptorLayout.SIZE).fill((byte) 0); // fields read as unused
        }
        // (1) plain store of the chunk's base; published by the push (4) below or by the return.
        chunks[chunk] = base;
        final int first = chunk << CHUNK_SHIFT;
        final int skip = first == 0 ? 1 : 0; // index 0 is null and is never used
        final int mine = first + skip;
        final int last = first + CHUNK - 1;
        for (int i = mine + 1; i < last; i++) {
            Words.sp(offset(i) + DescriptorLayout.NEXT_FREE, i + 1);
        }
        push(RECYCLE, DescriptorLayout.NEXT_FREE, mine + 1, last);
        return mine;
    }

    /**
     * Gives every chunk back to the page allocator. Only when the table's allocator closes: no
     * descriptor may be used afterwards.
     */
    public void release() {
        final int carved = carvedChunks.get();
        for (int c = 0; c < carved; c++) {
            if (chunks[c] != 0) {
                pages.free(chunks[c] >>> PageMap.PAGE_SHIFT, CHUNK_PAGES);
                chunks[c] = 0;
            }
        }
    }

    /** Pushes the chain {@code first .. last} (already linked through {@code link}) in one CAS. */
    private void push(final int stack, final long link, final int first, final int last) {
        final int slot = stack * STRIDE;
        final long lastLink = offset(last) + link;
        for (;;) {
            // (2) volatile load of the head; reads the last (4) or (6).
            final long head = heads.get(slot);
            // (3) plain store of the link; published by (4).
            Words.sp(lastLink, (int) head);
            final long tagged = (((head >>> 32) + 1) << 32) | (first & 0xFFFF_FFFFL);
            // (4) CAS of the head (release); pairs with (5).
            if (heads.compareAndSet(slot, head, tagged)) {
                return;
            }
        }
    }

    private int pop(final int stack, final long link) {
        final int slot = stack * STRIDE;
        for (;;) {
            // (5) volatile load of the head; pairs with (4).
            final long head = heads.get(slot);
            final int index = (int) head;
            if (index == 0) {
                return 0;
            }
            // (5b) plain load of a possibly stale link: type-stable, validated by (6).
            final int next = (int) Words.lp(offset(index) + link);
            final long tagged = (((head >>> 32) + 1) << 32) | (next & 0xFFFF_FFFFL);
            // (6) CAS of the head; pairs with (2) and (5) of later operations.
            if (heads.compareAndSet(slot, head, tagged)) {
                return index;
            }
        }
    }
}
