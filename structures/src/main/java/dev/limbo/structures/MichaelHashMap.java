package dev.limbo.structures;

import dev.limbo.reclaim.Guard;
import dev.limbo.reclaim.ReclaimDomain;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A lock-free hash map from {@code long} keys to {@code long} values with nodes in off-heap
 * memory: a fixed array of buckets, each a {@link HarrisMichaelList}.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm and source: Michael, "High performance dynamic lock-free hash tables and list-based
 * sets", SPAA 2002, §4 (the hash table: an array of M lock-free ordered lists, no resizing). Every
 * operation hashes the key to one bucket and runs HarrisMichaelList's algorithm on that bucket's
 * head word (the same static code, not a copy: see HarrisMichaelList's notes for Find, the value
 * tombstone, memory ordering (1)-(9) and reclamation).
 *
 * Layout: M = buckets (a power of two) head words of 8 bytes, contiguous in one zeroed off-heap
 * array allocated from the domain's allocator; bucket(key) = fmix64(key) & (M - 1), fmix64 being
 * MurmurHash3's 64-bit finalizer (full avalanche, so sequential keys spread over all buckets).
 * Adjacent buckets share cache lines, as in the paper; with many buckets, contention on one line
 * is that of the few keys it covers.
 *
 * Invariants: each bucket list satisfies HarrisMichaelList's invariants; a node with key k is only
 * ever linked in bucket(k) (the hash is a pure function and the array never changes).
 *
 * Linearization points: those of the bucket list's operation (insert and replace: the link CAS
 * (4) / value CAS (8); remove: the marking CAS (5); get / contains: the last Find step's read of
 * cur.next, or of the predecessor link when absent). Operations on different buckets touch
 * disjoint words, so the map is linearizable because each list is (locality of linearizability,
 * Herlihy & Wing 1990). size: a traversal of every bucket, not linearizable; exact when
 * quiescent.
 *
 * Progress: lock-free (each bucket is).
 *
 * Memory ordering: the bucket array is written only by its zeroing allocation (before the
 * constructor returns; the structure must be published safely to other threads, like any object)
 * and by the lists' CASes; (1)-(9) as in HarrisMichaelList.
 *
 * Reclamation and ABA: as in HarrisMichaelList: a node is retired once, by its unlinker; every
 * CAS expects a protected node or a head word, which is never freed before close(), and close()
 * frees only after every operation has ended (OffHeapStructure's in-flight count).
 *
 * Neutralization and links through the guard: HarrisMichaelList's, per bucket.
 * }</pre>
 */
public final class MichaelHashMap extends OffHeapStructure {

    private final long buckets;
    private final int mask;

    /**
     * A map of {@code buckets} lists over {@code domain}, which needs records of at least 24 bytes
     * and at least 3 protection slots.
     *
     * @throws IllegalArgumentException if {@code buckets} is not a positive power of two, or the
     *                                  domain's records or slots are too few
     */
    public MichaelHashMap(final ReclaimDomain domain, final int buckets) {
        super(domain, HarrisMichaelList.SLOTS, ListNodeLayout.SIZE);
        domain.declareLinks(ListNodeLayout.NEXT);
        if (buckets <= 0 || Integer.bitCount(buckets) != 1) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "the number of buckets must be a positive power of two, was %d", buckets));
        }
        this.mask = buckets - 1;
        this.buckets = domain.allocator().allocateZeroed((long) buckets * Long.BYTES);
    }

    /** The number of buckets. */
    public int buckets() {
        return mask + 1;
    }

    /** MurmurHash3's fmix64 finalizer. */
    static long mix(long k) {
        k ^= k >>> 33;
        k *= 0xff51afd7ed558ccdL;
        k ^= k >>> 33;
        k *= 0xc4ceb9fe1a85ec53L;
        k ^= k >>> 33;
        return k;
    }

    /** The head word of {@code key}'s bucket. */
    private long bucket(final long key) {
        return buckets + ((mix(key) & mask) << 3);
    }

    /**
     * Maps {@code key} to {@code value} if it is absent; returns the value already mapped, or
     * {@link #RESERVED} if this call inserted it.
     */
    public long putIfAbsent(final long key, final long value) {
        checkKey(key);
        checkValue(value);
        final int op = enter();
        try (Guard g = domain.pin()) {
            return HarrisMichaelList.put(g, domain, bucket(key), key, value, false);
        } finally {
            exit(op);
        }
    }

    /**
     * Maps {@code key} to {@code value}, replacing the value of a present key in place; returns the
     * previous value, or {@link #RESERVED} if the key was absent.
     */
    public long put(final long key, final long value) {
        checkKey(key);
        checkValue(value);
        final int op = enter();
        try (Guard g = domain.pin()) {
            return HarrisMichaelList.put(g, domain, bucket(key), key, value, true);
        } finally {
            exit(op);
        }
    }

    /** The value mapped to {@code key}, or {@link #RESERVED} if absent. */
    public long get(final long key) {
        checkKey(key);
        final int op = enter();
        try (Guard g = domain.pin()) {
            return HarrisMichaelList.get(g, bucket(key), key);
        } finally {
            exit(op);
        }
    }

    /** Whether {@code key} is present. */
    public boolean contains(final long key) {
        checkKey(key);
        final int op = enter();
        try (Guard g = domain.pin()) {
            return HarrisMichaelList.contains(g, bucket(key), key);
        } finally {
            exit(op);
        }
    }

    /** Removes {@code key}; returns the value it had, or {@link #RESERVED} if it was absent. */
    public long remove(final long key) {
        checkKey(key);
        final int op = enter();
        try (Guard g = domain.pin()) {
            return HarrisMichaelList.remove(g, bucket(key), key);
        } finally {
            exit(op);
        }
    }

    /**
     * The number of keys, counted by a traversal of every bucket: approximate while other threads
     * update the map (neither a snapshot nor linearizable), exact when it is quiescent.
     * O(buckets + n).
     */
    public long size() {
        long n = 0;
        final int op = enter();
        try (Guard g = domain.pin()) {
            for (int b = 0; b <= mask; b++) {
                n += HarrisMichaelList.count(g, buckets + ((long) b << 3));
            }
        } finally {
            exit(op);
        }
        return n;
    }

    @Override
    void freeNodes() {
        for (int b = 0; b <= mask; b++) {
            HarrisMichaelList.freeAll(this, buckets + ((long) b << 3));
        }
        domain.allocator().free(buckets);
    }

    /** Quiescent inspection for tests: per bucket, every linked node as {key, value, next word, address}. */
    List<List<long[]>> bucketsQuiescent() {
        final List<List<long[]>> all = new ArrayList<>();
        for (int b = 0; b <= mask; b++) {
            all.add(HarrisMichaelList.nodesQuiescent(buckets + ((long) b << 3)));
        }
        return all;
    }

    /** The bucket index of {@code key} (tests). */
    int bucketOf(final long key) {
        return (int) (mix(key) & mask);
    }
}
