package dev.limbo.allocator;

/**
 * What a thread cache does with freed blocks: keep them in a capped cache that it flushes when
 * full (the first three, LRMalloc's design with the flush policies of LRMalloc, jemalloc/tcmalloc
 * and mimalloc's remote lists; kept for the batch-free study, which reproduces those allocators),
 * or give each to the local list of its owned superblock ({@link #OWNED}, the default).
 */
public enum FlushPolicy {
    /**
     * LRMalloc (thesis §5.3): a full cache returns every block to its superblock; a freed block
     * always goes to the freeing thread's cache. Remote frees are therefore reused by the freeing
     * thread, which causes passive false sharing.
     */
    FLUSH_ALL,
    /**
     * jemalloc and tcmalloc: a full cache returns its older half and keeps the recently freed,
     * cache-hot half.
     */
    PARTIAL_FLUSH,
    /**
     * mimalloc, and the default: each superblock a cache is allocating from is owned by that cache. A block freed
     * by another thread goes onto the superblock's lock-free remote-free list, and the owner
     * collects that list when its own list runs dry, so memory returns to the thread that used it
     * and no two threads share a recently used line.
     *
     * <p>Ownership is taken by a CAS of the remote head from ABANDONED to empty, so at most one
     * cache owns a superblock, even when an unowned block's late flush puts an owned superblock
     * back on the partial stack.
     */
    OWNER_RETURN,
    /**
     * mimalloc's free-list sharding, and the default: every superblock a cache allocated from stays
     * owned by it (its cache tag is in the page's owner word) until it is released or the cache is
     * drained. The owner's free of a block goes to the superblock's own local list (one owner-word
     * load tells it is local; no cap, no flush, no atomic); another thread's free goes to the
     * superblock's remote list. A refill swaps in a whole local list in O(1). See
     * {@code OwnedSuperblocks}.
     */
    OWNED
}
