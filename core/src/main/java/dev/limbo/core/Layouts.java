package dev.limbo.core;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

/**
 * Helpers shared by every {@code …Layout} class: cache-line constants, padding and field offsets
 * derived from a {@link MemoryLayout} (offsets are never written by hand).
 */
public final class Layouts {

    /** The cache-line size of the machines we target (x86-64, AArch64 Neoverse). */
    public static final long CACHE_LINE = 64;

    /**
     * The false-sharing range: two cache lines, because Intel's adjacent-line prefetcher pulls
     * lines in pairs. Per-thread slots and contended words are padded to this.
     */
    public static final long PADDED = 128;

    private Layouts() {
    }

    /** The byte offset of the named member of {@code layout}. */
    public static long offsetOf(final MemoryLayout layout, final String field) {
        return layout.byteOffset(MemoryLayout.PathElement.groupElement(field));
    }

    /**
     * A struct of {@code fields} followed by padding up to the next multiple of {@code multiple}
     * bytes, aligned to {@code multiple}'s natural alignment of its members.
     *
     * @throws IllegalArgumentException if {@code multiple} is not a positive power of two
     */
    public static StructLayout padded(final String name, final long multiple, final MemoryLayout... fields) {
        if (multiple <= 0 || Long.bitCount(multiple) != 1) {
            throw new IllegalArgumentException("padding multiple must be a power of two, was " + multiple);
        }
        final StructLayout bare = MemoryLayout.structLayout(fields);
        final long pad = -bare.byteSize() & (multiple - 1);
        final MemoryLayout[] all = java.util.Arrays.copyOf(fields, fields.length + (pad == 0 ? 0 : 1));
        if (pad != 0) {
            all[fields.length] = MemoryLayout.paddingLayout(pad);
        }
        return MemoryLayout.structLayout(all).withName(name);
    }
}
