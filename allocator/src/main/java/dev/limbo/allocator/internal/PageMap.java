package dev.limbo.allocator.internal;

import dev.limbo.core.Region;
import dev.limbo.core.Words;

/**
 * The process-wide page map: one {@link PageEntryLayout entry} per page of the global region, where
 * a page is the superblock size ({@value #PAGE_SHIFT_PROPERTY}, default 2^16 = 64 KiB). It replaces
 * LRMalloc's per-4-KiB pagemap (thesis §5.5): superblocks are page-aligned in the region, so a
 * pointer's page is {@code ptr >>> PAGE_SHIFT}.
 *
 * <p>The owner word encodes {@code kind:2 | allocator:16 | sizeClass:6 | cache:14 | descriptor:26}
 * (high bits first). {@code cache} is the {@linkplain #cache owning thread cache's tag} while a
 * thread cache owns the superblock ({@code FlushPolicy.OWNED}), else 0: a free tells a block of
 * its own superblocks by one load. Kinds:
 * {@link #NONE} (not allocated), {@link #SMALL} (a superblock of one size class),
 * {@link #LARGE} (first page of a large allocation), {@link #LARGE_INTERIOR} (a later page of one).
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm and sources: LRMalloc's pagemap (thesis §5.5, digest §3.8), one entry per superblock-sized
 * page instead of per 4 KiB page because superblocks are page-aligned in the region (digest §7.1);
 * the header and footer words are the out-of-band "map" of the best-fit allocator (thesis §7.4,
 * Listing 7.1). The table's address space is claimed once, when the class initializes; its bytes
 * are charged against the commit limit lazily (charge()), as the page allocator grows into the
 * pages they describe, so a 64 GiB region does not charge its 32 MiB table up front and a small
 * commit limit works. Entries of pages nobody claimed are never written, and read as zeros.
 *
 * Invariants:
 *  - The owner word of a page is written (2) before any block of the page escapes, and cleared (2)
 *    or (2b) before the page goes back to the page allocator (LRMalloc's "unregister before unmap").
 *  - A small superblock's owner word names its descriptor and size class for as long as the page
 *    holds it; a large run's first page holds LARGE and its later pages LARGE_INTERIOR.
 *  - Header and footer words are correct for every run in the best-fit tree; for other runs they
 *    may be stale at any time (readers validate through the tree).
 *  - Flags are read and written only by the current owner of the page's run.
 * Non-invariants: the owner word of a page nobody holds a block of may change at any time.
 *
 * Linearization points: setOwner - the store (2); clearOwner and replaceOwner - the CAS (2b), which
 * at most one of two concurrent frees of the same large run wins.
 *
 * Progress: wait-free; every operation is a single access, except charge(), which the page
 * allocator calls once per grow: it takes the class's monitor, and charges (a counter update, no
 * system call) once per CHARGE_STEP of table, that is per 128 MiB of region with 64 KiB pages.
 *
 * Memory ordering (numbers local to this file; SuperblockHeap, LargeRuns and BestFitPageAllocator
 * cite them):
 *  (1) plain load of the owner word; ordered after (2) by the happens-before edge through which
 *      the caller got its block (see owner()).
 *  (2) release store of the owner word; pairs with (1) through that edge, and with (2b).
 *  (2b) CAS of the owner word (volatile); expects the LARGE word stored by (2) (or the
 *      LARGE_FREED word of checked mode's quarantine, which only the quarantine holding the run
 *      clears) and races with other (2b) CASes on the same page: only one free of a large run
 *      clears or marks it.
 *  (3) opaque load of a header; pairs with (4). (5) opaque load of a footer; pairs with (6).
 *  (4), (6) opaque stores of a header and a footer, made before the best-fit tree insertion that
 *      publishes them (BestFitPageAllocator (3)); a reader trusts a value only once the tree
 *      removal (BestFitPageAllocator (2)) of the run it derived has succeeded.
 *  Flags are plain; the page's run passes between owners through the tree operations
 *  (BestFitPageAllocator (2), (3)), which order them.
 *
 * Reclamation and ABA: entries are never freed (the table lives as long as the region), so a stale
 * read returns an old value, never faults. Header and footer values are not identities: a stale
 * pair is validated by removing exactly that (pages, start) run from the tree (BestFitPageAllocator).
 * The owner word of a large run carries no version: a free that loses (2b) to a concurrent free of
 * the same run is reported, but a free of a pointer whose run was freed and allocated again
 * (a double free after reuse) sees an identical word and cannot be told apart. Checked mode keeps
 * a freed run out of reuse for a while (its quarantine, with the LARGE_FREED word), so that a
 * stale free within that time is reported.
 * }</pre>
 */
public final class PageMap {

