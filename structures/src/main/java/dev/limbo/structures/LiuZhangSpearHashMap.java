package dev.limbo.structures;

import dev.limbo.core.Layouts;
import dev.limbo.core.StripedCounter;
import dev.limbo.core.Words;
import dev.limbo.reclaim.Guard;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Restart;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import static dev.limbo.reclaim.Guard.MARK_BITS;
import static dev.limbo.structures.FreezableSetLayout.CAPACITY;
import static dev.limbo.structures.FreezableSetLayout.COUNT;
import static dev.limbo.structures.FreezableSetLayout.FANOUT;
import static dev.limbo.structures.FreezableSetLayout.FANOUT_BITS;
import static dev.limbo.structures.FreezableSetLayout.GEN;
import static dev.limbo.structures.FreezableSetLayout.LEVELS;
import static dev.limbo.structures.FreezableSetLayout.MASK;
import static dev.limbo.structures.FreezableSetLayout.NEXT;
import static dev.limbo.structures.FreezableSetLayout.PAIRS;
import static dev.limbo.structures.FreezableSetLayout.PRED;
import static dev.limbo.structures.FreezableSetLayout.ROOT;

/**
 * A lock-free hash map from {@code long} keys to {@code long} values, with its entries in off-heap
 * memory, that grows and shrinks without a global lock: Liu, Zhang and Spear's dynamic-sized
 * nonblocking hash table. Every {@code long} is a valid key and a valid value.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm and source: Liu, Zhang, Spear, "Dynamic-sized nonblocking hash tables", PODC 2014,
 * §3 (the lock-free table, Fig. 2-4). The map is a head word pointing to a table (HNode) of 2^k
 * buckets; each bucket is a freezable set (FSet): an immutable set of pairs, replaced by one CAS
 * per update, and frozen by setting a mark so that it never changes again. A resize installs a
 * new table whose predecessor (pred) is the current one and whose buckets are all uninitialized;
 * a bucket of the new table is initialized on first use by freezing the one (grow) or two
 * (shrink) buckets of pred that hold its keys and copying their pairs (initBucket). Updates that
 * meet a frozen bucket retry on the newer table; lookups read a frozen bucket, or pred's bucket
 * when theirs is not initialized yet. Before a resizer installs the next table, it initializes
 * every bucket of the current one and drops (and retires) its pred, so at most two tables are
 * linked at any time. The hash is MurmurHash3's fmix64 (MichaelHashMap.mix, a bijection of the
 * longs); bucket(key) = mix(key) & mask; keys are kept as they are, so no key or value is reserved.
 *
 * Departures (off-heap records of one size, see FreezableSetLayout):
 *  - The bucket array is a radix tree of 16-word segment records (levels = ceil(k / 4), at least
 *    one), built whole with the table; a bucket word lives in a level-0 segment.
 *  - An FSet is a chain of records of 14 pairs (usually one record); the bucket word points to the
 *    chain, or is EMPTY (4) for an initialized empty bucket, or 0 while uninitialized. The paper's
 *    FSet "ok" flag is the bucket word's FROZEN mark (bit 0), so freezing allocates nothing.
 *  - The resize policy is a load factor on a striped count of the keys, with hysteresis: grow
 *    (double) when an insert leaves 12 or more pairs in its bucket and the map holds more than 8
 *    keys per bucket; shrink (halve, not below the initial table) when a remove empties its bucket
 *    and the map holds fewer than 2 keys per bucket. A new table has 4 keys per bucket either way.
 *  - The paper drops pred with a plain store and leaves freeing to a garbage collector; here it is
 *    dropped by CAS (8), and its winner retires the old table: first it marks DEAD (bit 1) every
 *    link of it (root, segment slots, bucket words) by CAS (9), then retires every record. A
 *    table's generation (GEN, one more than its pred's) tells a resizer that the table it is
 *    migrating is still the head (a recycled address has another generation).
 *
 * Invariants:
 *  - head always points to a table; the tables reachable are head and head.pred (pred of pred is
 *    always 0). Every bucket of a table is initialized before a successor of it is created, so a
 *    pred's buckets are never 0, and a table's buckets are frozen only after its successor is head.
 *  - A key is in the authoritative bucket of the newest table where its bucket is initialized: the
 *    unfrozen bucket word of that table, or, while head's bucket is uninitialized, pred's (frozen
 *    or not). A frozen bucket never changes again except for the DEAD mark; a chain record is
 *    immutable once published.
 *  - A bucket's chain holds each key at most once: updates copy the chain without the key and
 *    append it; initBucket copies disjoint buckets (shrink) or filters one (grow).
 *  - DEAD is set on a link only after the table that holds it was unlinked (pred dropped), and
 *    before the link's target is retired.
 *
 * Linearization points:
 *  - An update that writes: its successful bucket CAS (4). An update that writes nothing
 *    (putIfAbsent of a present key, replace/remove of an absent key or with the wrong expected
 *    value, a put of the value already there): the protect (1) of its bucket word that its scan
 *    then confirmed (2), or a later one.
 *  - getOrDefault / containsKey: the protect (1) of the bucket word (of head's table, or, while
 *    that bucket is uninitialized, of pred's: LZS Lemma 3 argues that pred's bucket is
 *    authoritative from the read of head's 0 word until the initializing CAS (5), and a frozen
 *    bucket read from a stale table holds the key's state from its freeze until the first update
 *    of the successor's bucket, which follows the reader's load of head).
 *  - Resizes and bucket initializations do not change the abstract map: (5) installs a copy of
 *    frozen buckets, (7) installs a table of uninitialized buckets.
 *  - size: a striped count added after each successful insert or remove: exact when quiescent,
 *    approximate while updates run.
 *
 * Why a resize neither loses nor duplicates a key: an update writes only an unfrozen bucket (its
 * CAS (4) expects the unfrozen word), and freezing (6) is a CAS on that same word, so every update
 * of a pred bucket is ordered before its freeze, and the copy made after the freeze sees it.
 * A new bucket is installed by CAS (5) from 0, once: two initializers copy the same frozen
 * sources and exactly one copy is installed (the other is freed). Grow sends each key of pred
 * bucket i to exactly one of buckets i and i + n/2 (the filter on mix(key) & mask); shrink merges
 * pred buckets i and i + n, which hold disjoint keys.
 *
 * Progress: lock-free. An update retries only when its bucket CAS (4) lost to another update or
 * to a freeze, or when a resize moved its bucket; initialization and resizing are done by any
 * thread that needs them (helping), and a resizer stops as soon as another one has installed a
 * new table. Lookups retry only when a validation (2) sees a bucket replaced or a link DEAD, i.e.
 * after another thread's successful CAS.
 *
 * Memory ordering:
 *  (1) protect of a link: head, pred, root, a segment slot, a bucket word, a chain record's next:
 *      an acquire load (publish + full fence + re-load for hazard-style schemes). Pairs with the
 *      CAS that published the target: (4), (5), (7), and the plain initialization of a table's
 *      segments before (7).
 *  (2) acquire load of the bucket word after protecting a chain record beyond the first: the
 *      validation that the chain was still linked (not replaced, not DEAD) when the protection
 *      was published; FROZEN may have been added meanwhile.
 *  (3) plain loads of immutable fields (mask, levels, generation, count, pairs, next), published
 *      by the CAS that linked their record and acquired by (1).
 *  (4) volatile CAS of an unfrozen bucket word from the old chain to the new one (an update).
 *  (5) volatile CAS of a bucket word from 0 to the migrated chain (initBucket).
 *  (6) volatile CAS of a bucket word w to w | FROZEN: competes with (4) on the same word.
 *  (7) volatile CAS of head from the current table to the new one (resize).
 *  (8) volatile CAS of table.pred from the old table to 0 (its winner retires the old table).
 *  (9) volatile CAS of a link of the old table to link | DEAD, before its target is retired:
 *      a reader whose (1) or (2) read the link without DEAD published its protection before the
 *      retire (hazard pointers' protect-validate against unlink-then-scan).
 *  (10) the striped key and record counts: atomic adds and opaque sums, statistics and resize
 *      policy only.
 *
 * Reclamation and ABA: a chain is retired whole by the thread whose CAS (4) replaced it; a pred
 * table, its segments and its frozen chains by the winner of (8), after (9). Records built and not
 * installed (a lost (4), (5) or (7), a restart) were never visible and are freed at once
 * (freeExclusive). Every record dereferenced is protected by (1) and shown reachable after its
 * protection: for the head table by (1) itself; for pred by (8) happening before its retire; for
 * segments and first chain records by the absence of DEAD in the word read; for later chain
 * records by (2), with the chain's first record kept protected so that its address cannot be
 * recycled into the same bucket word (ABA). A protected record is not freed, so the CASes (4), (5),
 * (6), (8) that expect a record address cannot succeed on a recycled one. The head word lives
 * outside the records and is freed by close() once every operation has ended.
 *
 * Neutralization (Guard, "Neutralization"): every operation's read phase runs in a loop that
 * catches Restart and starts again from head (a resizer resumes at the bucket it was on, after
 * re-reading head and checking the table's generation). Every write is a write phase of its own:
 * reserve the table and the segment (and chain) it touches, beginWrite, CAS, retire, endWrite.
 * Records built by a read phase are freed when it restarts. Answers computed by reads alone are
 * confirmed by a poll. Counting schemes cannot serve the map: its records have three layouts, so
 * it declares no links (as EllenBst).
 * }</pre>
 */
