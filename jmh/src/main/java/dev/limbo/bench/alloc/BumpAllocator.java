package dev.limbo.bench.alloc;

import dev.limbo.allocator.OffHeapAllocator;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Baseline and upper bound: per-thread bump allocation in a 64 MiB slab, with a free that does
 * nothing. When a slab is used up the thread starts over at its beginning, so memory stays bounded
 * during long benchmarks (old blocks are overwritten: benchmarking only).
 */
public final class BumpAllocator implements OffHeapAllocator {

    private static final long SLAB = 64L << 20;

    private final ThreadLocal<long[]> slabs = ThreadLocal.withInitial(() -> {
        final long base = Arena.global().allocate(SLAB, 4096).address();
        return new long[] {base, base, base + SLAB};
    });

    @Override
    public String name() {
        return "bump";
    }

    @Override
    public long allocate(final long bytes) {
        final long[] slab = slabs.get();
        final long size = (bytes + 7) & -8L;
        if (size > SLAB) {
            throw new IllegalArgumentException("bump allocations are limited to " + SLAB + " bytes");
        }
        long ptr = slab[1];
        if (ptr + size > slab[2]) {
            ptr = slab[0];
        }
        slab[1] = ptr + size;
        return ptr;
    }

    @Override
    public void free(final long ptr) {
        // never frees
    }

    @Override
    public MemorySegment memory() {
        return Allocators.EVERYTHING;
    }
}
