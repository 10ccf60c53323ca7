package dev.limbo.allocator.internal;

/**
 * The 64-bit superblock anchor of LRMalloc (thesis §5.4.1), packed as
 * {@code [63..62] state | [61..31] avail | [30..0] count}. No ABA tag is needed: a fill takes the
 * whole free list and a flush splices a list it owns, so {state, avail, count} describes the list
 * completely at the instant of each CAS (digest §3.11).
 */
public final class Anchor {

    /** Every block is in a cache or in use; the superblock is on no partial stack. */
    public static final int FULL = 0;
    /** Some blocks are in the free list; the descriptor is (or is about to be) on a partial stack. */
    public static final int PARTIAL = 1;
    /** Every block is free; the superblock has been (or is being) returned to the page allocator. */
    public static final int EMPTY = 2;

    private static final long MASK31 = 0x7FFF_FFFFL;

    private Anchor() {
    }

    public static long pack(final int state, final int avail, final int count) {
        return ((long) state << 62) | ((avail & MASK31) << 31) | (count & MASK31);
    }

    public static int state(final long anchor) {
        return (int) (anchor >>> 62);
    }

    public static int avail(final long anchor) {
        return (int) ((anchor >>> 31) & MASK31);
    }

    public static int count(final long anchor) {
        return (int) (anchor & MASK31);
    }
}
