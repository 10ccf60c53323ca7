package dev.limbo.structures;

import dev.limbo.core.Layouts;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * An info record of {@link EllenBst} (the paper's IInfo and DInfo), in the same domain as the
 * nodes. Which kind a record is follows from the state it is installed with (IFLAG: IInfo; DFLAG
 * and MARK: DInfo).
 *
 * <pre>
 *        IInfo                          DInfo
 *   0 refs(8)     holders: see EllenBst's notes; the record is retired when it drops to 0
 *   8 p | dir     parent, bit 0 set if l is its   gp | dir   grandparent, bit 0 set if p is its
 *                 right child                                right child
 *  16 l           the leaf to replace             p | dir    parent, bit 0 set if l is its right child
 *  24 newInternal the subtree that replaces l     pupdate    p's update word the deleter read (CLEAN)
 * </pre>
 *
 * <p>Every field but refs is immutable once the record is published. Records are at least 8-byte
 * aligned, so bit 0 of a node offset is free for the direction.
 */
public final class EllenInfoLayout {

    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            ValueLayout.JAVA_LONG.withName("refs"),
            ValueLayout.JAVA_LONG.withName("a"),
            ValueLayout.JAVA_LONG.withName("b"),
            ValueLayout.JAVA_LONG.withName("c"));

    /** Bytes per info record. */
    public static final long SIZE = LAYOUT.byteSize();
    public static final long REFS = Layouts.offsetOf(LAYOUT, "refs");
    /** IInfo: p | dir. DInfo: gp | dir. */
    public static final long A = Layouts.offsetOf(LAYOUT, "a");
    /** IInfo: l. DInfo: p | dir. */
    public static final long B = Layouts.offsetOf(LAYOUT, "b");
    /** IInfo: newInternal. DInfo: pupdate. */
    public static final long C = Layouts.offsetOf(LAYOUT, "c");

    private EllenInfoLayout() {
    }
}
