package dev.limbo.allocator;

import dev.limbo.allocator.internal.DescriptorLayout;
import dev.limbo.allocator.internal.Descriptors;
import dev.limbo.allocator.internal.PageMap;
import dev.limbo.allocator.internal.SizeClasses;
import dev.limbo.core.Words;

/**
 * The superblocks one thread cache owns under {@link FlushPolicy#OWNED} (mimalloc's pages, Leijen,
 * Zorn and de Moura, "Mimalloc: Free List Sharding in Action", 2019, §2-3): besides the current
 * superblock of each class, whose free list is the cache's list, every superblock the cache
 * allocated from stays owned, with a local free list of its own in the owner-only line of its
 * descriptor. The owner's frees of their blocks go there, without a cap, a flush or an atomic;
 * other threads' frees go to the superblock's remote list (SuperblockHeap.pushRemote).
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm: per size class, the current superblock (ThreadCache CURRENT, its free list is the
 * cache's HEAD/COUNT list) and two circular doubly linked lists of the other owned superblocks,
 * threaded through the descriptors' OWNED_PREV/OWNED_NEXT: READY (local list not empty) and FULL
 * (local list empty: every block is in use, or was freed by another thread onto the remote list).
 * The first local free moves a superblock from FULL to READY. A refill, when the cache's list is
 * empty, takes in this order: the current superblock's remote list; a READY superblock's local
 * list (swapped in whole, O(1)); the remote list of one of the first FULL_SCAN FULL superblocks
 * (the list rotates, so every one is visited in turn); the partial stack; a new superblock.
 * A superblock whose local list comes to hold every block is released to the page allocator at
 * once, unless it is the class's only READY one (kept so that a thread alternating between two
 * superblocks does not churn pages; mimalloc keeps a retired page for the same reason). The
 * remote lists of FULL superblocks wait for a refill that reaches them, or for the cache's drain
 * (trim, decay of an idle class, thread exit).
 *
 * Invariants (while no block is freed twice):
 *  - A superblock is owned by this cache iff its page's owner word carries this cache's tag; it is
 *    then exactly one of: the current superblock of its class, on READY, on FULL.
 *  - The current superblock's LOCAL_COUNT is 0; a READY one's is > 0; a FULL one's is 0.
 *  - LOCAL_COUNT blocks of the superblock are linked from LOCAL_HEAD by the relative links of a
 *    cache list; localBlocks[c] is the sum of LOCAL_COUNT over the class's READY superblocks.
 *  - An owned superblock's remote head is not ABANDONED, so no flush empties it
 *    (SuperblockHeap (9)), and it is not released while owned: release() disowns it first.
 * Whatever the program frees, a local free never takes LOCAL_COUNT past the superblock's block
 * count (a free that would is a double free, refused before anything changes), and the lists a
 * cache takes in are followed with the cache's own link checks (ThreadCache.leavesPage), so a
 * double free costs user data, never metadata.
 *
 * Linearization points: a local free - the store of LOCAL_HEAD (owner-only); the rest as in
 * SuperblockHeap (remote push CAS (6), collect exchange (7), anchor CAS (3)).
 *
 * Progress: owner-only plain work, plus the lock-free collect, fill and flush of SuperblockHeap.
 *
 * Memory ordering: every field here is read and written by the owner only (plain), or by a thread
 * to which the cache was handed over (a stripe's or trim()'s claim: IdleCacheHandshake (C1), (C2),
 * (A2)-(A4); a spare's hand-over: CacheRegistry (1)/(2)). The owner word's tag is release-stored
 * (PageMap (2)) by tag() and disown(); a free by another thread reads it with a plain load and at
 * worst sees the tag of an earlier or later owner, which sends the block to the remote list (then
 * SuperblockHeap (5) decides: owned, or the anchor). Only the owner itself can read its own tag:
 * it wrote it, and a tag is handed to a new cache only after every owner word carrying it was
 * cleared (CacheRegistry.retire: drain, then the tag is freed under the tag pool's monitor, which
 * orders the clears before the new owner's first read).
 *
 * Reclamation and ABA: descriptors are type-stable; a descriptor of an owned superblock is never
 * retired while owned (it is never EMPTY), so the indices on READY and FULL stay valid.
 * }</pre>
 */
final class OwnedSuperblocks {

    /** FULL superblocks whose remote lists a refill tries before it takes a new superblock. */
    static final int FULL_SCAN = 4;

