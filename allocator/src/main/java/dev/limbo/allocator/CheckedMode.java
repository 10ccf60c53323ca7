package dev.limbo.allocator;

import dev.limbo.allocator.internal.BlockStates;
import dev.limbo.allocator.internal.PageMap;
import dev.limbo.allocator.internal.SizeClasses;
import dev.limbo.core.Words;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Locale;

/**
 * The checked and debug modes of a {@link LimboAllocator}: block states, the quarantine of recently
 * freed blocks and runs, and (debug mode) poisoning. One instance per checked allocator; a
 * {@link Quarantine} per thread cache.
 *
 * <pre>{@code
 * Implementation notes
 *
 * What it does: a free moves the block's state (BlockStates) from ALLOCATED to FREE (debug:
 * POISONED) by a CAS, so a free of a block that is not allocated throws, and of two frees of one
 * block at once exactly one wins. The freed block then waits in the freeing cache's quarantine, a
 * FIFO bounded in bytes, before it goes to the cache's free list: while it waits (and afterwards
 * until it is allocated again) its state is not ALLOCATED, so a stale free of it throws instead of
 * freeing whoever got the block next. A large run is quarantined the same way: its first page's
 * owner word becomes LARGE_FREED (PageMap) by a CAS (2b), exactly one of two racing frees wins,
 * and a stale free sees LARGE_FREED and throws; its pages stay the allocator's (and committed)
 * until the quarantine releases them. A block or run larger than the bound skips the quarantine.
 * Debug mode is the same plus poison: a freed block is filled with POISON (but its link word),
 * and the poison is verified when the block leaves the quarantine and when it is allocated again.
 *
 * Invariants (per quarantine, touched only by the thread that holds its cache, as the cache's
 * fields; stats() reads them racily):
 *  - ring[(head + i) & (ring.length - 1)], i < count, are the quarantined pointers, oldest first;
 *    bytes is the sum of their sizes (class size, or the run's pages) and never exceeds bound;
 *    large is the part of bytes that is large runs.
 *  - A quarantined small block's state is FREE or POISONED and it is on no list, so its
 *    superblock is not EMPTY and keeps its owner word; a quarantined run's first owner word is
 *    LARGE_FREED and its pages are counted in the allocator's largeBytes until released.
 *  - ring.length is a power of two, grown by doubling when full (at most log2(bound / 8) times
 *    in a cache's life: every entry is at least 8 bytes).
 *
 * Linearization points: a checked free of a small block - the state CAS (BlockStates (1)); of a
 * large run - the owner-word CAS (PageMap (2b)). A release is local to the cache, and then the
 * ordinary push (ThreadCache) or large free (LargeRuns) linearizes.
 *
 * Progress: lock-free as the allocator: the state CAS retries only when another block's state in
 * the same word changed; the quarantine is thread-local.
 *
 * Memory ordering: BlockStates (1)-(3) and PageMap (2b). The quarantine's fields are plain and
 * owned by the cache's holder; a stripe, or a cache that trim() drains, passes them on with its
 * claim (IdleCacheHandshake (C1), (C2), (A2)-(A4)).
 *
 * Reclamation and ABA: the quarantine delays reuse; it cannot see past it. A stale pointer whose
 * block left the quarantine and was allocated again is indistinguishable from the new owner's
 * pointer (the state is ALLOCATED again), and its free succeeds: that is the limit of checked
 * mode's reach (README). A block's state and a run's owner word are set only by the thread that
 * holds the block (allocation, quarantine release) or by the one CAS that wins its free.
 * }</pre>
 */
final class CheckedMode {

    /** The default bound of a cache's quarantine, in bytes: {@link LimboAllocator.Builder#quarantineBytes}. */
    static final long DEFAULT_QUARANTINE_BYTES = 256 << 10;
    private static final int INITIAL_RING = 64;
    private static final byte POISON = (byte) 0xDB;
    private static final MemorySegment POISON_TEMPLATE =
            Arena.global().allocate(SizeClasses.MAX_SMALL).fill(POISON);

    private final LargeRuns largeRuns;
    private final boolean debug;
    /** The most bytes one cache's quarantine holds. */
    private final long bound;

    CheckedMode(final LargeRuns largeRuns, final boolean debug, final long bound) {
        this.largeRuns = largeRuns;
        this.debug = debug;
        this.bound = bound;
    }

    /** Validates a small block on free and marks it free (poisoned in debug mode). */
    void markFreed(final long ptr, final long owner) {
        final int sc = PageMap.sizeClass(owner);
        final long offset = ptr & PageMap.PAGE_MASK;
        final int index = SizeClasses.divide(offset, sc);
        if ((long) index * SizeClasses.size(sc) != offset || !BlockStates.markFreed(ptr >>> PageMap.PAGE_SHIFT,
                index, debug ? BlockStates.POISONED : BlockStates.FREE)) {
            LimboAllocator.checkBlock(ptr, owner, true); // throws the precise error
            throw LimboAllocator.notAllocated(ptr, SizeClasses.size(sc)); // allocated again meanwhile
        }
        if (debug) {
            poison(ptr, SizeClasses.size(sc));
        }
    }

