package dev.limbo.allocator.internal;

import dev.limbo.core.Region;
import dev.limbo.core.Words;

/**
 * The process-wide page map: one {@link PageEntryLayout entry} per page of the global region, where
 * a page is the superblock size ({@value #PAGE_SHIFT_PROPERTY}, default 2^16 = 64 KiB). It replaces
 * LRMalloc's per-4-KiB pagemap (thesis §5.5): superblocks are page-aligned in the region, so a
 * pointer's page is {@code ptr >>> PAGE_SHIFT}.
 *
 * <p>The owner word encodes {@code kind:2 | allocator:16 | sizeClass:8 | descriptor:32}. Kinds:
 * {@link #NONE} (not allocated), {@link #SMALL} (a superblock of one size class),
 * {@link #LARGE} (first page of a large allocation), {@link #LARGE_INTERIOR} (a later page of one).
 */
public final class PageMap {

    /** System property: log2 of the page (= superblock) size; 15..22, default 16 (64 KiB). */
    public static final String PAGE_SHIFT_PROPERTY = "limbo.alloc.pageShift";
    public static final int PAGE_SHIFT = pageShift();
    public static final long PAGE = 1L << PAGE_SHIFT;
    public static final long PAGE_MASK = PAGE - 1;
    /** Pages in the global region, i.e. entries in the map. */
    public static final long PAGES = Region.global().size() >>> PAGE_SHIFT;

    public static final int NONE = 0;
    public static final int SMALL = 1;
    public static final int LARGE = 2;
    public static final int LARGE_INTERIOR = 3;

    private static final long BASE = claimTable();

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
        // (2b) CAS of the owner word. Makes freeing a large run exclusive.
        return Words.cas(BASE + page * PageEntryLayout.SIZE + PageEntryLayout.OWNER, expected, 0L);
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

    public static long encode(final int kind, final int allocator, final int sizeClass, final int descriptor) {
        return ((long) kind << 62) | ((long) (allocator & 0xFFFF) << 40) | ((long) (sizeClass & 0xFF) << 32)
                | (descriptor & 0xFFFF_FFFFL);
    }

    public static int kind(final long owner) {
        return (int) (owner >>> 62);
    }

    /**
     * {@code owner >>> TAG_SHIFT} is the kind and allocator of an owner word ({@code kind:2 |
     * allocator:16}): one comparison with {@link #smallTag} tells whether a block is a small block of
     * a given allocator.
     */
    public static final int TAG_SHIFT = 40;

    /** The tag of the owner words of {@code allocator}'s small blocks; see {@link #TAG_SHIFT}. */
    public static long smallTag(final int allocator) {
        return encode(SMALL, allocator, 0, 0) >>> TAG_SHIFT;
    }

    public static int allocator(final long owner) {
        return (int) ((owner >>> TAG_SHIFT) & 0xFFFF);
    }

    public static int sizeClass(final long owner) {
        return (int) ((owner >>> 32) & 0xFF);
    }

    public static int descriptor(final long owner) {
        return (int) owner;
    }

    private static int pageShift() {
        final int shift = Integer.getInteger(PAGE_SHIFT_PROPERTY, 16);
        if (shift < 15 || shift > 22) {
            throw new IllegalArgumentException("-D" + PAGE_SHIFT_PROPERTY + "=" + shift
                    + " is out of range [15, 22] (32 KiB .. 4 MiB pages)");
        }
        return shift;
    }

    private static long claimTable() {
        final Region region = Region.global();
        final long bytes = (PAGES * PageEntryLayout.SIZE + region.pageSize() - 1) & -region.pageSize();
        final long base = region.claim(bytes, region.pageSize());
        region.commit(base, bytes);
        return base;
    }
}