    private final SuperblockHeap heap;
    private final Descriptors descriptors;
    private final ThreadCache cache;
    /** This cache's tag in owner words (1..PageMap.MAX_CACHE); -1 if it has none and owns nothing. */
    final int tag;
    /** Per class, a descriptor on the READY / FULL circular list (its head), or 0 if the list is empty. */
    private final int[] ready = new int[SizeClasses.COUNT + 1];
    private final int[] full = new int[SizeClasses.COUNT + 1];
    private final int[] readyCount = new int[SizeClasses.COUNT + 1];
    /** Per class, blocks on the local lists of READY superblocks. */
    private final long[] localBlocks = new long[SizeClasses.COUNT + 1];
    /** Per class, whether a local free or a refill touched READY or FULL since the last decay pass. */
    private final boolean[] touched = new boolean[SizeClasses.COUNT + 1];
    /** Per class, the decay passes in a row that found it untouched. */
    private final int[] idlePasses = new int[SizeClasses.COUNT + 1];

    OwnedSuperblocks(final SuperblockHeap heap, final ThreadCache cache, final int tag) {
        this.heap = heap;
        this.descriptors = heap.descriptors;
        this.cache = cache;
        this.tag = tag;
    }

    /** Whether the owner word {@code owner} names a superblock this cache owns. */
    boolean owns(final long owner) {
        return PageMap.cache(owner) == tag;
    }

    /** Frees {@code ptr}, of the owned superblock {@code d} of class {@code sc} that is not current. */
    void freeLocal(final long ptr, final int sc, final int d) {
        final long desc = descriptors.offset(d);
        // Descriptors are aligned, and ownerOf checked ptr's alignment.
        final long n = Words.lpNoAlignCheck(desc + DescriptorLayout.LOCAL_COUNT);
        // The descriptor's MAX_COUNT, from the table: a local free reads nothing from the
        // descriptor's shared line, which other threads' remote frees write.
        final int max = PageMap.blocks(sc);
        if (n >= max) {
            throw new IllegalStateException(String.format(java.util.Locale.ROOT,
                    "double free: block 0x%x; its superblock's %d blocks are all free already", ptr, max));
        }
        final int size = SizeClasses.size(sc);
        Words.spNoAlignCheck(ptr, Words.lpNoAlignCheck(desc + DescriptorLayout.LOCAL_HEAD) - (ptr + size)); // unused while n == 0
        Words.spNoAlignCheck(desc + DescriptorLayout.LOCAL_HEAD, ptr);
        Words.spNoAlignCheck(desc + DescriptorLayout.LOCAL_COUNT, n + 1);
        localBlocks[sc]++;
        touched[sc] = true;
        if (n == 0) {
            unlink(full, sc, d);
            link(ready, sc, d);
            readyCount[sc]++;
        } else if (n + 1 == max && readyCount[sc] > 1) {
            release(sc, d);
        }
    }

    /**
     * Refills the cache's empty list of class {@code sc} (see the notes for the order); returns the
     * blocks now on it. Blocks that come from outside the cache are added to its taken bytes.
     */
    int refill(final int sc) {
        final int size = SizeClasses.size(sc);
        touched[sc] = true;
        final int current = cache.current(sc);
        if (current != 0) {
            final int n = heap.collectRemote(cache, sc, current);
            if (n > 0) {
                cache.takenBytes += (long) n * size;
                return n;
            }
            cache.setCurrent(sc, 0);
            link(full, sc, current);
        }
        final int r = ready[sc];
        if (r != 0) {
            final long desc = descriptors.offset(r);
            final int n = (int) Words.lp(desc + DescriptorLayout.LOCAL_COUNT);
            unlink(ready, sc, r);
            readyCount[sc]--;
            localBlocks[sc] -= n;
            cache.setList(sc, Words.lp(desc + DescriptorLayout.LOCAL_HEAD), n);
            Words.sp(desc + DescriptorLayout.LOCAL_COUNT, 0);
            cache.setCurrent(sc, r);
            return n;
        }
        int f = full[sc];
        for (int i = 0; i < FULL_SCAN && f != 0; i++) {
            final int next = (int) Words.lp(descriptors.offset(f) + DescriptorLayout.OWNED_NEXT);
            final int n = heap.collectRemote(cache, sc, f);
            if (n > 0) {
                unlink(full, sc, f);
                cache.setCurrent(sc, f);
                cache.takenBytes += (long) n * size;
                return n;
            }
            full[sc] = next; // rotate: the next refill starts after the ones tried
            f = next;
        }
        final int d = heap.fill(cache, sc);
        final int n = cache.count(sc);
        cache.takenBytes += (long) n * size;
        if (tag > 0 && heap.own(d)) {
            heap.tag(d, tag);
            cache.setCurrent(sc, d);
        } // else another cache owns it: its blocks are ours to hand out, their frees go to that owner
        return n;
    }

