package dev.limbo.allocator.internal;

import dev.limbo.core.OffHeapOutOfMemoryError;
import dev.limbo.core.Region;
import dev.limbo.core.internal.Native;
import dev.limbo.core.internal.NativeCallException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Locale;

/**
 * One state byte per small block, for checked and debug mode: {@link #FREE} (0, also the state of
 * never-used memory), {@link #ALLOCATED}, {@link #POISONED} (free, and filled with the debug poison).
 *
 * <p>The table holds {@code PAGE / 8} bytes per page (the most blocks a superblock can have), at
 * {@code page * (PAGE / 8) + blockIndex}, in its own {@code MAP_NORESERVE} mapping outside the
 * region: only the bytes of blocks that were ever used get backed.
 *
 * <pre>{@code
 * Implementation notes
 *
 * A free leaves ALLOCATED by a CAS (1) (markFreed), so that of two frees of one block at once
 * exactly one wins, and the other sees the state the winner wrote. Memory-segment var handles
 * cannot CAS a byte, so the CAS is on the aligned 8-byte word that holds the state byte (the
 * table is page-aligned and PER_PAGE is a multiple of 8, so a word holds the states of 8 blocks of
 * one superblock); widening the state to a word per block would reserve as much address space
 * as the region itself. The CAS loop retries only when another byte of the word changed (another
 * block's free), so it is lock-free.
 *
 * The other writes are plain byte stores (set): a new superblock's states (2), written before
 * its blocks escape, and the allocating thread's FREE -> ALLOCATED (3). (3) writes a block that
 * its cache holds: no other thread frees that block successfully (its state is not ALLOCATED, so
 * a stale free's CAS fails), and the CASes of the word's other bytes cannot lose (3): a CAS
 * compares the whole word, so one whose load preceded (3) fails and reloads, and one after (3)
 * carries (3)'s byte along. The byte store changes no other byte (no word tearing). The blocks
 * pass between threads through the allocator's own happens-before edges (anchor, remote-list and
 * partial-stack CASes), which order (2) and (3) before a later free's CAS (1) of the same block.
 * }</pre>
 */
public final class BlockStates {

    public static final byte FREE = 0;
    public static final byte ALLOCATED = 1;
    public static final byte POISONED = 2;

    private static final long PER_PAGE = PageMap.PAGE / 8;
    private static final MemorySegment STATES = map(PageMap.PAGES * PER_PAGE);

    private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle().withInvokeExactBehavior();
    /** XORed with a byte's bit offset in its word: 0 on little-endian hardware, 56 on big-endian. */
    private static final int BYTE_ORDER_FLIP = ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN ? 56 : 0;

    private BlockStates() {
    }

    public static byte get(final long page, final int block) {
        return STATES.get(ValueLayout.JAVA_BYTE, page * PER_PAGE + block);
    }

    /** Plain store of a block's state: (2) and (3) in the notes. */
    public static void set(final long page, final int block, final byte state) {
        STATES.set(ValueLayout.JAVA_BYTE, page * PER_PAGE + block, state);
    }

    /**
     * Moves a block from {@link #ALLOCATED} to {@code freed} if it is allocated; false (and no
     * change) if it is not. Of two calls on one allocated block at once, exactly one returns true.
     */
    public static boolean markFreed(final long page, final int block, final byte freed) {
        final long at = page * PER_PAGE + block;
        final long word = at & -Long.BYTES;
        final int shift = ((int) (at & (Long.BYTES - 1)) << 3) ^ BYTE_ORDER_FLIP;
        final long mask = 0xFFL << shift;
        final long allocated = (long) ALLOCATED << shift;
        final long to = (freed & 0xFFL) << shift;
        for (;;) {
            final long old = (long) WORD.get(STATES, word);
            if ((old & mask) != allocated) {
                return false;
            }
            // (1) CAS of the word that holds the state byte.
            if ((boolean) WORD.compareAndSet(STATES, word, old, old & ~mask | to)) {
                return true;
            }
        }
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
