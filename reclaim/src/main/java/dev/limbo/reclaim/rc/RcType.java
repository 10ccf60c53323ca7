package dev.limbo.reclaim.rc;

import java.util.Arrays;

/**
 * The type descriptor of a counted object (digest §7.1): its size and the offsets of its counted
 * fields, each an 8-byte-aligned word after the {@linkplain Cdrc#HEADER header}. When the object's
 * count reaches zero, {@link Cdrc} releases the reference in each counted field before it frees the
 * block.
 *
 * @param name a name for messages
 * @param bytes the block size, header included
 * @param countedFields the offsets of the counted fields from the block start
 */
public record RcType(String name, long bytes, long... countedFields) {

    /**
     * Checks the layout.
     *
     * @throws IllegalArgumentException if the block cannot hold the header, or a counted field is
     *         misaligned, inside the header, past the end or listed twice
     */
    public RcType {
        if (bytes < Cdrc.HEADER) {
            throw new IllegalArgumentException(name + ": " + bytes + " bytes cannot hold the " + Cdrc.HEADER + "-byte header");
        }
        countedFields = countedFields.clone();
        final long[] sorted = countedFields.clone();
        Arrays.sort(sorted);
        for (int i = 0; i < sorted.length; i++) {
            final long f = sorted[i];
            if (f < Cdrc.HEADER || f + Long.BYTES > bytes || (f & (Long.BYTES - 1)) != 0) {
                throw new IllegalArgumentException(name + ": counted field at " + f
                        + " is not an aligned word in [" + Cdrc.HEADER + ", " + bytes + ")");
            }
            if (i > 0 && sorted[i - 1] == f) {
                throw new IllegalArgumentException(name + ": counted field at " + f + " is listed twice");
            }
        }
    }

    /** The offsets of the counted fields (a copy). */
    @Override
    public long[] countedFields() {
        return countedFields.clone();
    }
}
