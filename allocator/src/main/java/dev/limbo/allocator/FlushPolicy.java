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
     * mimalloc: each superblock a cache is allocating from is owned by that cache. A block freed
     * by another thread goes onto the superblock's lock-free remote-free list, and the owner
     * collects that list when its own list runs dry, so memory returns to the thread that used it
     * and no two threads share a recently used line.
     *
     * <p><b>Known race (open):</b> a thread that freed a block of a superblock while it was unowned
     * may later flush it to the anchor after another cache has taken ownership; that flush moves the
     * superblock FULL to PARTIAL and onto the partial stack, so a second cache can take ownership of
     * the same superblock. The remote list tolerates it (both owners see a consistent list), but the
     * invariant "an owned superblock never becomes EMPTY" then rests on both owners holding blocks.
     * The fix is to make ownership a bit of the anchor, set and cleared by the anchor CAS. Until it
     * lands this policy is not the default.
     */
    OWNER_RETURN
}
