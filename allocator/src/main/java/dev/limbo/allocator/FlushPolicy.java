package dev.limbo.allocator;

/**
 * What a thread cache does when it is full, and where a block freed by another thread goes.
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
    OWNER_RETURN
}
