package dev.limbo.reclaim.internal;

import dev.limbo.allocator.LimboAllocator;

/**
 * A thread's cache of empty {@link BlockLayout blocks} (DEBRA §4.5's block pool): up to
 * {@link #CACHED} empty blocks are kept for the thread's bags, so blocks are rarely allocated
 * (DEBRA measured over 99.9 % fewer block allocations with 16). Thread-confined, like its bags.
 *
 * <p>Blocks leave with {@link LimboAllocator#freeBatch}, which needs no thread cache: a departed
 * thread's source is recycled and closed in a participant release hook, on whichever thread
 * releases the id (the JDK's Cleaner thread, or a thread in the middle of claiming an id). A
 * thread-cached free there would claim an id and an allocator cache for that thread (the
 * Cleaner's cache is never drained, and a claiming thread re-enters its own claim).
 */
public final class BlockSource {

    /** Empty blocks kept per thread (DEBRA's 16). */
    public static final int CACHED = 16;

    private final LimboAllocator allocator;
    private final long[] cache = new long[CACHED];
    private final long[] one = new long[1];
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
            one[0] = block;
            allocator.freeBatch(one, 1);
        }
    }

    /** Frees the cached blocks (the owner left, or the domain closed). */
    public void close() {
        if (cached > 0) {
            allocator.freeBatch(cache, cached);
            cached = 0;
        }
    }
}
