package dev.limbo.allocator;

import dev.limbo.allocator.internal.Anchor;
import dev.limbo.allocator.internal.BestFitPageAllocator;
import dev.limbo.allocator.internal.BlockStates;
import dev.limbo.allocator.internal.DescriptorLayout;
import dev.limbo.allocator.internal.Descriptors;
import dev.limbo.allocator.internal.PageMap;
import dev.limbo.allocator.internal.SizeClasses;
import dev.limbo.core.OffHeapOutOfMemoryError;
import dev.limbo.core.Words;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The small-block heap of a {@link LimboAllocator}: its superblocks and their descriptors, the
 * LRMalloc protocol that fills thread caches from superblocks and flushes blocks back to them,
 * the remote-free lists of owned superblocks (OWNER_RETURN, OWNED), and the validation of every
 * link it follows. Thread caches, the owned superblocks of a cache and the facade's batch and
 * direct paths call it; it calls the page allocator, the page map and the descriptors, and hands
 * a list to a cache only by ThreadCache.setList.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm and sources: LRMalloc thesis ch. 5 (digest §3): thread caches filled with the whole
 * free list of one superblock and flushed in per-superblock runs; 64-bit anchors (state, avail,
 * count) updated by CAS; lock-free partial stacks and descriptor recycling with tagged heads
 * (Descriptors). Departures: superblocks are pages of a best-fit page allocator (ch. 7) instead of
 * mmap calls; the FULL->EMPTY leak of the thesis listing is fixed (a superblock that one flush takes
 * from FULL to EMPTY is released and its descriptor retired directly: it is on no partial stack);
 * the OWNER_RETURN policy adds mimalloc-style remote-free lists.
 *
 * Invariants while no block is freed twice:
 *  - A block is in exactly one place: in use, in one cache (or its quarantine), in its superblock's
 *    free list (anchor), or (OWNER_RETURN) in its superblock's remote list.
 *  - anchor.count = length of the free list; state FULL <=> count 0 and not on a partial stack
 *    (except between the FULL->PARTIAL CAS and the push); EMPTY <=> count = maxCount.
 *  - While a superblock is owned (remoteHead != ABANDONED) its owner holds at least one of its
 *    blocks outside the anchor or in the remote list, so the anchor never reaches EMPTY; a cache
 *    abandons its superblock before it flushes, so owned superblocks are never released.
 * Invariants whatever the program frees (unchecked mode lets double frees and interior pointers
 * through, which break the ones above):
 *  - Every block a cache holds, and every block it hands out, lies wholly inside a page that was a
 *    superblock of this allocator and of the block's class when the block entered the cache: a
 *    free checks the page's owner word and that the block ends inside the page, and every link
 *    followed (pop, flush, collect, abandon) is checked (ThreadCache.leavesPage, isBlock,
 *    remoteLength, relink) when it is read, and read once; a broken one ends the list there
 *    (broken()). A block on a list may also be in use, and the program may overwrite its link at
 *    any time, so no check may rely on an earlier read of a link. Walks of a remote list stop at
 *    the superblock's block count; cache walks at the cache's count.
 *  - Every run flushRun splices is of the superblock its descriptor holds in the generation of the
 *    anchor its CAS replaces, of blocks at block boundaries, and takes the count to at most
 *    maxCount; other runs are dropped. So avail < maxCount, count <= maxCount, and the state
 *    matches the count (FULL: 0, EMPTY: maxCount), and descriptors go on the partial stack of
 *    their own class only.
 *  - An owned superblock is never released: a flush that would empty it counts a block twice (see
 *    above) and is dropped (9). So a cache's CURRENT descriptor is never retired and reused under it.
 *  - A page's owner word is set (release) before any block of it escapes and cleared before the
 *    page returns to the page allocator (LRMalloc's "unregister before unmap"); it is cleared only
 *    by the one flush whose CAS made the superblock EMPTY, or by the one free that cleared a large
 *    run's first word (PageMap 2b).
 *
 * Linearization points: allocate - the cache pop (ThreadCache), or in fill the anchor CAS (3)
 * that takes a list; free - the cache push (ThreadCache), the remote-list CAS (6), or the anchor
 * CAS (3) of a flush. Large runs linearize in LargeRuns; in checked mode a free linearizes at its
 * block-state CAS (BlockStates 1) or, for a large run, at the owner-word CAS that marks it
 * LARGE_FREED (CheckedMode).
 *
 * Progress: fill, flush and the remote lists are lock-free (each CAS loop retries only when
 * another thread's CAS succeeded); releasing a superblock may decommit, which calls madvise.
 *
 * Memory ordering (numbers local to this file, cited as SuperblockHeap (n) by ThreadCache,
 * OwnedSuperblocks, CheckedMode and the jcstress tests; PageMap has its own):
 *  (1) volatile anchor load in flushRun/fill; pairs with (3) and (8). The descriptor fields read
 *      after it (plain) are those of its generation whenever the CAS (3) that follows succeeds:
 *      a later generation starts only after this one reached EMPTY, which (3) would have seen.
 *  (2) plain store of the tail link of a flushed run; published by (3).
 *  (3) anchor CAS (volatile): the filler's successful CAS acquires the flushers' link writes (2)
 *      and the free-list contents; the flusher's releases them.
 *  (4) CAS of remoteHead ABANDONED -> 0 when a cache takes ownership (it fails, and the cache
 *      does not own the superblock, if another cache owns it already); pairs with (5).
 *  (5) volatile load of remoteHead by a remote freer, after (5a) a plain pre-check that skips an
 *      ABANDONED superblock (a stale answer only changes where the block goes: the anchor or the
 *      cache instead of the remote list); (5b) plain store of the block's link,
 *      published by (6).
 *  (6) remoteHead CAS of a remote push (release); pairs with the exchange (7).
 *  (7) remoteHead get-and-set by the owner (collect: to 0; abandon: to ABANDONED); acquires the
 *      pushed blocks' links.
 *  (8) release store of a new superblock's first anchor, the next generation of the descriptor's
 *      last one; pairs with (1): a flusher or filler whose (1) reads it, or a later anchor of the
 *      generation (CASes continue its release sequence), sees the descriptor fields written before.
 *  (9) volatile load of remoteHead by a flush that would empty the superblock, then (9b) a volatile
 *      load of the anchor: if the superblock is still owned after the anchor value the flush is
 *      based on (unchanged at (9b)), the owner holds a block that the anchor or the run also
 *      counts. If the anchor changed, the CAS (3) fails and the flush retries.
 *  Descriptor fields of a new superblock are plain stores published by PageMap's release store of
 *  the page owner (before blocks escape; it happens-before every later access to the page's
 *  blocks, see PageMap (1)) or by the partial-stack push CAS.
 *
 * Reclamation and ABA: descriptors are never freed (type-stable), so stale reads are in bounds.
 * Within a generation anchors need no tag (fill takes the whole list, flush splices an owned list:
 * digest §3.11). Across generations they carry one (Anchor): a flusher holding stale blocks of a
 * released superblock (only a double free leads there) reads a new superblock's descriptor, and
 * its CAS must fail even if state, avail and count happen to agree (FULL, 0, 0 always does).
 * Stack heads carry 32-bit tags (Descriptors). The remote list is push-many/take-all (exchange),
 * which has no ABA: a push CAS that succeeds on a recycled head value still links onto the list
 * that is there now, and only while the superblock is owned (the head is not ABANDONED).
 * A flusher that makes a superblock EMPTY uses only values captured before its CAS: another thread
 * may pop, retire and reuse the descriptor at once.
 * }</pre>
 */
final class SuperblockHeap {

    /** A superblock's remote head while no cache owns it. */
    static final long ABANDONED = 1L;

    private final int id;
    /** The tag of this allocator's small blocks' owner words (PageMap.smallTag). */
    private final long smallTag;
    /** Checked mode: a new superblock's block states are reset. */
    private final boolean checked;
    private final BestFitPageAllocator pages;
    final Descriptors descriptors;
    /** Lists and runs found broken by a double free and dropped; see {@link #broken()}. */
    private final AtomicLong brokenLists = new AtomicLong();

    SuperblockHeap(final int id, final boolean checked, final BestFitPageAllocator pages,
                   final Descriptors descriptors) {
        this.id = id;
        this.smallTag = PageMap.smallTag(id);
        this.checked = checked;
        this.pages = pages;
        this.descriptors = descriptors;
    }

    /** Fills {@code cache}'s empty list of class {@code sc}; returns the descriptor it drew from. */
    int fill(final ThreadCache cache, final int sc) {
        for (int d = descriptors.popPartial(sc); d != 0; d = descriptors.popPartial(sc)) {
            final long desc = descriptors.offset(d);
            for (;;) {
                // (1) volatile anchor load; pairs with (3) and (8).
                final long old = Words.lv(desc + DescriptorLayout.ANCHOR);
                if (Anchor.state(old) == Anchor.EMPTY) {
                    descriptors.retire(d); // released by the flush that emptied it (lazy retire)
                    break;
                }
                if (Anchor.count(old) == 0) {
                    break; // filled concurrently; the next FULL->PARTIAL flush pushes it again
                }
                // Read after (1), before (3): the superblock of old's generation if (3) succeeds.
                final long sb = Words.lp(desc + DescriptorLayout.SUPERBLOCK);
                // (3) anchor CAS: take the whole free list.
                if (Words.cas(desc + DescriptorLayout.ANCHOR, old, Anchor.update(old, Anchor.FULL, 0, 0))) {
                    cache.setList(sc, sb + (long) Anchor.avail(old) * SizeClasses.size(sc), Anchor.count(old));
                    return d;
                }
            }
        }
        return fillFromNew(cache, sc);
    }

    private int fillFromNew(final ThreadCache cache, final int sc) {
        final int d = descriptors.allocate();
        final long page;
        try {
            page = pages.allocate(1);
        } catch (final RuntimeException | OffHeapOutOfMemoryError e) {
            descriptors.retire(d);
            throw e;
        }
        final long sb = page << PageMap.PAGE_SHIFT;
        final int size = SizeClasses.size(sc);
        final int max = PageMap.blocks(sc);
        if (!pages.isClean(page, 1)) {
            for (int i = 0; i < max; i++) {
                Words.sp(sb + (long) i * size, 0L); // relative link 0: "the next block"
            }
        }
        if (checked) {
            for (int i = 0; i < max; i++) {
                BlockStates.set(page, i, BlockStates.FREE); // the page may have held other blocks
            }
        }
        final long desc = descriptors.offset(d);
        // The last anchor of the descriptor's previous superblock (EMPTY), or 0 if it is new.
        final long previous = Words.lp(desc + DescriptorLayout.ANCHOR);
        Words.sp(desc + DescriptorLayout.SUPERBLOCK, sb);
        Words.sp(desc + DescriptorLayout.MAX_COUNT, max);
        Words.sp(desc + DescriptorLayout.SIZE_CLASS, sc);
        Words.sp(desc + DescriptorLayout.REMOTE_HEAD, ABANDONED);
        // (8) release store of the next generation's first anchor; pairs with (1).
        Words.sr(desc + DescriptorLayout.ANCHOR, Anchor.renew(previous));
        PageMap.setOwner(page, PageMap.encode(PageMap.SMALL, id, sc, d)); // publishes the fields above
        cache.setList(sc, sb, max);
        return d;
    }

    /**
     * Returns {@code n} blocks of class {@code sc}, linked from {@code head}, to their superblocks.
     * The list is validated as it is walked: from the first block that is not a block of class
     * {@code sc} of this allocator on, it is dropped (see {@link #broken()}).
     */
    void flushList(long head, int n, final int sc) {
        final int size = SizeClasses.size(sc);
        if (n > 0 && !isBlock(head, sc)) {
            broken();
            return;
        }
        while (n > 0) {
            final long page = head >>> PageMap.PAGE_SHIFT;
            final int d = PageMap.descriptor(PageMap.owner(page)); // isBlock checked the owner word
            long tail = head;
            int k = 1;
            long next = 0;
            while (k < n) {
                next = tail + size + Words.lp(tail);
                if ((next >>> PageMap.PAGE_SHIFT) != page || !startsBlock(next & PageMap.PAGE_MASK, sc)) {
                    break;
                }
                tail = next;
                k++;
            }
            n -= k;
            if (n > 0 && !isBlock(next, sc)) { // a link out of the page must reach another superblock of ours
                n = 0;
                broken();
            }
            flushRun(d, head, tail, k, sc);
            head = next;
        }
    }

    /**
     * Splices the run {@code head..tail} of {@code k} blocks of class {@code sc}, all in one page and
     * linked, onto the free list of superblock {@code d}. Drops the run (see {@link #broken()}) if
     * {@code head} is not a block of the superblock {@code d} holds now, or if the superblock cannot
     * take {@code k} more free blocks: only a double free leads there.
     */
    void flushRun(final int d, final long head, final long tail, final int k, final int sc) {
        final long desc = descriptors.offset(d);
        final int size = SizeClasses.size(sc);
        for (;;) {
            // (1) volatile anchor load; pairs with (3) and (8).
            final long old = Words.lv(desc + DescriptorLayout.ANCHOR);
            // Read after (1), before (3): the fields of old's generation if (3) succeeds, and the
            // values to use after it (once EMPTY, the descriptor may be retired and reused at once).
            final long sb = Words.lp(desc + DescriptorLayout.SUPERBLOCK);
            final int max = (int) Words.lp(desc + DescriptorLayout.MAX_COUNT);
            final long offset = head - sb;
            final int headIndex = SizeClasses.divide(offset & PageMap.PAGE_MASK, sc);
            final int count = Anchor.count(old) + k;
            if (Words.lp(desc + DescriptorLayout.SIZE_CLASS) != sc || !startsBlock(offset, sc)
                    || (tail ^ head) >>> PageMap.PAGE_SHIFT != 0 || count > max) {
                broken(); // another superblock's stale blocks, or more free blocks than it has
                return;
            }
            if (count == max
                    // (9) volatile load of the remote head: an owned superblock is never empty.
                    && Words.lv(desc + DescriptorLayout.REMOTE_HEAD) != ABANDONED
                    // (9b) volatile anchor load: still owned after old, so old + k counts a block twice.
                    && Words.lv(desc + DescriptorLayout.ANCHOR) == old) {
                broken();
                return;
            }
            if (Anchor.count(old) > 0) {
                // (2) plain store of the tail link onto the current list; published by (3).
                Words.sp(tail, sb + (long) Anchor.avail(old) * size - (tail + size));
            }
            final int state = count == max ? Anchor.EMPTY : Anchor.PARTIAL;
            // (3) anchor CAS.
            if (Words.cas(desc + DescriptorLayout.ANCHOR, old, Anchor.update(old, state, headIndex, count))) {
                if (state == Anchor.EMPTY) {
                    releaseSuperblock(sb);
                    if (Anchor.state(old) == Anchor.FULL) {
                        descriptors.retire(d); // FULL->EMPTY: on no partial stack, so nobody else can
                    }
                } else if (Anchor.state(old) == Anchor.FULL) {
                    descriptors.pushPartial(sc, d);
                }
                return;
            }
        }
    }

    private void releaseSuperblock(final long sb) {
        final long page = sb >>> PageMap.PAGE_SHIFT;
        PageMap.setOwner(page, 0L); // unregister before the page can be reused
        pages.free(page, 1);
    }

    // ---------------------------------------------------------------- owner return (mimalloc)

    /**
     * Takes ownership of a superblock just filled from, so that remote frees come to its remote
     * list; false if another cache owns it. That happens when a block the owner did not take is
     * flushed to the anchor (FULL -> PARTIAL, pushed) and we filled from it: overwriting the owner's
     * remote head would lose its remote list and give the superblock two owners.
     */
    boolean own(final int d) {
        // (4) CAS ABANDONED -> 0 (release); pairs with (5).
        return Words.cas(descriptors.offset(d) + DescriptorLayout.REMOTE_HEAD, ABANDONED, 0L);
    }

    /** Pushes a block onto its owned superblock's remote list; false if the superblock is unowned. */
    boolean pushRemote(final int d, final long ptr) {
        final long field = descriptors.offset(d) + DescriptorLayout.REMOTE_HEAD;
        // (5a) plain pre-check: an abandoned superblock (the common case for a cache's own older
        // superblocks) costs no ordered access. A stale answer only changes where the block goes.
        if (Words.lp(field) == ABANDONED) {
            return false;
        }
        for (;;) {
            // (5) volatile load of the remote head.
            final long head = Words.lv(field);
            if (head == ABANDONED) {
                return false;
            }
            // (5b) plain link store (absolute, 0-terminated); published by (6).
            Words.sp(ptr, head);
            // (6) CAS of the remote head.
            if (Words.cas(field, head, ptr)) {
                return true;
            }
        }
    }

    /**
     * Pushes the run {@code ptrs[from..to)} of blocks of owned superblock {@code d}, linked by relative
     * links in that order, onto its remote list with one CAS; false (the links left relative) if the
     * superblock is unowned.
     */
    boolean pushRemoteRun(final int d, final long[] ptrs, final int from, final int to) {
        final long field = descriptors.offset(d) + DescriptorLayout.REMOTE_HEAD;
        for (int k = from; k < to - 1; k++) {
            Words.sp(ptrs[k], ptrs[k + 1]); // absolute links for the remote list
        }
        for (;;) {
            // (5) volatile load of the remote head.
            final long head = Words.lv(field);
            if (head == ABANDONED) {
                final int size = SizeClasses.size(PageMap.sizeClass(PageMap.owner(ptrs[from] >>> PageMap.PAGE_SHIFT)));
                for (int k = from; k < to - 1; k++) {
                    Words.sp(ptrs[k], ptrs[k + 1] - (ptrs[k] + size)); // back to relative links
                }
                return false;
            }
            // (5b) plain link store; published by (6).
            Words.sp(ptrs[to - 1], head);
            // (6) CAS of the remote head.
            if (Words.cas(field, head, ptrs[from])) {
                return true;
            }
        }
    }

    /** Moves the remote list of owned superblock {@code d} into the cache; returns the blocks moved. */
    int collectRemote(final ThreadCache cache, final int sc, final int d) {
        final long desc = descriptors.offset(d);
        // (7) get-and-set; acquires the links written before (6).
        final long list = Words.xchg(desc + DescriptorLayout.REMOTE_HEAD, 0L);
        if (list == 0 || list == ABANDONED) {
            return 0;
        }
        final int n = relink(desc, list, remoteLength(desc, list));
        if (n > 0) {
            cache.setList(sc, list, n);
        }
        return n;
    }

    /**
     * OWNED: marks superblock {@code d}, just owned by the cache with tag {@code tag}, as that
     * cache's in its page's owner word (PageMap (2), a release store).
     */
    void tag(final int d, final int tag) {
        final long page = Words.lp(descriptors.offset(d) + DescriptorLayout.SUPERBLOCK) >>> PageMap.PAGE_SHIFT;
        PageMap.setOwner(page, PageMap.withCache(PageMap.owner(page), tag));
    }

    /**
     * Gives up ownership of {@code d}: clears its owner word's cache tag (OWNED; only the owner ever
     * reads its own tag, so a plain check suffices), then {@link #abandon}s it.
     */
    void disown(final int d) {
        final long page = Words.lp(descriptors.offset(d) + DescriptorLayout.SUPERBLOCK) >>> PageMap.PAGE_SHIFT;
        final long word = PageMap.owner(page);
        if (PageMap.cache(word) != 0) {
            PageMap.setOwner(page, PageMap.withCache(word, 0));
        }
        abandon(d);
    }

    /** Gives up ownership of {@code d}; its remote list goes back to the anchor. */
    void abandon(final int d) {
        final long desc = descriptors.offset(d);
        // (7) get-and-set to ABANDONED: later remote frees take the ordinary path.
        final long list = Words.xchg(desc + DescriptorLayout.REMOTE_HEAD, ABANDONED);
        if (list != 0 && list != ABANDONED) {
            final int n = relink(desc, list, remoteLength(desc, list));
            flushList(list, n, (int) Words.lp(desc + DescriptorLayout.SIZE_CLASS));
        }
    }

    /**
     * The length of the 0-terminated remote list {@code list} of owned superblock {@code desc}, up to
     * its first link that does not lead to a block of the superblock; 0 if the list has more blocks
     * than the superblock (a cycle: a block pushed twice) or does not start with one of its blocks.
     * Either is a double free's doing, and what is not counted is dropped (see {@link #broken()}).
     */
    private int remoteLength(final long desc, final long list) {
        // The list was taken while the superblock was owned, so not released (9): the fields are those
        // of the list's superblock. (Unless a double free also counted the list's blocks free, and
        // the superblock was released since an abandon; then these checks and flushRun's drop them.)
        final long sb = Words.lp(desc + DescriptorLayout.SUPERBLOCK);
        final int max = (int) Words.lp(desc + DescriptorLayout.MAX_COUNT);
        final int sc = (int) Words.lp(desc + DescriptorLayout.SIZE_CLASS);
        int n = 0;
        for (long p = list; p != 0; p = Words.lp(p)) { // p's link is read once p is known to be a block
            if (!startsBlock(p - sb, sc)) {
                broken();
                return n;
            }
            if (++n > max) {
                broken();
                return 0;
            }
        }
        return n;
    }

    /**
     * Converts the first {@code n} links of the remote list {@code list} of superblock {@code desc}
     * to relative links; returns how many blocks the converted list holds. That is {@code n} unless
     * a link changed since {@link #remoteLength} read it: a block on the list is also in use (a
     * double free), and the program wrote it. The list then ends at the block before that link.
     */
    private int relink(final long desc, final long list, final int n) {
        final long sb = Words.lp(desc + DescriptorLayout.SUPERBLOCK);
        final int sc = (int) Words.lp(desc + DescriptorLayout.SIZE_CLASS);
        final int size = SizeClasses.size(sc);
        long p = list;
        for (int i = 1; i < n; i++) {
            final long next = Words.lp(p);
            if (!startsBlock(next - sb, sc)) {
                broken();
                return i;
            }
            Words.sp(p, next - (p + size));
            p = next;
        }
        return n;
    }

    // ---------------------------------------------------------------- list validation

    /**
     * Whether {@code ptr} starts a block of a superblock of class {@code sc} of this allocator, by its
     * page's owner word: the check of a link that leaves its block's page.
     */
    boolean isBlock(final long ptr, final int sc) {
        return (ptr & 7) == 0 && ptr != 0 && Long.compareUnsigned(ptr, LimboAllocator.WORD_LIMIT) < 0
                && PageMap.owner(ptr >>> PageMap.PAGE_SHIFT) >>> PageMap.CLASS_TAG_SHIFT == (smallTag << 6 | sc)
                && startsBlock(ptr & PageMap.PAGE_MASK, sc);
    }

    /** Whether {@code offset}, from a superblock's start, is the start of one of its blocks of class {@code sc}. */
    private static boolean startsBlock(final long offset, final int sc) {
        final int size = SizeClasses.size(sc);
        return Long.compareUnsigned(offset, PageMap.PAGE - size) <= 0
                && (long) SizeClasses.divide(offset, sc) * size == offset;
    }

    /**
     * Records a list or run that a double free broke, and that was dropped instead of followed: its
     * blocks are leaked. Counted in {@link AllocatorStats#brokenLists()}.
     */
    void broken() {
        brokenLists.incrementAndGet();
    }

    /** Lists and runs dropped as broken since the allocator was created ({@link AllocatorStats#brokenLists()}). */
    long brokenLists() {
        return brokenLists.get();
    }

    /**
     * Counts the superblocks that descriptors hold, by the state of their anchors (racy reads):
     * {@code {full, partial, empty, descriptors carved}}.
     */
    long[] superblockStates() {
        final int carved = descriptors.carved();
        final long[] states = {0, 0, 0, carved};
        for (int d = 1; d < carved; d++) {
            final long off = descriptors.offset(d);
            if (Words.opaqueLoad(off + DescriptorLayout.SIZE_CLASS) == 0) {
                continue;
            }
            switch (Anchor.state(Words.opaqueLoad(off + DescriptorLayout.ANCHOR))) {
                case Anchor.FULL -> states[0]++;
                case Anchor.PARTIAL -> states[1]++;
                default -> states[2]++;
            }
        }
        return states;
    }
}
