package dev.limbo.allocator.internal;

import dev.limbo.core.Layouts;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * A superblock descriptor (LRMalloc thesis §5.4.1), two 64-byte cache lines in a never-freed,
 * index-addressed table, so stale reads of its links are always in bounds (type-stable memory).
 * The first line holds the shared fields; the second the fields that only the thread cache owning
 * the superblock ({@code FlushPolicy.OWNED}) reads and writes, so that its frees never contend
 * with other threads' remote frees and anchor CASes on one line.
 *
 * <pre>
 *  0 anchor(8)       state:2 | avail:31 | count:31, CAS-updated      (see {@link Anchor})
 *  8 nextPartial(8)  index of the next descriptor on a partial stack
 * 16 nextFree(8)     index of the next descriptor on the recycle stack
 * 24 superblock(8)   region offset of the superblock
 * 32 remoteHead(8)   owner-return policy: head of the remote-free list, or ABANDONED (1)
 * 40 maxCount(8)     blocks in the superblock
 * 48 sizeClass(8)    0 while the descriptor is retired (unused)
 * 56 pad(8)
 * 64 localHead(8)    OWNED: the owner's local free list of a superblock that is not its current one
 * 72 localCount(8)   OWNED: blocks on that list
 * 80 ownedPrev(8)    OWNED: the owner's circular list (ready or full) this superblock is on: previous
 * 88 ownedNext(8)    ... and next descriptor index
 * 96 pad(32)
 * </pre>
 * Alignment 64 leaves 6 low bits of a descriptor offset free, but links hold indices, not offsets.
 */
public final class DescriptorLayout {

    public static final StructLayout LAYOUT = Layouts.padded("Descriptor", Layouts.CACHE_LINE,
            ValueLayout.JAVA_LONG.withName("anchor"),
            ValueLayout.JAVA_LONG.withName("nextPartial"),
            ValueLayout.JAVA_LONG.withName("nextFree"),
            ValueLayout.JAVA_LONG.withName("superblock"),
            ValueLayout.JAVA_LONG.withName("remoteHead"),
            ValueLayout.JAVA_LONG.withName("maxCount"),
            ValueLayout.JAVA_LONG.withName("sizeClass"),
            MemoryLayout.paddingLayout(Long.BYTES),
            ValueLayout.JAVA_LONG.withName("localHead"),
            ValueLayout.JAVA_LONG.withName("localCount"),
            ValueLayout.JAVA_LONG.withName("ownedPrev"),
            ValueLayout.JAVA_LONG.withName("ownedNext"));

    public static final long SIZE = LAYOUT.byteSize();
    public static final long ANCHOR = Layouts.offsetOf(LAYOUT, "anchor");
    public static final long NEXT_PARTIAL = Layouts.offsetOf(LAYOUT, "nextPartial");
    public static final long NEXT_FREE = Layouts.offsetOf(LAYOUT, "nextFree");
    public static final long SUPERBLOCK = Layouts.offsetOf(LAYOUT, "superblock");
    public static final long REMOTE_HEAD = Layouts.offsetOf(LAYOUT, "remoteHead");
    public static final long MAX_COUNT = Layouts.offsetOf(LAYOUT, "maxCount");
    public static final long SIZE_CLASS = Layouts.offsetOf(LAYOUT, "sizeClass");
    public static final long LOCAL_HEAD = Layouts.offsetOf(LAYOUT, "localHead");
    public static final long LOCAL_COUNT = Layouts.offsetOf(LAYOUT, "localCount");
    public static final long OWNED_PREV = Layouts.offsetOf(LAYOUT, "ownedPrev");
    public static final long OWNED_NEXT = Layouts.offsetOf(LAYOUT, "ownedNext");

    private DescriptorLayout() {
    }
}