    /** Gives up every owned superblock of class {@code sc} but the current one, returning their local lists. */
    void drain(final int sc) {
        while (ready[sc] != 0) {
            release(sc, ready[sc]);
        }
        while (full[sc] != 0) {
            final int d = full[sc];
            unlink(full, sc, d);
            heap.disown(d);
        }
    }

    /**
     * One decay pass for class {@code sc} (ThreadCache.decay, jemalloc's tcache GC): the READY and
     * FULL superblocks of a class that no local free and no refill touched for IDLE_PASSES whole
     * intervals in a row are given up ({@link #drain}); the current one stays. (Not after one
     * interval: a working set a little larger than a superblock, such as Threadtest's, can spend
     * an interval handing out the current superblock's blocks alone, and a drain would then give
     * up the other superblock it needs next, only to map a new one.)
     */
    void decay(final int sc) {
        if (touched[sc]) {
            idlePasses[sc] = 0;
        } else if (++idlePasses[sc] >= ThreadCache.IDLE_PASSES) {
            idlePasses[sc] = 0;
            drain(sc);
        }
        touched[sc] = false;
    }

    /** Bytes on the local lists (racy read; exact when the owner is quiescent). */
    long localBytes() {
        long bytes = 0;
        for (int sc = 1; sc <= SizeClasses.COUNT; sc++) {
            bytes += localBlocks[sc] * SizeClasses.size(sc);
        }
        return bytes;
    }

    /** Gives up READY superblock {@code d}: off the list, disowned, its local list back to its anchor. */
    private void release(final int sc, final int d) {
        unlink(ready, sc, d);
        readyCount[sc]--;
        returnLocal(sc, d);
    }

    /** Disowns {@code d}, off every list, and returns its local list to its anchor. */
    private void returnLocal(final int sc, final int d) {
        final long desc = descriptors.offset(d);
        final int n = (int) Words.lp(desc + DescriptorLayout.LOCAL_COUNT);
        final long head = Words.lp(desc + DescriptorLayout.LOCAL_HEAD);
        Words.sp(desc + DescriptorLayout.LOCAL_COUNT, 0);
        localBlocks[sc] -= n;
        cache.returnedBytes += (long) n * SizeClasses.size(sc);
        heap.disown(d); // first: a flush never empties an owned superblock
        heap.flushList(head, n, sc);
    }

    private void link(final int[] list, final int sc, final int d) {
        final long desc = descriptors.offset(d);
        final int head = list[sc];
        if (head == 0) {
            Words.sp(desc + DescriptorLayout.OWNED_PREV, d);
            Words.sp(desc + DescriptorLayout.OWNED_NEXT, d);
            list[sc] = d;
            return;
        }
        final long headDesc = descriptors.offset(head);
        final int last = (int) Words.lp(headDesc + DescriptorLayout.OWNED_PREV);
        Words.sp(descriptors.offset(last) + DescriptorLayout.OWNED_NEXT, d);
        Words.sp(desc + DescriptorLayout.OWNED_PREV, last);
        Words.sp(desc + DescriptorLayout.OWNED_NEXT, head);
        Words.sp(headDesc + DescriptorLayout.OWNED_PREV, d);
    }

    private void unlink(final int[] list, final int sc, final int d) {
        final long desc = descriptors.offset(d);
        final int next = (int) Words.lp(desc + DescriptorLayout.OWNED_NEXT);
        if (next == d) {
            list[sc] = 0;
            return;
        }
        final int prev = (int) Words.lp(desc + DescriptorLayout.OWNED_PREV);
        Words.sp(descriptors.offset(prev) + DescriptorLayout.OWNED_NEXT, next);
        Words.sp(descriptors.offset(next) + DescriptorLayout.OWNED_PREV, prev);
        if (list[sc] == d) {
            list[sc] = next;
        }
    }
}
