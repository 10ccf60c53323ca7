package dev.limbo.allocator.internal;

/**
 * The 64-bit superblock anchor of LRMalloc (thesis §5.4.1), packed as
 * {@code [63..62] state | [61..40] generation | [39..20] avail | [19..0] count}.
 *
 * <p>Within one life of a descriptor (one superblock) no ABA tag is needed: a fill takes the whole
 * free list and a flush splices a list it owns, so {state, avail, count} describes the list
 * completely at the instant of each CAS (digest §3.11). The generation tells lives apart: a
 * descriptor's next superblock starts at the next generation ({@link #renew}), so a CAS that read an
 * anchor of the previous superblock fails, even if the fields agree. Only a double free can send a
 * flusher there (its blocks' superblock was counted empty and released while it still held some),
 * and then its run must not land on the new superblock. 22 bits wrap after 4,194,304 lives of one
 * descriptor; a stale CAS would have to wait out exactly that many.
 *
 * <p>{@code avail} and {@code count} take 20 bits: a superblock holds at most 2^22 / 8 = 2^19 blocks.
 */
public final class Anchor {

    /** Every block is in a cache or in use; the superblock is on no partial stack. */
    public static final int FULL = 0;
    /** Some blocks are in the free list; the descriptor is (or is about to be) on a partial stack. */
    public static final int PARTIAL = 1;
    /** Every block is free; the superblock has been (or is being) returned to the page allocator. */
    public static final int EMPTY = 2;

    private static final long MASK20 = 0xF_FFFFL;
    private static final int GENERATION_SHIFT = 40;
    private static final long GENERATION_MASK = 0x3F_FFFFL << GENERATION_SHIFT;

    private Anchor() {
    }

    /** An anchor of generation 0. */
    public static long pack(final int state, final int avail, final int count) {
        return ((long) state << 62) | ((avail & MASK20) << 20) | (count & MASK20);
    }

    /** The anchor that follows {@code old} within its generation. */
    public static long update(final long old, final int state, final int avail, final int count) {
        return (old & GENERATION_MASK) | pack(state, avail, count);
    }

    /** The first anchor of a descriptor's next superblock, after its last anchor {@code old}: FULL, next generation. */
    public static long renew(final long old) {
        return (old + (1L << GENERATION_SHIFT)) & GENERATION_MASK;
    }

    public static int state(final long anchor) {
        return (int) (anchor >>> 62);
    }

    public static int generation(final long anchor) {
        return (int) ((anchor & GENERATION_MASK) >>> GENERATION_SHIFT);
    }

    public static int avail(final long anchor) {
        return (int) ((anchor >>> 20) & MASK20);
    }

    public static int count(final long anchor) {
        return (int) (anchor & MASK20);
    }
}