    /** System property: log2 of the page (= superblock) size; 15..22, default 16 (64 KiB). */
    public static final String PAGE_SHIFT_PROPERTY = "limbo.alloc.pageShift";
    public static final int PAGE_SHIFT = pageShift();
    public static final long PAGE = 1L << PAGE_SHIFT;
    public static final long PAGE_MASK = PAGE - 1;
    /** Per size class, the blocks of one of its superblocks (a superblock is one page): see {@link #blocks}. */
    private static final int[] BLOCKS = new int[SizeClasses.COUNT + 1];

    static {
        for (int sc = 1; sc <= SizeClasses.COUNT; sc++) {
            BLOCKS[sc] = (int) (PAGE / SizeClasses.size(sc));
        }
    }
    /** Pages in the global region, i.e. entries in the map. */
    public static final long PAGES = Region.global().size() >>> PAGE_SHIFT;

    public static final int NONE = 0;
    public static final int SMALL = 1;
    public static final int LARGE = 2;
    public static final int LARGE_INTERIOR = 3;

    /** Bytes of the table, whole OS pages. */
    private static final long TABLE_BYTES = (PAGES * PageEntryLayout.SIZE + Region.global().pageSize() - 1)
            & -Region.global().pageSize();
    private static final long BASE = Region.global().claim(TABLE_BYTES, Region.global().pageSize());
    /** The table is charged in steps of this many bytes (whole OS pages). */
    private static final long CHARGE_STEP = Math.max(64L << 10, Region.global().pageSize());
    /** Bytes of the table charged so far, from its start; guarded by the class. */
    private static long charged;

    private PageMap() {
    }

    /**
     * The owner word of {@code page}, for a caller that holds a block of the page (or a pointer it
     * validates against this word).
     */
    public static long owner(final long page) {
        // (1) plain load; (2) happens-before it: the owner word is release-stored before any block
        // of the page escapes, and a thread holding a block reached it through the anchor or
        // partial-stack CAS that handed out the superblock, a remote-free CAS, or the program's own
        // publication of the pointer, each a happens-before edge. (A pointer handed over by a data
        // race gets no guarantee about the block's contents either.) A plain load, because HotSpot
        // brackets every ordered region access with CPU-order barriers that force the free path to
        // reload every field it already read (about 3 ns an access, ReclaimGuardPtr).
        return Words.lp(BASE + page * PageEntryLayout.SIZE + PageEntryLayout.OWNER);
    }

    public static void setOwner(final long page, final long owner) {
        // (2) release-store; happens-before (1). Written before any block of the page escapes, cleared
        // before the page goes back to the page allocator.
        Words.sr(BASE + page * PageEntryLayout.SIZE + PageEntryLayout.OWNER, owner);
    }

    /** Clears the owner word if it still holds {@code expected}; true if this call cleared it. */
    public static boolean clearOwner(final long page, final long expected) {
        // (2b) CAS of the owner word; expects the word release-stored by (2) and races with other
        // threads' (2b) on the same page, so freeing a large run is exclusive.
        return Words.cas(BASE + page * PageEntryLayout.SIZE + PageEntryLayout.OWNER, expected, 0L);
    }

    /**
     * Replaces the owner word by {@code value} if it still holds {@code expected}; true if this call
     * replaced it.
     */
    public static boolean replaceOwner(final long page, final long expected, final long value) {
        // (2b) CAS of the owner word, as clearOwner.
        return Words.cas(BASE + page * PageEntryLayout.SIZE + PageEntryLayout.OWNER, expected, value);
    }

    public static long header(final long page) {
        // (3) opaque load; pairs with (4). May be stale: callers validate by removal from the tree.
        return Words.opaqueLoad(BASE + page * PageEntryLayout.SIZE + PageEntryLayout.HEADER);
    }

    public static void setHeader(final long page, final long pages) {
        // (4) opaque store; published to other threads by the tree insertion that follows it.
        Words.opaqueStore(BASE + page * PageEntryLayout.SIZE + PageEntryLayout.HEADER, pages);
    }

    public static long footer(final long page) {
        // (5) opaque load; pairs with (6). Validated like (3).
        return Words.opaqueLoad(BASE + page * PageEntryLayout.SIZE + PageEntryLayout.FOOTER);
    }

    public static void setFooter(final long page, final long start) {
        // (6) opaque store; published like (4).
        Words.opaqueStore(BASE + page * PageEntryLayout.SIZE + PageEntryLayout.FOOTER, start);
    }

    /** Page flags; only the page's current owner reads or writes them. */
    public static long flags(final long page) {
        return Words.lp(BASE + page * PageEntryLayout.SIZE + PageEntryLayout.FLAGS);
    }