public final class LiuZhangSpearHashMap extends OffHeapStructure {

    /** Protection slots one operation needs: build the domain with at least these. */
    public static final int SLOTS = 12;
    /** Bytes of the records: build the domain with at least these. */
    public static final long RECORD_BYTES = FreezableSetLayout.RECORD_BYTES;
    /** The most keys the initial capacity may ask for. */
    public static final long MAX_INITIAL_CAPACITY = 1L << 40;

    /** Bucket word mark: the bucket is frozen (the paper's ok == false). */
    static final long FROZEN = 1;
    /** Link mark: the table holding the link was retired; its target is (being) retired. */
    static final long DEAD = 2;
    /** Bucket word: initialized and empty. */
    static final long EMPTY = 4;

    /** Grow when there are more than this many keys per bucket. */
    static final double GROW_LOAD = 8;
    /** Shrink when there are fewer than this many keys per bucket. */
    static final double SHRINK_LOAD = 2;
    /** Keys per bucket of a first table. */
    static final long TARGET_LOAD = 4;
    /** Pairs in one bucket after an insert that make the insert check the load. */
    static final long GROW_CHECK = 12;

    private static final int S_TABLE = 0;
    private static final int S_PRED = 1;
    private static final int S_SEG = 2; // and 3
    private static final int S_CHAIN = 4; // first record; 5 and 6 for the rest
    private static final int S_PSEG = 7; // and 8
    private static final int S_PCHAIN = 9; // first record; 10 and 11 for the rest

