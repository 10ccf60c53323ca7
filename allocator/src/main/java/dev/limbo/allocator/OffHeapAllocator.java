package dev.limbo.allocator;

import java.lang.foreign.MemorySegment;

/**
 * The allocator interface shared by Limbo's allocator and the benchmark baselines. A pointer is a
 * {@code long} offset into {@link #memory()}; 0 is never returned.
 */
public interface OffHeapAllocator {

    /** A short id used in benchmark parameters and reports ({@code limbo}, {@code malloc}, ...). */
    String name();

    /**
     * Allocates at least {@code bytes} bytes, 8-byte aligned.
     *
     * @throws IllegalArgumentException                   if {@code bytes} is not positive
     * @throws dev.limbo.core.OffHeapOutOfMemoryError if memory is exhausted
     */
    long allocate(long bytes);

    /** Frees a pointer returned by {@link #allocate} that has not been freed since. */
    void free(long ptr);

    /** The segment the pointers are offsets into. */
    MemorySegment memory();
}
