package dev.limbo.reclaim.internal;

import dev.limbo.allocator.LimboAllocator;

/**
 * A thread's cache of empty {@link BlockLayout blocks} (DEBRA §4.5's block pool): up to
 * {@link #CACHED} empty blocks are kept for the thread's bags, so blocks are rarely allocated
 * (DEBRA measured over 99.9 % fewer block allocations with 16). Thread-confined, like its bags.
 */
public final class BlockSource {

    /** Empty blocks kept per thread (DEBRA's 16). */
    public static final int CACHED = 16;

    private final LimboAllocator allocator;
    private final long[] cache = new long[CACHED];
    private int cached;

    public BlockSource(final LimboAllocator allocator) {
        this.allocator = allocator;
    }

    /** An empty block, from the cache or the allocator. */
    public long take() {
        return cached > 0 ? cache[--cached] : allocator.allocate(BlockLayout.SIZE);
    }

    /** Returns a block no bag uses any more. */
    public void recycle(final long block) {
        if (cached < CACHED) {
            cache[cached++] = block;
        } else {
            allocator.free(block);
        }
    }

    /** Frees the cached blocks (the owner left, or the domain closed). */
    public void close() {
        while (cached > 0) {
            allocator.free(cache[--cached]);
        }
    }
}
