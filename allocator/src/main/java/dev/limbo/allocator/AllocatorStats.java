package dev.limbo.allocator;

/**
 * A snapshot of an allocator's state. Taken while threads allocate, it is approximate (each
 * counter is read atomically, but not all at the same instant); after quiescence it is exact.
 *
 * @param bytesInUse          bytes in live allocations, at their class size (large: page-rounded)
 * @param largeBytes          bytes in live large allocations (included in {@code bytesInUse})
 * @param cachedBytes         bytes of free blocks held in thread caches and quarantines
 * @param superblocksFull     superblocks whose blocks are all in use or in caches
 * @param superblocksPartial  superblocks with free blocks in their own free list
 * @param superblocksEmpty    superblocks that became fully free and were released, whose descriptors
 *                            still wait on a partial stack to be retired (lazily, by the next fill)
 * @param descriptors         descriptors carved so far (never freed)
 * @param pageBytesCommitted  bytes of pages committed by the shared page allocator (all allocators)
 * @param pageBytesRetained   of those, bytes in free runs kept committed (hysteresis)
 * @param regionBytesCommitted bytes committed in the whole region, metadata included
 * @param brokenLists         free lists (or parts of them) that a double free in unchecked mode had
 *                            broken, found when the allocator was about to follow them, and dropped
 *                            instead: their blocks are leaked. 0 unless the program freed a block twice
 * @param participantFallbacks calls to allocate or free by platform threads that held no
 *                            {@linkplain dev.limbo.core.Participants participant id} because every id
 *                            was held by a live thread, and that shared the striped caches instead
 *                            (as virtual threads do); 0 unless more platform threads than
 *                            {@code limbo.participants} use Limbo at once
 */
public record AllocatorStats(long bytesInUse, long largeBytes, long cachedBytes, long superblocksFull,
                             long superblocksPartial, long superblocksEmpty, long descriptors,
                             long pageBytesCommitted, long pageBytesRetained, long regionBytesCommitted,
                             long brokenLists, long participantFallbacks) {
}
