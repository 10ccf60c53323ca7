package dev.limbo.index;

/**
 * A snapshot of an index's size and memory, from {@link LongLongMap#stats()}.
 *
 * @param size the number of entries ({@link LongLongMap#size()}: approximate while updates run)
 * @param offHeapBytes off-heap bytes the index's live nodes occupy, allocator rounding included
 * @param unreclaimedBytes off-heap bytes of nodes removed from the index and not yet freed by its
 *     reclamation scheme
 * @param scheme the id of the reclamation scheme ({@code dev.limbo.reclaim.Scheme#id()})
 */
public record IndexStats(long size, long offHeapBytes, long unreclaimedBytes, String scheme) {

    /**
     * Off-heap bytes per entry.
     *
     * @return {@code offHeapBytes / size}, or 0 when the index is empty
     */
    public double bytesPerEntry() {
        return size == 0 ? 0 : (double) offHeapBytes / size;
    }
}
