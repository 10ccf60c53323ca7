package dev.limbo.structures;

import dev.limbo.core.Layouts;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * A node of {@link HarrisMichaelList} (and of {@link MichaelHashMap}'s bucket lists).
 *
 * <pre>
 *  0 key(8)     immutable once the node is linked
 *  8 value(8)   the mapped value; {@link OffHeapStructure#RESERVED} once the node is removed
 * 16 next(8)    region offset of the next node, 0 at the end; bit 0 is the deletion mark
 * </pre>
 */
final class ListNodeLayout {

    static final StructLayout LAYOUT = MemoryLayout.structLayout(
            ValueLayout.JAVA_LONG.withName("key"),
            ValueLayout.JAVA_LONG.withName("value"),
            ValueLayout.JAVA_LONG.withName("next"));

    static final long SIZE = LAYOUT.byteSize();
    static final long KEY = Layouts.offsetOf(LAYOUT, "key");
    static final long VALUE = Layouts.offsetOf(LAYOUT, "value");
    static final long NEXT = Layouts.offsetOf(LAYOUT, "next");

    private ListNodeLayout() {
    }
}
