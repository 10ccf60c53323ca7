package dev.limbo.bench.alloc;

import dev.limbo.allocator.OffHeapAllocator;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Baseline: the naive FFM way, one {@link Arena#ofShared()} per allocation, closed by free. The
 * address-to-arena map is part of the price: FFM gives no way back from an address to its arena.
 */
public final class ArenaPerAllocation implements OffHeapAllocator {

    private final ConcurrentHashMap<Long, Arena> arenas = new ConcurrentHashMap<>();

    @Override
    public String name() {
        return "arena";
    }

    @Override
    public long allocate(final long bytes) {
        final Arena arena = Arena.ofShared();
        final long address = arena.allocate(bytes, 8).address();
        arenas.put(address, arena);
        return address;
    }

    @Override
    public void free(final long ptr) {
        final Arena arena = arenas.remove(ptr);
        if (arena == null) {
            throw new IllegalArgumentException("not allocated: 0x" + Long.toHexString(ptr));
        }
        arena.close();
    }

    @Override
    public MemorySegment memory() {
        return Allocators.EVERYTHING;
    }
}