    /** Marks a block allocated, verifying its poison in debug mode. */
    void markAllocated(final long block, final int sc) {
        final long page = block >>> PageMap.PAGE_SHIFT;
        final int index = SizeClasses.divide(block & PageMap.PAGE_MASK, sc);
        if (debug && BlockStates.get(page, index) == BlockStates.POISONED) {
            verifyPoison(block, sc);
        }
        BlockStates.set(page, index, BlockStates.ALLOCATED);
    }

    /** Debug mode: fills a freed block, except its link word, with the poison byte. */
    private static void poison(final long ptr, final int size) {
        if (size > Long.BYTES) {
            MemorySegment.copy(POISON_TEMPLATE, 0, Words.SEGMENT, ptr + Long.BYTES, size - Long.BYTES);
        }
    }

    /** Debug mode: throws if a freed block's poison was overwritten. */
    private static void verifyPoison(final long ptr, final int sc) {
        final int size = SizeClasses.size(sc);
        if (size <= Long.BYTES) {
            return;
        }
        final long mismatch = MemorySegment.mismatch(Words.SEGMENT, ptr + Long.BYTES, ptr + size,
                POISON_TEMPLATE, 0, size - Long.BYTES);
        if (mismatch >= 0) {
            throw new IllegalStateException(String.format(Locale.ROOT,
                    "write after free: block 0x%x (%d bytes) was modified at byte %d while free",
                    ptr, size, mismatch + Long.BYTES));
        }
    }

    /** A quarantine for {@code cache}. */
    Quarantine quarantine(final ThreadCache cache) {
        return new Quarantine(cache);
    }

    /** A cache's quarantine: a FIFO of freed blocks and runs, bounded in bytes; see the notes. */
    final class Quarantine {

        private final ThreadCache cache;
        private long[] ring = new long[0];
        private int head;
        private int count;
        private long bytes;
        private long large;

        private Quarantine(final ThreadCache cache) {
            this.cache = cache;
        }

        /** Frees the small block {@code ptr} of this allocator, whose page's owner word is {@code owner}. */
        void free(final long ptr, final long owner) {
            markFreed(ptr, owner);
            final int sc = PageMap.sizeClass(owner);
            if (!add(ptr, SizeClasses.size(sc))) {
                cache.push(ptr, sc, owner);
            }
        }

        /** Frees {@code ptr}, whose page is no small superblock of this allocator, or reports why not. */
        void freeNotSmall(final long ptr, final long owner) {
            largeRuns.check(ptr, owner);
            final long page = ptr >>> PageMap.PAGE_SHIFT;
            final long freed = PageMap.encode(PageMap.LARGE, PageMap.allocator(owner), 0, PageMap.LARGE_FREED);
            if (!PageMap.replaceOwner(page, owner, freed)) {
                throw LargeRuns.freedConcurrently(ptr);
            }
            final long runBytes = PageMap.header(page) << PageMap.PAGE_SHIFT; // ours now: the header is stable
            if (add(ptr, runBytes)) {
                large += runBytes;
            } else {
                largeRuns.free(ptr, freed);
            }
        }

        /** Appends {@code ptr} of {@code size} bytes, releasing the oldest entries to make room; false if it is over the bound. */
        private boolean add(final long ptr, final long size) {
            if (size > bound) {
                return false;
            }
            while (bytes + size > bound) {
                releaseOldest();
            }
            if (count == ring.length) {
                grow();
            }
            ring[(head + count) & (ring.length - 1)] = ptr;
            count++;
            bytes += size;
            return true;
        }

        private void grow() {
            final long[] larger = new long[Math.max(INITIAL_RING, ring.length << 1)];
            for (int i = 0; i < count; i++) {
                larger[i] = ring[(head + i) & (ring.length - 1)];
            }
            ring = larger;
            head = 0;
        }

        /** Releases the oldest entry: a block goes to the cache (its poison verified), a run to the page allocator. */
        private void releaseOldest() {
            final long ptr = ring[head];
            head = (head + 1) & (ring.length - 1);
            count--;
            final long page = ptr >>> PageMap.PAGE_SHIFT;
            final long owner = PageMap.owner(page);
            if (PageMap.kind(owner) == PageMap.SMALL) {
                final int sc = PageMap.sizeClass(owner);
                bytes -= SizeClasses.size(sc);
                if (debug) {
                    verifyPoison(ptr, sc); // a damaged block leaves the quarantine, and is leaked
                }
                cache.push(ptr, sc, owner);
            } else {
                final long runBytes = PageMap.header(page) << PageMap.PAGE_SHIFT;
                bytes -= runBytes;
                large -= runBytes;
                largeRuns.free(ptr, owner);
            }
        }

        /** Releases everything (trim, thread exit). */
        void releaseAll() {
            while (count > 0) {
                releaseOldest();
            }
        }

        /** Bytes of small blocks held (racy read). */
        long smallBytes() {
            return bytes - large;
        }

        /** Bytes of large runs held (racy read). */
        long largeBytes() {
            return large;
        }
    }
}
