package dev.limbo.structures;

import dev.limbo.core.Layouts;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * A node of {@link BrownAbTree} of degree {@code b}: leaves and internal nodes share it.
 *
 * <pre>
 *   0        word(8)     SCX record offset | MARK (bit 0): LLX/SCX's info field and marked bit in
 *                        one CAS-able word; 0 in a node no SCX has frozen yet
 *   8        meta(8)     size (bits 0..15: keys of a leaf, children of an internal node) | LEAF
 *                        (bit 16) | TAGGED (bit 17); immutable once published
 *  16        keys(8b)    leaf: its keys ascending, [0, size); internal: routing keys, [0, size - 1)
 *  16 + 8b   values(8b)  leaf: the values; internal: region offsets of the children, [0, size);
 *                        children change only by an SCX's CAS, values never
 * </pre>
 *
 * <p>Records are at least 8-byte aligned, so bit 0 of an SCX record offset is free for the mark.
 */
public final class AbTreeNodeLayout {

    public static final long WORD = 0;
    public static final long META = 8;
    public static final long KEYS = 16;

    private AbTreeNodeLayout() {
    }

    /** The layout of a node of degree {@code degree}. */
    public static StructLayout layout(final int degree) {
        return MemoryLayout.structLayout(
                ValueLayout.JAVA_LONG.withName("word"),
                ValueLayout.JAVA_LONG.withName("meta"),
                MemoryLayout.sequenceLayout(degree, ValueLayout.JAVA_LONG).withName("keys"),
                MemoryLayout.sequenceLayout(degree, ValueLayout.JAVA_LONG).withName("values"));
    }

    /** Offset of the values (children) array of a node of degree {@code degree}. */
    public static long values(final int degree) {
        return Layouts.offsetOf(layout(degree), "values");
    }

    /** Bytes per node of degree {@code degree}. */
    public static long bytes(final int degree) {
        return layout(degree).byteSize();
    }
}
