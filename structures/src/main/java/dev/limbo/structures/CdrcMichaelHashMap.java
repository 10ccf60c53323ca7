package dev.limbo.structures;

import dev.limbo.reclaim.rc.Cdrc;
import dev.limbo.reclaim.rc.RcType;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * A lock-free hash map from {@code long} keys to {@code long} values whose off-heap nodes are
 * reclaimed by concurrent deferred reference counting ({@link Cdrc}): a fixed array of buckets,
 * each a {@link CdrcHarrisMichaelList}, as {@link MichaelHashMap} is over {@link HarrisMichaelList}.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm and source: Michael, SPAA 2002, §4 (an array of M lock-free ordered lists, no
 * resizing), with counted pointers as in the CDRC paper's evaluation (PLDI 2021, §7.2, Figure 7b;
 * digest §6.3). Every operation hashes the key to one bucket and runs CdrcHarrisMichaelList's
 * algorithm (the same code, CdrcHarrisMichaelList.Ops, not a copy) on that bucket's head word: see
 * its notes for Find, the tombstone, memory ordering (1)-(9), the counts and reclamation.
 *
 * Layout: the M = buckets head words (a power of two) are the M counted fields of one root object,
 * of a type registered per M (rootType(M)), allocated zeroed by the constructor; bucket(key) =
 * MichaelHashMap.mix(key) & (M - 1) (MurmurHash3's fmix64, as the manual map).
 *
 * Invariants: each bucket list satisfies CdrcHarrisMichaelList's invariants; a node with key k is
 * only ever linked in bucket(k); the root stays alive (the map owns its count) until close.
 *
 * Linearization points: those of the bucket list's operation; operations on different buckets
 * touch disjoint words, so the map is linearizable because each list is (locality, Herlihy & Wing
 * 1990). size: a traversal of every bucket, not linearizable; exact when quiescent.
 *
 * Progress: lock-free (each bucket is).
 *
 * Memory ordering: the head words are written only by the root's zeroing allocation (before the
 * constructor returns; the map must be published safely, like any object) and by the lists' CASes.
 *
 * Reclamation and ABA: CdrcHarrisMichaelList's, per bucket. close() releases the root after every
 * operation ended: its death retires each bucket's reference, so every chain dies, a node at a time.
 * }</pre>
 */
public final class CdrcMichaelHashMap extends StructureLifecycle {

    /** The most protections (snapshots, or counted loads) one operation holds at once: a list's. */
    public static final int SNAPSHOTS = CdrcHarrisMichaelList.SNAPSHOTS;

    private final CdrcHarrisMichaelList.Ops ops;
    private final long root;
    private final int mask;

    /**
     * An empty map of {@code buckets} lists whose nodes live in {@code rc}.
     *
     * @param rc        the domain (shared with other structures, closed by the caller after them)
     * @param buckets   the number of buckets, a positive power of two
     * @param snapshots whether operations protect nodes with snapshots (true) or counted loads only
     * @throws NullPointerException     if {@code rc} is null
     * @throws IllegalArgumentException if {@code buckets} is not a positive power of two
     * @throws IllegalStateException    if {@code rc} is closed
     */
    public CdrcMichaelHashMap(final Cdrc rc, final int buckets, final boolean snapshots) {
        Objects.requireNonNull(rc, "rc");
        if (buckets <= 0 || Integer.bitCount(buckets) != 1) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "the number of buckets must be a positive power of two, was %d", buckets));
        }
        this.ops = new CdrcHarrisMichaelList.Ops(rc, snapshots);
        this.mask = buckets - 1;
        this.root = rc.allocate(CdrcTypes.id(rc, rootType(buckets)));
    }

    /** The root type of a map of {@code buckets} buckets: that many counted fields, the head words. */
    static RcType rootType(final int buckets) {
        final long[] heads = new long[buckets];
        for (int b = 0; b < buckets; b++) {
            heads[b] = Cdrc.HEADER + (long) b * Long.BYTES;
        }
        return new RcType("CdrcMichaelHashMap.buckets[" + buckets + "]", Cdrc.HEADER + (long) buckets * Long.BYTES, heads);
    }

    /** The number of buckets. */
    public int buckets() {
        return mask + 1;
    }

    /** Whether operations protect nodes with snapshots (true) or with counted loads. */
    public boolean snapshots() {
        return ops.snapshots;
    }

    /** The head word of bucket {@code b}. */
    private long head(final int b) {
        return root + Cdrc.HEADER + ((long) b << 3);
    }

    /** The head word of {@code key}'s bucket. */
    private long bucket(final long key) {
        return head((int) (MichaelHashMap.mix(key) & mask));
    }

    /**
     * Maps {@code key} to {@code value} if it is absent; returns the value already mapped, or
     * {@link #RESERVED} if this call inserted it.
     */
    public long putIfAbsent(final long key, final long value) {
        checkKey(key);
        checkValue(value);
        final int op = enter();
        try {
            return ops.put(bucket(key), key, value, false);
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
        try {
            return ops.put(bucket(key), key, value, true);
        } finally {
            exit(op);
        }
    }

    /** The value mapped to {@code key}, or {@link #RESERVED} if absent. */
    public long get(final long key) {
        checkKey(key);
        final int op = enter();
        try {
            return ops.get(bucket(key), key);
        } finally {
            exit(op);
        }
    }

    /** Whether {@code key} is present. */
    public boolean contains(final long key) {
        checkKey(key);
        final int op = enter();
        try {
            return ops.contains(bucket(key), key);
        } finally {
            exit(op);
        }
    }

    /** Removes {@code key}; returns the value it had, or {@link #RESERVED} if it was absent. */
    public long remove(final long key) {
        checkKey(key);
        final int op = enter();
        try {
            return ops.remove(bucket(key), key);
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
        try {
            for (int b = 0; b <= mask; b++) {
                n += ops.count(head(b));
            }
        } finally {
            exit(op);
        }
        return n;
    }

    /** Drops the root (its death retires every bucket's reference, and with them the chains) and flushes. */
    @Override
    void freeNodes() {
        ops.rc.release(root);
        ops.rc.flush();
    }

    /** Quiescent inspection for tests: per bucket, every linked node as {key, value, next word, address}. */
    List<List<long[]>> bucketsQuiescent() {
        final List<List<long[]>> all = new ArrayList<>();
        for (int b = 0; b <= mask; b++) {
            all.add(CdrcHarrisMichaelList.nodesQuiescent(head(b)));
        }
        return all;
    }

    /** The bucket index of {@code key} (tests). */
    int bucketOf(final long key) {
        return (int) (MichaelHashMap.mix(key) & mask);
    }
}
