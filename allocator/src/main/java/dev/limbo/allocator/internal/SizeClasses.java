package dev.limbo.allocator.internal;

/**
 * jemalloc's size-class series as LRMalloc uses it (thesis §5.2, Table 5.1): four classes per power
 * of two, {@code 2^X, 2^X + 2^(X-2), 2^X + 2^(X-1), 2^X + 2^(X-1) + 2^(X-2)}, keeping only
 * multiples of 8, from 8 B to 16 KiB: 40 classes, numbered 1..40 (0 means "large").
 *
 * <p>Waste: a request of {@code n} bytes gets the smallest class {@code c >= n}; from 32 B up,
 * {@code (c - n) / c < 25 %}. Below 32 B the 8-byte granularity dominates (a 9-byte request takes
 * 16 B). Every class is a multiple of 8, so blocks in a page-aligned superblock are 8-aligned.
 */
public final class SizeClasses {

    /** The number of small classes; valid class indices are 1..COUNT. */
    public static final int COUNT = 40;
    /** The largest small size; larger requests are page runs. */
    public static final int MAX_SMALL = 16384;

    /**
     * Indexed by class; 256 entries (0 beyond COUNT) so that a class decoded from a byte, as the
     * fast paths do, needs no range check.
     */
    private static final int[] SIZE = new int[256];
    /**
     * The class of each 8-byte granule {@code (bytes - 1) >>> 3}: 2048 entries, a power of two, so
     * that the masked index in {@link #classOf} needs no range check.
     */
    private static final byte[] LOOKUP = new byte[MAX_SMALL / 8];
    /** {@code ceil(2^32 / size)}: exact division of block offsets below 2^16 by multiply-shift. */
    private static final long[] RECIPROCAL = new long[COUNT + 1];

    static {
        int n = 0;
        for (int x = 3; n < COUNT; x++) {
            final int[] candidates = {1 << x, (1 << x) + (1 << (x - 2)), (1 << x) + (1 << (x - 1)),
                    (1 << x) + (1 << (x - 1)) + (1 << (x - 2))};
            for (final int size : candidates) {
                if (size % 8 == 0 && size > (n == 0 ? 0 : SIZE[n]) && n < COUNT) {
                    SIZE[++n] = size;
                }
            }
        }
        int c = 1;
        for (int granule = 0; granule < LOOKUP.length; granule++) {
            while (SIZE[c] < granule * 8 + 8) {
                c++;
            }
            LOOKUP[granule] = (byte) c;
        }
        for (int i = 1; i <= COUNT; i++) {
            RECIPROCAL[i] = ((1L << 32) + SIZE[i] - 1) / SIZE[i];
        }
    }

    private SizeClasses() {
    }

    /** The class for a request of {@code bytes}, which must be 1..{@link #MAX_SMALL} (callers check). */
    public static int classOf(final long bytes) {
        return LOOKUP[(int) ((bytes - 1) >>> 3) & (LOOKUP.length - 1)] & 0xFF;
    }

    /** The block size of class {@code sizeClass}. */
    public static int size(final int sizeClass) {
        return SIZE[sizeClass];
    }

    /** {@code offset / size(sizeClass)} for an offset below 2^16 that is a multiple of the size. */
    public static int divide(final long offset, final int sizeClass) {
        return (int) ((offset * RECIPROCAL[sizeClass]) >>> 32);
    }
}
