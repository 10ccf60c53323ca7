package dev.limbo.structures;

import dev.limbo.core.Layouts;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * A node of {@link TreiberStack} and {@link MichaelScottQueue}.
 *
 * <pre>
 *  0 value(8)
 *  8 next(8)   region offset of the next node, 0 at the end
 * </pre>
 */
final class LinkedNodeLayout {

    static final StructLayout LAYOUT = MemoryLayout.structLayout(
            ValueLayout.JAVA_LONG.withName("value"),
            ValueLayout.JAVA_LONG.withName("next"));

    static final long SIZE = LAYOUT.byteSize();
    static final long VALUE = Layouts.offsetOf(LAYOUT, "value");
    static final long NEXT = Layouts.offsetOf(LAYOUT, "next");

    private LinkedNodeLayout() {
    }
}