    /** {@link #scanStep}: where the pairs start in the caller's array (after the next position and the last flag). */
    public static final int SCAN_HEADER = 2;
    /** Locals: whether the scanned key was found, its value, the bucket's pairs. */
    private static final int L_FOUND = 0;
    private static final int L_VALUE = 1;
    private static final int L_PAIRS = 2;
    /** Locals: the chain being built (first record, last record, pairs in the last, pairs in all). */
    private static final int L_HEAD = 4;
    private static final int L_TAIL = 5;
    private static final int L_FILL = 6;
    private static final int L_BUILT = 7;

    private static final int PUT = 0;
    private static final int PUT_IF_ABSENT = 1;
    private static final int REPLACE = 2;
    private static final int REPLACE_IF = 3;
    private static final int REMOVE = 4;
    private static final int REMOVE_IF = 5;

    private final long head;
    private final long minBuckets;
    private final double growLoad;
    private final double shrinkLoad;
    private final long growCheck;
    private final long recordFootprint;
    private final StripedCounter keys = new StripedCounter();
    private final StripedCounter records = new StripedCounter();

    /**
     * A map over {@code domain} sized for a few keys; see {@link #LiuZhangSpearHashMap(ReclaimDomain, long)}.
     */
    public LiuZhangSpearHashMap(final ReclaimDomain domain) {
        this(domain, 0);
    }

    /**
     * A map over {@code domain}, which needs records of at least 248 bytes and at least 12
     * protection slots, with a first table for {@code initialCapacity} keys; the table never
     * shrinks below that first size.
     *
     * @throws IllegalArgumentException if {@code initialCapacity} is negative or above
     *                                  {@link #MAX_INITIAL_CAPACITY}, or the domain's records or
     *                                  slots are too few
     */
    public LiuZhangSpearHashMap(final ReclaimDomain domain, final long initialCapacity) {
        this(domain, initialCapacity, GROW_LOAD, SHRINK_LOAD, GROW_CHECK);
    }