    public static void setFlags(final long page, final long flags) {
        Words.sp(BASE + page * PageEntryLayout.SIZE + PageEntryLayout.FLAGS, flags);
    }

    /** Bits of the descriptor index in an owner word: at most {@value #MAX_DESCRIPTORS} descriptors. */
    private static final int DESCRIPTOR_BITS = 26;
    /** The most descriptors an owner word can name. */
    public static final int MAX_DESCRIPTORS = 1 << DESCRIPTOR_BITS;
    private static final int CACHE_SHIFT = DESCRIPTOR_BITS;
    /** The largest thread-cache tag an owner word can hold; tag 0 means "owned by no cache". */
    public static final int MAX_CACHE = (1 << 14) - 1;
    private static final int CLASS_SHIFT = 40;

    /** An owner word with no owning cache. */
    public static long encode(final int kind, final int allocator, final int sizeClass, final int descriptor) {
        return encode(kind, allocator, sizeClass, 0, descriptor);
    }

    /** An owner word; {@code cache} is the tag of the thread cache that owns the superblock, or 0. */
    public static long encode(final int kind, final int allocator, final int sizeClass, final int cache,
            final int descriptor) {
        return ((long) kind << 62) | ((long) (allocator & 0xFFFF) << TAG_SHIFT)
                | ((long) (sizeClass & 0x3F) << CLASS_SHIFT) | ((long) (cache & MAX_CACHE) << CACHE_SHIFT)
                | (descriptor & (MAX_DESCRIPTORS - 1L));
    }

    /** {@code word} with its owning cache replaced by {@code cache} (0: none). */
    public static long withCache(final long word, final int cache) {
        return (word & ~((long) MAX_CACHE << CACHE_SHIFT)) | ((long) (cache & MAX_CACHE) << CACHE_SHIFT);
    }

    /**
     * The descriptor field of the first page's owner word of a large run that checked mode freed into
     * its quarantine: the run is still the allocator's, and a free of it is a double free.
     */
    public static final int LARGE_FREED = 1;

    public static int kind(final long owner) {
        return (int) (owner >>> 62);
    }

    /**
     * {@code owner >>> TAG_SHIFT} is the kind and allocator of an owner word ({@code kind:2 |
     * allocator:16}): one comparison with {@link #smallTag} tells whether a block is a small block of
     * a given allocator.
     */
    public static final int TAG_SHIFT = 46;

    /** The tag of the owner words of {@code allocator}'s small blocks; see {@link #TAG_SHIFT}. */
    public static long smallTag(final int allocator) {
        return encode(SMALL, allocator, 0, 0) >>> TAG_SHIFT;
    }

    /**
     * {@code owner >>> CLASS_TAG_SHIFT} is the kind, allocator and size class of an owner word: one
     * comparison with {@code smallTag << 6 | sizeClass} tells a small block of a given class.
     */
    public static final int CLASS_TAG_SHIFT = CLASS_SHIFT;

    public static int allocator(final long owner) {
        return (int) ((owner >>> TAG_SHIFT) & 0xFFFF);
    }

    public static int sizeClass(final long owner) {
        return (int) ((owner >>> CLASS_SHIFT) & 0x3F);
    }

    /** The tag of the thread cache that owns the superblock, or 0. */
    public static int cache(final long owner) {
        return (int) ((owner >>> CACHE_SHIFT) & MAX_CACHE);
    }

    public static int descriptor(final long owner) {
        return (int) (owner & (MAX_DESCRIPTORS - 1L));
    }

    /** The blocks of one superblock of size class {@code sc} (1..SizeClasses.COUNT): a table load, no division. */
    public static int blocks(final int sc) {
        return BLOCKS[sc];
    }

    private static int pageShift() {
        final int shift = Integer.getInteger(PAGE_SHIFT_PROPERTY, 16);
        if (shift < 15 || shift > 22) {
            throw new IllegalArgumentException("-D" + PAGE_SHIFT_PROPERTY + "=" + shift
                    + " is out of range [15, 22] (32 KiB .. 4 MiB pages)");
        }
        return shift;
    }

    /**
     * Charges the entries of pages {@code [0, endPage)} against the region's commit limit, unless
     * they are charged already; the page allocator calls it before it hands out pages below
     * {@code endPage}.
     *
     * @throws dev.limbo.core.OffHeapOutOfMemoryError if the commit limit is reached; nothing more
     *                                                is charged then
     */
    public static synchronized void charge(final long endPage) {
        final long end = Math.min(TABLE_BYTES, (endPage * PageEntryLayout.SIZE + CHARGE_STEP - 1) & -CHARGE_STEP);
        if (end > charged) {
            Region.global().commit(BASE + charged, end - charged);
            charged = end;
        }
    }
}
