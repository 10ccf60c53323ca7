package dev.limbo.structures;

import dev.limbo.core.Layouts;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * A node of {@link NatarajanMittalTree}: internal nodes and leaves share it.
 *
 * <pre>
 *   0 key(8)     routing key (internal) or the key (leaf); immutable once published
 *   8 value(8)   the value (leaf); unused by internal nodes; immutable once published
 *  16 left(8)    child edge: region offset of the left child | FLAG(1) | TAG(2); 0 in a leaf
 *  24 right(8)   child edge: region offset of the right child | FLAG(1) | TAG(2); 0 in a leaf
 * </pre>
 *
 * <p>Records are at least 8-byte aligned, so the low 3 bits of a child edge are free for marks
 * ({@link dev.limbo.reclaim.Guard#MARK_BITS}); the tree uses two of them.
 */
public final class TreeNodeLayout {

    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            ValueLayout.JAVA_LONG.withName("key"),
            ValueLayout.JAVA_LONG.withName("value"),
            ValueLayout.JAVA_LONG.withName("left"),
            ValueLayout.JAVA_LONG.withName("right"));

    /** Bytes per node: the domain's {@code recordBytes} must be at least this. */
    public static final long SIZE = LAYOUT.byteSize();
    public static final long KEY = Layouts.offsetOf(LAYOUT, "key");
    public static final long VALUE = Layouts.offsetOf(LAYOUT, "value");
    public static final long LEFT = Layouts.offsetOf(LAYOUT, "left");
    public static final long RIGHT = Layouts.offsetOf(LAYOUT, "right");

    private TreeNodeLayout() {
    }
}
