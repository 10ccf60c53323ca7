package dev.limbo.reclaim.rc;

import java.util.Arrays;

/**
 * The type descriptor of a counted object (digest §7.1): its size and the offsets of its counted
 * fields, each an 8-byte-aligned word after the {@linkplain Cdrc#HEADER header}. A strong field
 * holds a counted reference; a weak field holds a {@linkplain Cdrc#loadWeak weak} one, which keeps
 * the block but not the object alive (digest §4.6). When the object's strong count reaches zero,
 * {@link Cdrc} releases the reference in each of its fields.
 *
 * @param name a name for messages
 * @param bytes the block size, header included
 * @param countedFields the offsets of the strong counted fields from the block start
 * @param weakFields the offsets of the weak counted fields from the block start
 */
public record RcType(String name, long bytes, long[] countedFields, long[] weakFields) {

    /**
     * Checks the layout.
     *
     * @throws IllegalArgumentException if the block cannot hold the header, or a field is
     *         misaligned, inside the header, past the end or listed twice
     */
    public RcType {
        if (bytes < Cdrc.HEADER) {
            throw new IllegalArgumentException(name + ": " + bytes + " bytes cannot hold the " + Cdrc.HEADER + "-byte header");
        }
        countedFields = countedFields.clone();
        weakFields = weakFields.clone();
        final long[] sorted = Arrays.copyOf(countedFields, countedFields.length + weakFields.length);
        System.arraycopy(weakFields, 0, sorted, countedFields.length, weakFields.length);
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

    /** A type with strong counted fields only. */
    public RcType(final String name, final long bytes, final long... countedFields) {
        this(name, bytes, countedFields, new long[0]);
    }

    /** The offsets of the strong counted fields (a copy). */
    @Override
    public long[] countedFields() {
        return countedFields.clone();
    }

    /** The offsets of the weak counted fields (a copy). */
    @Override
    public long[] weakFields() {
        return weakFields.clone();
    }

    @Override
    public boolean equals(final Object o) {
        return o instanceof RcType t && name.equals(t.name) && bytes == t.bytes
                && Arrays.equals(countedFields, t.countedFields) && Arrays.equals(weakFields, t.weakFields);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * name.hashCode() + Long.hashCode(bytes)) + 7 * Arrays.hashCode(countedFields) + Arrays.hashCode(weakFields);
    }

    @Override
    public String toString() {
        return "RcType[" + name + ", " + bytes + " B, strong " + Arrays.toString(countedFields)
                + ", weak " + Arrays.toString(weakFields) + "]";
    }
}
