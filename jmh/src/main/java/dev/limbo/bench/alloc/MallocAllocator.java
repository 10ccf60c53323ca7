package dev.limbo.bench.alloc;

import dev.limbo.allocator.OffHeapAllocator;
import dev.limbo.core.OffHeapOutOfMemoryError;
import dev.limbo.core.internal.Native;

import java.lang.foreign.MemorySegment;

/** Baseline: glibc {@code malloc}/{@code free} through critical downcalls; pointers are addresses. */
public final class MallocAllocator implements OffHeapAllocator {

    @Override
    public String name() {
        return "malloc";
    }

    @Override
    public long allocate(final long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("allocation size must be positive, was " + bytes);
        }
        final long address = Native.malloc(bytes);
        if (address == 0) {
            throw new OffHeapOutOfMemoryError("malloc(" + bytes + ") returned NULL");
        }
        return address;
    }

    @Override
    public void free(final long ptr) {
        Native.free(ptr);
    }

    @Override
    public MemorySegment memory() {
        return Allocators.EVERYTHING;
    }
}
