package dev.limbo.structures;

import dev.limbo.core.Layouts;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * An SCX record of {@link BrownAbTree} (Brown, Ellen and Ruppert, PODC 2013: the SCX-record of
 * LLX/SCX), in the same domain as the nodes.
 *
 * <pre>
 *   0 refs(8)       holders (see BrownAbTree's notes); the record is retired when they drop to 0
 *   8 state(8)      IN_PROGRESS 0, COMMITTED 1, ABORTED 2
 *  16 allFrozen(8)  0, then 1 once every node of V is frozen
 *  24 shape(8)      |V| (bits 0..7) | the mask of R within V (bits 8..15)
 *  32 fld(8)        region offset of the child link the SCX changes (in V[0])
 *  40 old(8)        the link's expected value
 *  48 new(8)        the link's new value
 *  56 nodes(32)     V, at most 4 nodes, in tree order (top down, left to right)
 *  88 words(32)     the word each node's LLX returned: the freeze CAS's expected value
 * </pre>
 *
 * <p>Every field but refs, state and allFrozen is immutable once the record is published (by
 * the first freeze CAS).
 */
public final class ScxRecordLayout {

    /** The most nodes one SCX freezes. */
    public static final int MAX_NODES = 4;

    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            ValueLayout.JAVA_LONG.withName("refs"),
            ValueLayout.JAVA_LONG.withName("state"),
            ValueLayout.JAVA_LONG.withName("allFrozen"),
            ValueLayout.JAVA_LONG.withName("shape"),
            ValueLayout.JAVA_LONG.withName("fld"),
            ValueLayout.JAVA_LONG.withName("old"),
            ValueLayout.JAVA_LONG.withName("new"),
            MemoryLayout.sequenceLayout(MAX_NODES, ValueLayout.JAVA_LONG).withName("nodes"),
            MemoryLayout.sequenceLayout(MAX_NODES, ValueLayout.JAVA_LONG).withName("words"));

    /** Bytes per SCX record. */
    public static final long SIZE = LAYOUT.byteSize();
    public static final long REFS = Layouts.offsetOf(LAYOUT, "refs");
    public static final long STATE = Layouts.offsetOf(LAYOUT, "state");
    public static final long ALL_FROZEN = Layouts.offsetOf(LAYOUT, "allFrozen");
    public static final long SHAPE = Layouts.offsetOf(LAYOUT, "shape");
    public static final long FLD = Layouts.offsetOf(LAYOUT, "fld");
    public static final long OLD = Layouts.offsetOf(LAYOUT, "old");
    public static final long NEW = Layouts.offsetOf(LAYOUT, "new");
    public static final long NODES = Layouts.offsetOf(LAYOUT, "nodes");
    public static final long WORDS = Layouts.offsetOf(LAYOUT, "words");

    private ScxRecordLayout() {
    }
}
