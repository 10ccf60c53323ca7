package dev.limbo.structures;

import dev.limbo.core.Layouts;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * A node of {@link EllenBst}: internal nodes and leaves share it.
 *
 * <pre>
 *   0 key(8)     routing key (internal) or the key (leaf); immutable once published
 *   8 value(8)   the value (leaf); 0 in an internal node; immutable once published
 *  16 left(8)    region offset of the left child; 0 in a leaf (that is what makes a leaf)
 *  24 right(8)   region offset of the right child; 0 in a leaf
 *  32 update(8)  internal nodes: info record offset | state (CLEAN 0, IFLAG 1, DFLAG 2, MARK 3) in
 *                the two low bits, the paper's update field in one word; 0 in a leaf
 * </pre>
 *
 * <p>Records are at least 8-byte aligned, so the low 3 bits of an info pointer are free
 * ({@link dev.limbo.reclaim.Guard#MARK_BITS}); the state uses two of them. Child links carry no
 * marks.
 */
public final class EllenNodeLayout {

    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            ValueLayout.JAVA_LONG.withName("key"),
            ValueLayout.JAVA_LONG.withName("value"),
            ValueLayout.JAVA_LONG.withName("left"),
            ValueLayout.JAVA_LONG.withName("right"),
            ValueLayout.JAVA_LONG.withName("update"));

    /** Bytes per node. */
    public static final long SIZE = LAYOUT.byteSize();
    public static final long KEY = Layouts.offsetOf(LAYOUT, "key");
    public static final long VALUE = Layouts.offsetOf(LAYOUT, "value");
    public static final long LEFT = Layouts.offsetOf(LAYOUT, "left");
    public static final long RIGHT = Layouts.offsetOf(LAYOUT, "right");
    public static final long UPDATE = Layouts.offsetOf(LAYOUT, "update");

    private EllenNodeLayout() {
    }
}
