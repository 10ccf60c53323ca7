package dev.limbo.reclaim.internal;

import dev.limbo.core.Layouts;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * A block of record pointers (DEBRA §4.5): the unit that limbo bags, pools and the shared block
 * stack move around, so one link operation moves up to {@link #CAPACITY} records.
 *
 * <pre>
 *   0 next(8)    region offset of the next block in its bag or stack, 0 at the end
 *   8 count(8)   records held, 0..CAPACITY
 *  16 slots      CAPACITY record pointers; slots [0, count) are valid
 * </pre>
 */
public final class BlockLayout {

    /** Record pointers per block: DEBRA's B. */
    public static final int CAPACITY = 256;

    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            ValueLayout.JAVA_LONG.withName("next"),
            ValueLayout.JAVA_LONG.withName("count"),
            MemoryLayout.sequenceLayout(CAPACITY, ValueLayout.JAVA_LONG).withName("slots"));

    public static final long SIZE = LAYOUT.byteSize();
    public static final long NEXT = Layouts.offsetOf(LAYOUT, "next");
    public static final long COUNT = Layouts.offsetOf(LAYOUT, "count");
    public static final long SLOTS = Layouts.offsetOf(LAYOUT, "slots");

    private BlockLayout() {
    }

    /** The offset of slot {@code i} of {@code block}. */
    public static long slot(final long block, final int i) {
        return block + SLOTS + (long) i * Long.BYTES;
    }
}