    /**
     * As above, with the resize policy's thresholds (tests make tiny maps resize often): grow when
     * an insert leaves {@code growCheck} pairs in its bucket and there are more than
     * {@code growLoad} keys per bucket; shrink when a remove empties its bucket and there are fewer
     * than {@code shrinkLoad}.
     */
    LiuZhangSpearHashMap(final ReclaimDomain domain, final long initialCapacity, final double growLoad,
                         final double shrinkLoad, final long growCheck) {
        super(domain, SLOTS, RECORD_BYTES);
        if (initialCapacity < 0 || initialCapacity > MAX_INITIAL_CAPACITY) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "initial capacity must be between 0 and %d keys, was %d", MAX_INITIAL_CAPACITY, initialCapacity));
        }
        domain.declareLinks(); // three record layouts: no countable links
        this.growLoad = growLoad;
        this.shrinkLoad = shrinkLoad;
        this.growCheck = growCheck;
        final long wanted = Math.max(1, (initialCapacity + TARGET_LOAD - 1) / TARGET_LOAD);
        this.minBuckets = Long.highestOneBit(wanted) == wanted ? wanted : Long.highestOneBit(wanted) << 1;
        final long probe = domain.allocateExclusive();
        this.recordFootprint = domain.allocator().usableSize(probe);
        domain.freeExclusive(probe);
        this.head = domain.allocator().allocateZeroed(Layouts.PADDED);
        try (Guard g = domain.pin()) {
            Words.sr(head, newTable(g, minBuckets, 0, 0));
        }
        records.add(tableRecords(minBuckets));
    }

    // ---------------------------------------------------------------- the point operations

    /** The value of {@code key}, or {@code defaultValue} if it has none. */
    public long getOrDefault(final long key, final long defaultValue) {
        final int op = enter();
        try (Guard g = domain.pin()) {
            return lookup(g, key) ? g.locals()[L_VALUE] : defaultValue;
        } finally {
            exit(op);
        }
    }

    /** Whether {@code key} has a value. */
    public boolean containsKey(final long key) {
        final int op = enter();
        try (Guard g = domain.pin()) {
            return lookup(g, key);
        } finally {
            exit(op);
        }
    }

    /** Maps {@code key} to {@code value} if it has no value; returns whether it inserted. */
    public boolean putIfAbsent(final long key, final long value) {
        return update(PUT_IF_ABSENT, key, value, 0, 0) != 0;
    }

    /** Maps {@code key} to {@code value}; returns its previous value, or {@code missing} if it had none. */
    public long put(final long key, final long value, final long missing) {
        return update(PUT, key, value, 0, missing);
    }

    /** Replaces the value of {@code key} if it has one; returns whether it had. */
    public boolean replace(final long key, final long value) {
        return update(REPLACE, key, value, 0, 0) != 0;
    }

    /** Replaces the value of {@code key} with {@code value} if it is {@code expected}; returns whether it was. */
    public boolean replace(final long key, final long expected, final long value) {
        return update(REPLACE_IF, key, value, expected, 0) != 0;
    }

    /** Removes {@code key}; returns the value it had, or {@code missing} if it had none. */
    public long remove(final long key, final long missing) {
        return update(REMOVE, key, 0, 0, missing);
    }

    /**
     * Removes {@code key} if its value is {@code expected}; returns whether it was (the map
     * interfaces' {@code remove(key, value)}, renamed since {@link #remove(long, long)} takes the
     * missing value).
     */
    public boolean removeIfEquals(final long key, final long expected) {
        return update(REMOVE_IF, key, 0, expected, 0) != 0;
    }

    /**
     * The number of keys: a striped count kept by the updates, exact when the map is quiescent and
     * approximate while updates run. O(cores).
     */
    public long size() {
        final int op = enter();
        try (Guard ignored = domain.pin()) {
            return keys.sum();
        } finally {
            exit(op);
        }
    }

    /** The buckets of the current table (a power of two; it doubles and halves with the load). */
    public long buckets() {
        final int op = enter();
        try (Guard g = domain.pin()) {
            while (true) {
                try {
                    final long t = g.protect(S_TABLE, head); // (1)
                    final long mask = Words.lp(t + MASK); // (3)
                    g.poll();
                    return mask + 1;
                } catch (final Restart neutralized) {
                    // read again
                }
            }
        } finally {
            exit(op);
        }
    }

    /**
     * Off-heap bytes of the records the map links (tables, segments, chains; allocator rounding
     * included) and of its head word; removed records that the scheme has not freed yet are not
     * counted. Approximate while updates run.
     */
    public long offHeapBytes() {
        return records.sum() * recordFootprint + Layouts.PADDED;
    }

    /** Bytes one record occupies in the allocator. */
    public long recordFootprint() {
        return recordFootprint;
    }

    @Override
    void freeNodes() {
        final long t = Words.lp(head);
        Words.sp(head, 0L);
        final long pred = Words.lp(t + PRED);
        freeTable(t);
        if (pred != 0) {
            freeTable(pred);
        }
        domain.allocator().free(head);
    }


    /**
     * One step of a weakly consistent scan in split order (bit-reversed hash, unsigned): copies to
     * {@code out}, from index 2 on, the pairs of the one bucket of the current table that covers
     * split position {@code from}, those at or after it, read in one snapshot of that bucket (a
     * chain is immutable); sets {@code out[0]} to the position where the next step starts and
     * {@code out[1]} to 1 if this was the last bucket. Start at 0. Buckets cover intervals of the
     * split order at every table size, so the steps of a scan visit disjoint intervals in
     * increasing order even when the table resizes between them: a key present for the whole
     * scan is seen once, a key absent for the whole scan never.
     *
     * @return the pairs copied, or minus the pairs the bucket holds if {@code out} is too small
     *         for them (nothing was consumed: call again with a larger array)
     * @throws IllegalArgumentException if {@code out} has fewer than 2 words
     */
    public int scanStep(final long from, final long[] out) {
        if (out.length < SCAN_HEADER) {
            throw new IllegalArgumentException("a scan step needs an array of at least 2 words, got " + out.length);
        }
        final int op = enter();
        try (Guard g = domain.pin()) {
            final long[] l = g.locals();
            while (true) {
                try {
                    final long t = g.protect(S_TABLE, head); // (1)
                    final long mask = Words.lp(t + MASK); // (3)
                    final int k = Long.numberOfTrailingZeros(mask + 1);
                    final long prefix = k == 0 ? 0 : from >>> (64 - k);
                    final long index = k == 0 ? 0 : Long.reverse(prefix) >>> (64 - k);
                    final long slot = locate(g, t, index, S_SEG);
                    if (slot < 0) {
                        continue;
                    }
                    final long w = g.protect(S_CHAIN, slot); // (1)
                    if (!collect(g, t, slot, w, mask, index, from, out)) {
                        continue;
                    }
                    g.poll();
                    final long next = k == 0 ? 0 : (prefix + 1) << (64 - k);
                    out[0] = next;
                    out[1] = next == 0 ? 1 : 0;
                    final int n = (int) l[L_PAIRS];
                    return SCAN_HEADER + 2 * n <= out.length ? n : -n;
                } catch (final Restart neutralized) {
                    // read the bucket again
                }
            }
        } finally {
            exit(op);
        }
    }

    /**
     * Copies bucket {@code index} of table {@code t} (word {@code w} at {@code slot}) for a scan
     * step, from pred's bucket(s) if it is uninitialized; false: retry.
     */
    private boolean collect(final Guard g, final long t, final long slot, final long w, final long mask,
                            final long index, final long from, final long[] out) {
        if (w != 0) {
            return (w & DEAD) == 0 && walk(g, slot, w, S_CHAIN, from, false, false, mask, index, out, 0);
        }
        final long s = g.protect(S_PRED, t + PRED); // (1)
        if (s == 0) {
            return false;
        }
        final long sMask = Words.lp(s + MASK); // (3)
        if (sMask < mask) {
            return collectPred(g, s, index & sMask, mask, index, from, out, 0);
        }
        return collectPred(g, s, index, mask, index, from, out, 0)
                && collectPred(g, s, index + mask + 1, mask, index, from, out, g.locals()[L_PAIRS]);
    }

    /** Copies pred {@code s}'s bucket {@code j} for a scan step after {@code before} pairs; false: retry. */
    private boolean collectPred(final Guard g, final long s, final long j, final long mask, final long index,
                                final long from, final long[] out, final long before) {
        final long slot = locate(g, s, j, S_PSEG);
        if (slot < 0) {
            return false;
        }
        final long w = g.protect(S_PCHAIN, slot); // (1)
        return (w & DEAD) == 0 && walk(g, slot, w, S_PCHAIN, from, false, false, mask, index, out, before);
    }

    // ---------------------------------------------------------------- lookups

    /** Looks {@code key} up: returns whether it is present, its value in locals[L_VALUE]. */
    private boolean lookup(final Guard g, final long key) {
        final long hash = MichaelHashMap.mix(key);
        while (true) {
            try {
                final long t = g.protect(S_TABLE, head); // (1)
                final long slot = locate(g, t, hash & Words.lp(t + MASK), S_SEG);
                if (slot < 0) {
                    continue;
                }
                final long w = g.protect(S_CHAIN, slot); // (1)
                final boolean read = w == 0
                        ? lookupPred(g, t, hash, key)
                        : (w & DEAD) == 0 && walk(g, slot, w, S_CHAIN, key, false, false, 0, 0);
                if (read) {
                    g.poll();
                    return g.locals()[L_FOUND] != 0;
                }
            } catch (final Restart neutralized) {
                // the read phase starts over from head
            }
        }
    }

    /** Looks {@code key} up in the pred of {@code t}, whose bucket is uninitialized; false: retry. */
    private boolean lookupPred(final Guard g, final long t, final long hash, final long key) {
        final long s = g.protect(S_PRED, t + PRED); // (1)
        if (s == 0) {
            return false; // the bucket was initialized meanwhile
        }
        final long slot = locate(g, s, hash & Words.lp(s + MASK), S_PSEG);
        if (slot < 0) {
            return false;
        }
        final long w = g.protect(S_PCHAIN, slot); // (1)
        return (w & DEAD) == 0 && walk(g, slot, w, S_PCHAIN, key, false, false, 0, 0);
    }

    /**
     * The address of bucket {@code index}'s word in table {@code t}, descending its segments with
     * protection slots {@code pair} and {@code pair + 1}; -1 if a link is DEAD (t was retired).
     */
    private static long locate(final Guard g, final long t, final long index, final int pair) {
        int level = (int) Words.lp(t + LEVELS) - 1; // (3)
        long link = t + ROOT;
        int s = pair;
        while (true) {
            final long w = g.protect(s, link); // (1)
            if ((w & DEAD) != 0) {
                return -1;
            }
            link = (w & ~MARK_BITS) + (((index >>> (FANOUT_BITS * level)) & (FANOUT - 1)) << 3);
            if (level == 0) {
                return link;
            }
            level--;
            s = flip(s, pair);
        }
    }

    /** The other slot of the pair that starts at {@code base}. */
    private static int flip(final int s, final int base) {
        return s == base ? base + 1 : base;
    }

    /**
     * Walks the chain of bucket word {@code w} (read from {@code slot}, its first record protected
     * in {@code first}; the rest alternate in first + 1 and first + 2). Scan ({@code copy} false):
     * finds {@code key}, leaving found, value and the bucket's pair count in the locals. Copy:
     * appends to the chain being built every pair whose mix(key) &amp; {@code filterMask} is
     * {@code filterIndex}, except {@code key}'s if {@code skip}; with {@code out}, to {@code out}
     * from index {@code SCAN_HEADER + 2 * before} on instead (as a scan step: only the pairs at or after
     * split position {@code key}, and at most as many as fit; locals[L_PAIRS] counts those that
     * passed, {@code before} included).
     * Returns false if the chain was replaced or retired meanwhile (the caller retries).
     */
    private boolean walk(final Guard g, final long slot, final long w, final int first, final long key,
                         final boolean copy, final boolean skip, final long filterMask, final long filterIndex) {
        return walk(g, slot, w, first, key, copy, skip, filterMask, filterIndex, null, 0);
    }

    private boolean walk(final Guard g, final long slot, final long w, final int first, final long key,
                         final boolean copy, final boolean skip, final long filterMask, final long filterIndex,
                         final long[] out, final long before) {
        final long[] l = g.locals();
        long found = before;
        long value = 0;
        long pairs = 0;
        long rec = w & ~MARK_BITS;
        int s = first + 2;
        while (rec != 0) {
            final long n = Words.lp(rec + COUNT); // (3)
            for (long p = rec + PAIRS, end = p + n * 2 * Long.BYTES; p < end; p += 2 * Long.BYTES) {
                final long k = Words.lp(p); // (3)
                if (out != null) {
                    final long mixed = MichaelHashMap.mix(k);
                    if ((mixed & filterMask) == filterIndex && Long.compareUnsigned(Long.reverse(mixed), key) >= 0) {
                        final int at = SCAN_HEADER + 2 * (int) found;
                        if (at + 1 < out.length) {
                            out[at] = k;
                            out[at + 1] = Words.lp(p + Long.BYTES); // (3)
                        }
                        found++;
                    }
                } else if (copy) {
                    if (!(skip && k == key) && (MichaelHashMap.mix(k) & filterMask) == filterIndex) {
                        append(g, k, Words.lp(p + Long.BYTES));
                    }
                } else if (k == key) {
                    found = 1;
                    value = Words.lp(p + Long.BYTES); // (3)
                }
            }
            pairs += n;
            if (Words.lp(rec + NEXT) == 0) { // (3)
                break;
            }
            s = flip(s, first + 1);
            rec = g.protect(s, rec + NEXT); // (1)
            if (((Words.la(slot) ^ w) & ~FROZEN) != 0) { // (2)
                return false;
            }
        }
        l[L_FOUND] = found;
        l[L_VALUE] = value;
        l[L_PAIRS] = out == null ? pairs : found;
        return true;
    }

    // ---------------------------------------------------------------- updates

    private long update(final int kind, final long key, final long value, final long expected, final long missing) {
        final int op = enter();
        try (Guard g = domain.pin()) {
            return update(g, op, kind, key, value, expected, missing);
        } finally {
            exit(op);
        }
    }

    private long update(final Guard g, final int stripe, final int kind, final long key, final long value,
                        final long expected, final long missing) {
        final long hash = MichaelHashMap.mix(key);
        final long[] l = g.locals();
        l[L_HEAD] = 0;
        while (true) {
            try {
                final long t = g.protect(S_TABLE, head); // (1)
                final long mask = Words.lp(t + MASK); // (3)
                final long gen = Words.lp(t + GEN); // (3)
                final long slot = locate(g, t, hash & mask, S_SEG);
                if (slot < 0) {
                    continue;
                }
                final long w = g.protect(S_CHAIN, slot); // (1)
                if (w == 0) {
                    initBucket(g, t, hash & mask, slot);
                    continue;
                }
                if ((w & (FROZEN | DEAD)) != 0 || !walk(g, slot, w, S_CHAIN, key, false, false, 0, 0)) {
                    continue; // a newer table holds the bucket, or the chain changed
                }
                final boolean found = l[L_FOUND] != 0;
                final long old = l[L_VALUE];
                final long pairs = l[L_PAIRS];
                final boolean removes = kind == REMOVE || kind == REMOVE_IF;
                final boolean matches = found && old == expected;
                final boolean write = switch (kind) {
                    case PUT -> !found || old != value;
                    case PUT_IF_ABSENT -> !found;
                    case REPLACE -> found && old != value;
                    case REPLACE_IF -> matches && expected != value;
                    case REMOVE -> found;
                    default -> matches;
                };
                final long result = switch (kind) {
                    case PUT, REMOVE -> found ? old : missing;
                    case PUT_IF_ABSENT -> found ? 0 : 1;
                    case REPLACE -> found ? 1 : 0;
                    default -> matches ? 1 : 0;
                };
                if (!write) {
                    g.poll();
                    return result;
                }
                startBuild(l);
                if (!walk(g, slot, w, S_CHAIN, key, true, found, 0, 0)) {
                    freeBuilt(l);
                    continue;
                }
                if (!removes) {
                    append(g, key, value);
                }
                final long fresh = built(l);
                final long freshPairs = l[L_BUILT];
                g.reserve(0, t);
                g.reserve(1, slot);
                g.reserve(2, w);
                g.beginWrite();
                final boolean swapped = g.cas(slot, w, fresh); // (4)
                if (swapped) {
                    l[L_HEAD] = 0; // published
                    retireChain(g, w);
                }
                g.endWrite();
                if (!swapped) {
                    freeBuilt(l);
                    continue;
                }
                records.add(stripe, recordsFor(freshPairs) - recordsFor(pairs));
                if (!found) {
                    keys.add(stripe, 1);
                    if (freshPairs >= growCheck && keys.sum() > growLoad * (mask + 1)) {
                        resize(g, t, gen, mask, true);
                    }
                } else if (removes) {
                    keys.add(stripe, -1);
                    if (freshPairs == 0 && mask + 1 > minBuckets && keys.sum() < shrinkLoad * (mask + 1)) {
                        resize(g, t, gen, mask, false);
                    }
                }
                return result;
            } catch (final Restart neutralized) {
                freeBuilt(l); // the read phase starts over from head
            }
        }
    }

    /**
     * Initializes bucket {@code index} of table {@code t} (word at {@code slot}, 0 when read) from
     * pred's bucket(s): freezes them and installs a copy by CAS (5). Returns without installing if
     * pred was dropped or retired meanwhile (the bucket is then initialized: the caller re-reads).
     */
    private void initBucket(final Guard g, final long t, final long index, final long slot) {
        final long s = g.protect(S_PRED, t + PRED); // (1)
        if (s == 0) {
            return;
        }
        final long tMask = Words.lp(t + MASK); // (3)
        final long sMask = Words.lp(s + MASK); // (3)
        final long[] l = g.locals();
        startBuild(l);
        try {
            final boolean copied = sMask < tMask
                    ? migrate(g, s, index & sMask, tMask, index)
                    : migrate(g, s, index, 0, 0) && migrate(g, s, index + tMask + 1, 0, 0);
            if (!copied) {
                freeBuilt(l);
                return;
            }
            final long fresh = built(l);
            final long built = l[L_BUILT];
            g.reserve(0, t);
            g.reserve(1, slot);
            g.beginWrite();
            final boolean installed = g.cas(slot, 0, fresh); // (5)
            g.endWrite();
            if (installed) {
                l[L_HEAD] = 0;
                records.add(recordsFor(built));
            } else {
                freeBuilt(l);
            }
        } catch (final Restart neutralized) {
            freeBuilt(l);
            throw neutralized;
        }
    }

    /**
     * Freezes bucket {@code index} of pred table {@code s} (6) and appends its pairs that pass the
     * filter to the chain being built; false if {@code s} was retired meanwhile.
     */
    private boolean migrate(final Guard g, final long s, final long index, final long filterMask,
                            final long filterIndex) {
        final long slot = locate(g, s, index, S_PSEG);
        if (slot < 0) {
            return false;
        }
        long w;
        while (((w = g.protect(S_PCHAIN, slot)) & FROZEN) == 0) { // (1)
            g.reserve(0, s);
            g.reserve(1, slot);
            g.beginWrite();
            g.cas(slot, w, w | FROZEN); // (6) fails only if an update replaced w: read again
            g.endWrite();
        }
        return (w & DEAD) == 0 && walk(g, slot, w, S_PCHAIN, 0, true, false, filterMask, filterIndex);
    }

    // ---------------------------------------------------------------- resizing

    /**
     * Resizes table {@code t} of generation {@code gen} and {@code mask + 1} buckets (grow:
     * doubles, else halves): initializes each of its buckets, drops its pred and installs the new
     * table by CAS (7). Returns as soon as head is no longer {@code t} (another thread resized).
     */
    private void resize(final Guard g, final long t, final long gen, final long mask, final boolean grow) {
        for (long i = 0; i <= mask; ) {
            try {
                if (!isHead(g, t, gen)) {
                    return;
                }
                final long slot = locate(g, t, i, S_SEG);
                if (slot < 0) {
                    return;
                }
                if (Words.la(slot) == 0) {
                    initBucket(g, t, i, slot);
                } else {
                    i++;
                }
            } catch (final Restart neutralized) {
                // resume at bucket i once head is read again
            }
        }
        while (true) {
            long fresh = 0;
            try {
                if (!isHead(g, t, gen)) {
                    return;
                }
                dropPred(g, t);
                final long buckets = grow ? (mask + 1) << 1 : (mask + 1) >>> 1;
                fresh = newTable(g, buckets, t, gen + 1);
                g.reserve(0, t);
                g.beginWrite();
                final boolean installed = g.cas(head, t, fresh); // (7)
                g.endWrite();
                if (installed) {
                    records.add(tableRecords(buckets));
                } else {
                    freeTable(fresh);
                }
                return;
            } catch (final Restart neutralized) {
                if (fresh != 0) {
                    freeTable(fresh);
                }
            }
        }
    }

    /** Whether head is {@code t} of generation {@code gen}, re-protecting it in S_TABLE. */
    private boolean isHead(final Guard g, final long t, final long gen) {
        final long h = g.protect(S_TABLE, head); // (1)
        return h == t && Words.lp(h + GEN) == gen; // (3)
    }

    /** Drops {@code t}'s pred by CAS (8); the winner retires it. */
    private void dropPred(final Guard g, final long t) {
        final long s = g.protect(S_PRED, t + PRED); // (1)
        if (s == 0) {
            return;
        }
        g.reserve(0, t);
        g.reserve(1, s);
        g.beginWrite();
        if (g.cas(t + PRED, s, 0)) { // (8)
            final long retired = 1 + retireLinks(g, s + ROOT, (int) Words.lp(s + LEVELS)); // (3)
            g.retire(s);
            records.add(-retired);
        }
        g.endWrite();
    }

    /**
     * Marks link {@code link} DEAD (9) and retires what it leads to: a segment of level
     * {@code level - 1} and everything below it, or (level 0) a bucket's chain. Returns the
     * records retired. The caller won (8), so no other thread retires them.
     */
    private long retireLinks(final Guard g, final long link, final int level) {
        long w = Words.la(link);
        while (!g.cas(link, w, w | DEAD)) { // (9)
            w = Words.la(link);
        }
        final long target = w & ~MARK_BITS;
        if (level == 0) {
            return retireChain(g, w);
        }
        long retired = 1;
        for (int j = 0; j < FANOUT; j++) {
            if (Words.la(target + ((long) j << 3)) != 0) {
                retired += retireLinks(g, target + ((long) j << 3), level - 1);
            }
        }
        g.retire(target);
        return retired;
    }

    /** Retires the chain of bucket word {@code w}; returns its records. */
    private static long retireChain(final Guard g, final long w) {
        long n = 0;
        for (long rec = w & ~MARK_BITS; rec != 0; n++) {
            final long next = Words.lp(rec + NEXT); // (3)
            g.retire(rec);
            rec = next;
        }
        return n;
    }

    /** A new table of {@code buckets} uninitialized buckets with pred {@code pred}, unpublished. */
    private static long newTable(final Guard g, final long buckets, final long pred, final long gen) {
        final int levels = levels(buckets);
        final long t = g.allocate();
        Words.sp(t + MASK, buckets - 1);
        Words.sp(t + LEVELS, levels);
        Words.sp(t + GEN, gen);
        g.initLink(t + PRED, pred);
        g.initLink(t + ROOT, newSegment(g, levels - 1, buckets, pred == 0 ? EMPTY : 0));
        return t;
    }

    /**
     * A segment of level {@code level} covering {@code span} buckets, with its children; its
     * bucket words are {@code bucket}: EMPTY in a first table (no pred), else 0 (uninitialized).
     */
    private static long newSegment(final Guard g, final int level, final long span, final long bucket) {
        final long seg = g.allocate();
        final long childSpan = 1L << (FANOUT_BITS * level);
        for (int j = 0; j < FANOUT; j++) {
            final long first = j * childSpan;
            if (level == 0) {
                g.initLink(seg + ((long) j << 3), bucket);
            } else {
                g.initLink(seg + ((long) j << 3),
                        first < span ? newSegment(g, level - 1, Math.min(childSpan, span - first), bucket) : 0);
            }
        }
        return seg;
    }

    /** Directory levels of a table of {@code buckets} buckets. */
    static int levels(final long buckets) {
        final int bits = Long.numberOfTrailingZeros(buckets);
        return Math.max(1, (bits + FANOUT_BITS - 1) / FANOUT_BITS);
    }

    /** Records of a table of {@code buckets} buckets: the table and its segments. */
    static long tableRecords(final long buckets) {
        return 1 + segmentRecords(levels(buckets) - 1, buckets);
    }

    private static long segmentRecords(final int level, final long span) {
        if (level == 0) {
            return 1;
        }
        final long childSpan = 1L << (FANOUT_BITS * level);
        final long full = span / childSpan;
        final long rest = span % childSpan;
        return 1 + full * segmentRecords(level - 1, childSpan) + (rest == 0 ? 0 : segmentRecords(level - 1, rest));
    }

    /** Chain records that hold {@code pairs} pairs. */
    static long recordsFor(final long pairs) {
        return (pairs + CAPACITY - 1) / CAPACITY;
    }

    // ---------------------------------------------------------------- building chains (locals L_HEAD..L_BUILT)

    private static void startBuild(final long[] l) {
        l[L_HEAD] = 0;
        l[L_TAIL] = 0;
        l[L_FILL] = CAPACITY;
        l[L_BUILT] = 0;
    }

    private static void append(final Guard g, final long key, final long value) {
        final long[] l = g.locals();
        long tail = l[L_TAIL];
        if (l[L_FILL] == CAPACITY) {
            final long rec = g.allocate();
            g.initLink(rec + NEXT, 0);
            if (tail == 0) {
                l[L_HEAD] = rec;
            } else {
                g.initLink(tail + NEXT, rec);
            }
            l[L_TAIL] = tail = rec;
            l[L_FILL] = 0;
        }
        final long p = tail + PAIRS + l[L_FILL] * 2 * Long.BYTES;
        Words.sp(p, key);
        Words.sp(p + Long.BYTES, value);
        Words.sp(tail + COUNT, ++l[L_FILL]);
        l[L_BUILT]++;
    }

    /** The bucket word of the chain built: its first record, or EMPTY. */
    private static long built(final long[] l) {
        return l[L_HEAD] == 0 ? EMPTY : l[L_HEAD];
    }

    /** Frees the chain being built (never published), if any. */
    private void freeBuilt(final long[] l) {
        freeChain(l[L_HEAD]);
        l[L_HEAD] = 0;
    }

    // ---------------------------------------------------------------- exclusive frees (unpublished records, teardown)

    private void freeChain(final long w) {
        for (long rec = w & ~MARK_BITS; rec != 0; ) {
            final long next = Words.lp(rec + NEXT);
            freeNode(rec);
            rec = next;
        }
    }

    /** Frees table {@code t}, its segments and chains (not its pred). */
    private void freeTable(final long t) {
        freeSegment(Words.lp(t + ROOT) & ~MARK_BITS, (int) Words.lp(t + LEVELS) - 1);
        freeNode(t);
    }

    private void freeSegment(final long seg, final int level) {
        for (int j = 0; j < FANOUT; j++) {
            final long w = Words.lp(seg + ((long) j << 3));
            if (level > 0 && w != 0) {
                freeSegment(w & ~MARK_BITS, level - 1);
            } else if (level == 0) {
                freeChain(w);
            }
        }
        freeNode(seg);
    }

    // ---------------------------------------------------------------- quiescent inspection (tests)

    /**
     * Quiescent: every pair the map holds, as {key, value, bucket of head's table, bucket word it
     * was read from}; a bucket of head's table that is uninitialized contributes the pairs of pred's
     * bucket(s) that belong to it.
     */
    List<long[]> pairsQuiescent() {
        final List<long[]> out = new ArrayList<>();
        final long t = Words.lv(head);
        final long mask = Words.lv(t + MASK);
        final long pred = Words.lv(t + PRED);
        for (long b = 0; b <= mask; b++) {
            final long w = Words.lv(bucketQuiescent(t, b));
            if (w != 0) {
                chainQuiescent(w, false, mask, b, out);
            } else {
                final long sMask = Words.lv(pred + MASK);
                if (sMask < mask) {
                    chainQuiescent(Words.lv(bucketQuiescent(pred, b & sMask)), true, mask, b, out);
                } else {
                    chainQuiescent(Words.lv(bucketQuiescent(pred, b)), false, mask, b, out);
                    chainQuiescent(Words.lv(bucketQuiescent(pred, b + mask + 1)), false, mask, b, out);
                }
            }
        }
        return out;
    }

    /** Quiescent: the address of bucket {@code index}'s word in table {@code t}. */
    private static long bucketQuiescent(final long t, final long index) {
        long link = t + ROOT;
        for (int level = (int) Words.lv(t + LEVELS) - 1; ; level--) {
            link = (Words.lv(link) & ~MARK_BITS) + (((index >>> (FANOUT_BITS * level)) & (FANOUT - 1)) << 3);
            if (level == 0) {
                return link;
            }
        }
    }

    /**
     * Quiescent: the pairs of chain {@code w}, attributed to bucket {@code b}; with {@code filter},
     * only those that belong to bucket {@code b} of a table with {@code mask}.
     */
    private static void chainQuiescent(final long w, final boolean filter, final long mask, final long b,
                                       final List<long[]> out) {
        for (long rec = w & ~MARK_BITS; rec != 0; rec = Words.lv(rec + NEXT)) {
            final long n = Words.lv(rec + COUNT);
            for (long i = 0; i < n; i++) {
                final long k = Words.lv(rec + PAIRS + i * 2 * Long.BYTES);
                if (!filter || (MichaelHashMap.mix(k) & mask) == b) {
                    out.add(new long[] {k, Words.lv(rec + PAIRS + i * 2 * Long.BYTES + Long.BYTES), b, w});
                }
            }
        }
    }

    /** The bucket of {@code key} in a table of {@code buckets} buckets (tests). */
    static long bucketOf(final long key, final long buckets) {
        return MichaelHashMap.mix(key) & (buckets - 1);
    }
}
