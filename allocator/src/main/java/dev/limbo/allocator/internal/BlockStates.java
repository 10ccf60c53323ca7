package dev.limbo.allocator.internal;

import dev.limbo.core.OffHeapOutOfMemoryError;
import dev.limbo.core.Region;
import dev.limbo.core.internal.Native;
import dev.limbo.core.internal.NativeCallException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Locale;

/**
 * One state byte per small block, for checked and debug mode: {@link #FREE} (0, also the state of
 * never-used memory), {@link #ALLOCATED}, {@link #POISONED} (free, and filled with the debug poison).
 *
 * <p>The table holds {@code PAGE / 8} bytes per page (the most blocks a superblock can have), at
 * {@code page * (PAGE / 8) + blockIndex}, in its own {@code MAP_NORESERVE} mapping outside the
 * region: only the bytes of blocks that were ever used get backed. Each byte is written only by
 * the thread that owns its block at that moment (the allocating or the freeing thread), so plain
 * byte accesses suffice; a racy double free from two threads at once may go undetected, a
 * sequential one never does.
 */
public final class BlockStates {

    public static final byte FREE = 0;
    public static final byte ALLOCATED = 1;
    public static final byte POISONED = 2;

    private static final long PER_PAGE = PageMap.PAGE / 8;
    private static final MemorySegment STATES = map(PageMap.PAGES * PER_PAGE);

    private BlockStates() {
    }

    public static byte get(final long page, final int block) {
        return STATES.get(ValueLayout.JAVA_BYTE, page * PER_PAGE + block);
    }

    public static void set(final long page, final int block, final byte state) {
        STATES.set(ValueLayout.JAVA_BYTE, page * PER_PAGE + block, state);
    }

    private static MemorySegment map(final long bytes) {
        if (Native.AVAILABLE) {
            final long address;
            try {
                address = Native.mmapAnonymous(bytes, Native.PROT_READ | Native.PROT_WRITE,
                        Native.MAP_PRIVATE | Native.MAP_NORESERVE);
            } catch (final NativeCallException e) {
                throw new OffHeapOutOfMemoryError(String.format(Locale.ROOT,
                        "cannot reserve %d MiB of address space for checked mode's block states (one byte per 8 "
                                + "bytes of the off-heap region): %s. Lower -D%s, or raise the address-space limit "
                                + "(ulimit -v) or allow overcommit (sysctl vm.overcommit_memory=0)",
                        bytes >> 20, e.getMessage(), Region.SIZE_PROPERTY));
            }
            return MemorySegment.ofAddress(address).reinterpret(bytes);
        }
        return Arena.global().allocate(Math.max(1, bytes), Region.global().pageSize());
    }
}
