package dev.limbo.core;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * The header that occupies the first page of every {@link Region}. Offset 0 is the null pointer,
 * so this page is never handed out; it holds the region's own bookkeeping instead.
 *
 * <pre>
 *  offset  field
 *       0  magic(8) | size(8) | pageSize(8) | pad ........................ | 128
 *     128  brk(8)    bump pointer of claimed space, CAS-advanced     pad  | 256
 *     256  committed(8) bytes accounted as committed, get-and-add    pad  | 384
 * </pre>
 *
 * <p>{@code brk} and {@code committed} are written by any thread that claims or commits, so each
 * sits alone in its own {@link Layouts#PADDED 128-byte} slot. The read-mostly fields share the
 * first slot.
 */
public final class RegionHeaderLayout {

    /** The value of {@code magic}: "LIMBORGN" in ASCII. */
    public static final long MAGIC = 0x4c494d424f52474eL;

    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            Layouts.padded("identity", Layouts.PADDED,
                    ValueLayout.JAVA_LONG.withName("magic"),
                    ValueLayout.JAVA_LONG.withName("size"),
                    ValueLayout.JAVA_LONG.withName("pageSize")).withName("identity"),
            Layouts.padded("brkSlot", Layouts.PADDED, ValueLayout.JAVA_LONG.withName("brk")).withName("brkSlot"),
            Layouts.padded("committedSlot", Layouts.PADDED,
                    ValueLayout.JAVA_LONG.withName("committed")).withName("committedSlot")
    ).withName("RegionHeader");

    public static final long MAGIC_OFFSET = nested("identity", "magic");
    public static final long SIZE_OFFSET = nested("identity", "size");
    public static final long PAGE_SIZE_OFFSET = nested("identity", "pageSize");
    public static final long BRK_OFFSET = nested("brkSlot", "brk");
    public static final long COMMITTED_OFFSET = nested("committedSlot", "committed");

    private RegionHeaderLayout() {
    }

    private static long nested(final String slot, final String field) {
        return LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement(slot),
                MemoryLayout.PathElement.groupElement(field));
    }
}
