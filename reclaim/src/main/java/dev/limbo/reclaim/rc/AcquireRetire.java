package dev.limbo.reclaim.rc;

import dev.limbo.core.Participants;
import dev.limbo.core.Words;
import dev.limbo.reclaim.Guard;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Acquire-retire (Anderson, Blelloch, Wei, "Concurrent deferred reference counting with
 * constant-time overhead", PLDI 2021, §4, Figure 5, Definition 4.1, Theorem 2): hazard-pointer style
 * announcement slots where the same handle may be retired any number of times, and {@code eject}
 * hands back each retire once no active acquire can own it. The deferred reference counting layer
 * retires a handle for each decrement it defers and applies the decrement when the handle is
 * ejected.
 *
 * <p>Each thread works through its own {@link Local} ({@link #local()}). Announcements hold
 * addresses without their mark bits (digest §7.1, as the artifact does), while acquire validates the
 * full marked word; 0 is the paper's ⊥. A retired handle is a non-zero address plus a kind in its
 * {@linkplain Guard#MARK_BITS mark bits} (the counting layer retires strong decrements as kind 0 and
 * weak ones as kind 1): an announcement of an address holds back one retire of that address, the
 * lowest kind first, and eject hands back the handle as it was retired.
 *
 * <pre>{@code
 * Implementation notes
 *
 * State: an on-heap table of K = slotsPerThread announcement words per participant id, one
 * 128-byte-padded row per id (a row is written only by the thread holding the id: single writer);
 * per Local (per id) a retired multiset rlist (a long[]; duplicates allowed) and a list flist of
 * retires proven safe and not yet handed out. H = K * n announcements in all, n =
 * Participants.highWater(); R = 2 * H + base is the scan threshold (base = 30, the artifact's
 * minimum), as in HazardPointers (A = 2).
 *
 * acquire(slot, src): the fast path is the artifact's loop (§3.4 of the digest): p = load(src)
 *     (1); up to fastPathTries times { if p's address is 0, clear the slot (6) and return p (a
 *     null read needs no protection); announce p without its mark bits in the slot (2, 3); q =
 *     load(src) (1'); if q == p (the full word, marks included) return p; p = q }. Then the
 *     wait-free slow path (§3.4: Blelloch and Wei's destination object, in the fast-path/slow-path
 *     form the authors describe): publish a fresh Copy of src for the slot (7), announce PENDING
 *     (the word 1, never an address) in the slot (2, 3), complete the copy (below), store its
 *     value without marks in the slot and return it.
 * Copy.complete(): if the value is set, return it; else CAS (8) it from EMPTY to a volatile load
 *     (1') of src, and return the value now set (by this call or another). The owner completes its
 *     copy; a scan that meets PENDING in a slot completes the slot's copy and takes its value as
 *     the announcement: both see the same value, read from src after PENDING was announced.
 * reserve(slot, h): announce (2, 3) a handle the caller already knows is protected (it holds a
 *     count or an active acquire of it), with no validation.
 * release(slot): release-store 0 (6).
 * retire(h): append h to rlist (thread-local).
 * eject(out): if flist is empty and |rlist| >= nextScan, scan; then move up to out.length
 *     handles from flist to out. ejectNow(out) scans whenever flist is empty.
 * scan: full fence (4); acquire-load (5) every announcement word of ids 0..n-1 into an array;
 *     sort it and rlist; merge: for each address v retired s times (any kinds) and announced t
 *     times, keep the first min(s, t) of its retires in sorted order (lowest kind first) in rlist
 *     and move the other s - t to flist (the multiset difference: a multiplicity-aware merge of two
 *     sorted arrays, digest §7.4 (ii)); nextScan = |rlist| + R. A scan first appends the orphans.
 *
 * Invariant (Definition 4.1, protection): at the scan's fence, every acquire that is active and
 * returned h, and whose owning retire of h was appended before the scan, is visible as one
 * announcement of h; the merge pairs each such announcement with one retired copy and keeps it.
 * So an eject never consumes a retire that an active acquire owns; the other copies are safe.
 * Safety: the announce (2) + fence (3) + validating load (1') on the acquiring side and the caller's
 * unlink (a CAS or volatile store of src) + fence (4) + announcement load (5) on the scanning side
 * are the store-buffering pair: if the validation saw h still in src, the unlink (which precedes
 * the retire, hence the scan) had not happened, so the scan sees the announcement. An acquire that
 * saw h only after it was unlinked fails its validation and retries: the stale announcement only
 * delays an eject. Slow path: the copy's value h was read from src after PENDING was announced
 * (2, 3). A scan whose fence (4) came after the unlink of h reads the slot (5): if it sees PENDING
 * it completes the copy itself, so the value (set then, after the unlink, or before by a read that
 * saw h still linked) is what it keeps, and the owner returns the same value; if it sees the value,
 * it keeps it; if it sees an older word, PENDING came after the scan's read, hence after the
 * unlink, so the copy cannot have read the unlinked h. A copy belongs to one acquire: a helper
 * that read the copies entry late completes a copy object whose acquire may be over, which only
 * sets a value nobody reads (no ABA through reuse: copies are never reused).
 *
 * Memory ordering: (1) acquire load of src; pairs with the release/CAS that stored the handle.
 * (1') the validating re-load of src is volatile: a volatile write (the announcement) followed by a
 * volatile read is never reordered in the JMM, which the store-buffering pair needs; an acquire
 * load happens to be ordered after the getAndSet on HotSpot's x86 and AArch64 code, but not by the
 * JMM, and the volatile load costs the same there (a plain mov, an ldar).
 * (2) the announcement store and (3) the full fence, as one volatile getAndSet. (4) full fence at
 * the start of a scan, (5) acquire loads of the announcements; (4)/(5) pair with (2)/(3).
 * (6) release store of 0: the acquire's reads happen-before a scan that sees the slot cleared.
 * (7) release store of the slow path's Copy into copies[slot], before PENDING (2, 3); the scan's
 * acquire load of it after it read PENDING (5) sees that copy or a later one of the same slot.
 * (8) volatile CAS of Copy.value: the first completion wins, every later one reads its value.
 *
 * Linearization points (the proof outline of Theorem 2): acquire - the validating load (1') that
 * equals the announced p, or the load (1) or (1') that read null, or on the slow path the load
 * (1') whose value the copy's CAS (8) set; reserve - its store (2); release - the store (6);
 * retire - the append to rlist; eject - each handle's move from flist to out.
 *
 * Progress: acquire is wait-free: at most fastPathTries validations, then a constant number of
 * steps (a scan's completion of a copy too); release, reserve and retire are wait-free O(1); eject is wait-free: a scan costs O((H + |rlist|) log(H + |rlist|)) and frees
 * at least R - H = H + base handles (its rlist holds at least the previous kept ones plus R, and at
 * most H stay), so it is amortized O(log) per retire (the paper's hash table makes it O(1)
 * expected). Allocation: none on these paths once the arrays have grown to their working size
 * (they only grow, doubling, when n or |rlist| exceeds every earlier value), except one Copy per
 * slow-path acquire (only when src changed fastPathTries times during one acquire).
 *
 * Garbage bound (Theorem 2, O(KP) deferred retires, here per thread): if every retire of a Local
 * is followed by at least one eject of that Local with out.length >= 1, it holds at most
 * R + H = 3 * H + base delayed retires (rlist + flist), however long other threads stall holding
 * their announcements. Proof: while flist is non-empty each eject removes at least one handle from
 * it and at most one retire came before it, so |rlist| + |flist| does not grow; while flist is
 * empty, rlist grows by one per retire and the next eject scans once |rlist| reaches nextScan =
 * kept + R <= H + R. In all: n * (R + H), which is O(K P^2) with K slots per thread, the paper's
 * O(KP) for K total slots.
 * ABA: the caller keeps a handle alive while any retire of it is delayed (the reference counting
 * layer: a delayed retire stands for an undone decrement, so the count is >= 1 and the block is
 * not reused); so an announced handle that validated cannot be a recycled block.
 * Departures from the paper: eject is amortized (a full scan every R retires, as the artifact does)
 * rather than deamortized (a constant number of steps per eject); the multiset difference sorts and
 * merges instead of hashing (no allocation, O(log) instead of O(1) expected per handle); the
 * slow path's copies are fresh garbage-collected objects rather than Blelloch and Wei's O(P^2)
 * recycled descriptors, and only the owner and the scans complete them (no other reader exists).
 * Thread exit: when a participant id is released (Participants.onRelease) its row is cleared and
 * its Local's delayed retires (rlist and flist) go to a shared queue of orphans, which the next scan
 * of any Local appends to its own rlist (digest §7.3); so a departed thread's decrements are applied
 * even if nobody claims its id again. adoptAll() does the same for every other Local at shutdown;
 * the two may meet on a dead thread's Local, so orphaning is synchronized (cold path).
 * }</pre>
 */
public final class AcquireRetire implements AutoCloseable {

    /** The artifact's minimum scan threshold. */
    public static final int BASE_THRESHOLD = 30;
    /** Failed validations after which an acquire takes its wait-free slow path, by default. */
    public static final int FAST_PATH_TRIES = 8;
    /** Words per announcement row: 128 bytes, against false sharing with the adjacent-line prefetch. */
    private static final int ROW = 16;
    /** An announcement word that says: a copy is in progress in this slot ({@link Copy}). */
    private static final long PENDING = 1;
    private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(long[].class)
            .withInvokeExactBehavior();
    private static final VarHandle COPIES = MethodHandles.arrayElementVarHandle(Copy[].class)
            .withInvokeExactBehavior();

    private final int slotsPerThread;
    private final int fastPathTries;
    private final long[] table;
    /** Per announcement word, the copy its owner's last slow-path acquire made (stale once done). */
    private final Copy[] copies;
    private final Local[] locals;
    private final ConcurrentLinkedQueue<long[]> orphans = new ConcurrentLinkedQueue<>();
    private final AutoCloseable releaseHook;

    /**
     * A domain whose threads each own {@code slotsPerThread} announcement slots.
     *
     * @param slotsPerThread announcement slots per thread, 1 to 16
     * @throws IllegalArgumentException if {@code slotsPerThread} is out of range
     */
    public AcquireRetire(final int slotsPerThread) {
        this(slotsPerThread, FAST_PATH_TRIES);
    }

    /**
     * A domain whose threads each own {@code slotsPerThread} announcement slots, and whose acquires
     * take the wait-free slow path after {@code fastPathTries} failed validations (0: always).
     *
     * @throws IllegalArgumentException if {@code slotsPerThread} or {@code fastPathTries} is out of range
     */
    public AcquireRetire(final int slotsPerThread, final int fastPathTries) {
        if (slotsPerThread < 1 || slotsPerThread > ROW) {
            throw new IllegalArgumentException("slotsPerThread must be in [1, " + ROW + "]: " + slotsPerThread);
        }
        if (fastPathTries < 0) {
            throw new IllegalArgumentException("fastPathTries must not be negative: " + fastPathTries);
        }
        this.slotsPerThread = slotsPerThread;
        this.fastPathTries = fastPathTries;
        this.table = new long[Participants.CAPACITY * ROW];
        this.copies = new Copy[Participants.CAPACITY * ROW];
        this.locals = new Local[Participants.CAPACITY];
        this.releaseHook = Participants.onRelease(this::clearRow);
    }

    /** The announcement slots per thread (K). */
    public int slotsPerThread() {
        return slotsPerThread;
    }

    /** The calling thread's acquire-retire state (created on its first call). */
    public Local local() {
        final int id = Participants.current();
        Local l = locals[id];
        if (l == null) {
            l = new Local(id);
            locals[id] = l;
        }
        return l;
    }

    /** R for {@code n} participant ids: a Local scans once R retires have built up since its last scan. */
    public long threshold(final int n) {
        return 2L * slotsPerThread * n + BASE_THRESHOLD;
    }

    /**
     * The most retires one thread keeps delayed while {@code n} ids are in use, when each of its
     * retires is followed by an eject: R + H, H = K * n.
     */
    public long garbageBound(final int n) {
        return threshold(n) + (long) slotsPerThread * n;
    }

    /** Unregisters the thread-exit hook; the domain must no longer be used. */
    @Override
    public void close() {
        try {
            releaseHook.close();
        } catch (final Exception e) {
            throw new IllegalStateException("cannot unregister the release hook", e);
        }
    }

    /** Clears the announcements of a departed id (no thread holds it while the hook runs). */
    private void clearRow(final int id) {
        final int base = id * ROW;
        for (int s = 0; s < slotsPerThread; s++) {
            SLOTS.setRelease(table, base + s, 0L); // (6)
        }
        final Local l = locals[id];
        if (l != null) {
            l.orphan();
        }
    }

    /**
     * Hands the delayed retires of every Local but the caller's to the orphans, so that the
     * caller's next scans take them over (shutdown: no other thread may use the domain meanwhile).
     */
    public void adoptAll() {
        final Local mine = local();
        for (final Local l : locals) {
            if (l != null && l != mine) {
                l.orphan();
            }
        }
    }

    /** One thread's slots, retired multiset and safe list; use it only on the thread that got it. */
    public final class Local {

        private final int id;
        private final int row;
        private long[] rlist = new long[64];
        private int rsize;
        private long[] flist = new long[64];
        private int fhead;
        private int fsize;
        private long[] announced = new long[0];
        private long nextScan;

        private Local(final int id) {
            this.id = id;
            this.row = id * ROW;
            this.nextScan = threshold(Participants.highWater());
        }

        /** The participant id whose row this Local owns. */
        public int id() {
            return id;
        }

        private int index(final int slot) {
            if (slot < 0 || slot >= slotsPerThread) {
                throw new IndexOutOfBoundsException("announcement slot " + slot + " not in [0, " + slotsPerThread + ")");
            }
            return row + slot;
        }

        /**
         * Reads the word at off-heap address {@code src}, announces it without its mark bits
         * ({@link Guard#MARK_BITS}) in {@code slot} (ending the slot's previous acquire) and returns
         * it, marks included, once the full word is validated: no eject hands back the retire that
         * this acquire owns until the slot is released or reused.
         *
         * @return the word, 0 if {@code src} held 0
         */
        public long acquire(final int slot, final long src) {
            final int i = index(slot);
            long p = Words.la(src); // (1)
            for (int tries = fastPathTries; tries > 0; tries--) {
                if ((p & ~Guard.MARK_BITS) == 0) { // null: nothing to protect, no announcement
                    SLOTS.setRelease(table, i, 0L); // (6) ends the slot's previous acquire
                    return p;
                }
                // (2), (3); the old value is unused, but an exact invocation must take its long
                final long previous = (long) SLOTS.getAndSet(table, i, p & ~Guard.MARK_BITS);
                final long q = Words.lv(src); // (1')
                if (q == p) {
                    return p;
                }
                p = q;
            }
            return acquireSlow(i, src);
        }

        /** The wait-free acquire: a copy of src into the slot that a scanner completes if it meets it. */
        private long acquireSlow(final int i, final long src) {
            final Copy c = new Copy(src);
            COPIES.setRelease(copies, i, c); // (7)
            // (2), (3); the old value is unused, but an exact invocation must take its long
            final long previous = (long) SLOTS.getAndSet(table, i, PENDING);
            final long p = c.complete();
            SLOTS.setRelease(table, i, p & ~Guard.MARK_BITS); // the same value a scanner resolves
            return p;
        }

        /**
         * Announces {@code handle} without its mark bits (as {@link #acquire} does), which the caller
         * already keeps alive, in {@code slot}, without validation.
         */
        public void reserve(final int slot, final long handle) {
            // (2), (3); the old value is unused, but an exact invocation must take its long
            final long previous = (long) SLOTS.getAndSet(table, index(slot), handle & ~Guard.MARK_BITS);
        }

        /** Ends the acquire held in {@code slot}. */
        public void release(final int slot) {
            SLOTS.setRelease(table, index(slot), 0L); // (6)
        }

        /**
         * Defers one use of {@code handle}: a later eject hands it back once no active acquire owns
         * this retire. The same handle may be retired any number of times.
         *
         * @throws IllegalArgumentException if {@code handle} is 0 or has mark bits set
         */
        public void retire(final long handle) {
            if ((handle & ~Guard.MARK_BITS) == 0) {
                throw new IllegalArgumentException("retire takes a handle with a non-zero address: 0x" + Long.toHexString(handle));
            }
            append(handle);
        }

        private void append(final long handle) {
            if (rsize == rlist.length) {
                rlist = Arrays.copyOf(rlist, 2 * rsize);
            }
            rlist[rsize++] = handle;
        }

        /**
         * Hands every delayed retire of this Local to the orphans, for another thread's next scan.
         * Synchronized: adoptAll (at shutdown) and the release hook of a dead thread's id (on the
         * Cleaner's or a reaper's thread) may orphan the same Local at once, and each retire must
         * be handed over once.
         */
        private synchronized void orphan() {
            if (rsize + fsize == 0) {
                return;
            }
            final long[] all = new long[rsize + fsize];
            System.arraycopy(rlist, 0, all, 0, rsize);
            System.arraycopy(flist, fhead, all, rsize, fsize);
            rsize = 0;
            fhead = 0;
            fsize = 0;
            orphans.add(all);
        }

        /**
         * Writes up to {@code out.length} handles whose retires are now safe to act on into
         * {@code out}, scanning first when enough retires have built up.
         *
         * @return how many handles it wrote
         */
        public int eject(final long[] out) {
            if (fsize == 0 && rsize >= nextScan) {
                scan();
            }
            return drain(out);
        }

        /** Like {@link #eject}, but scans whenever no safe handle is waiting and there are retires or orphans (tests, shutdown). */
        public int ejectNow(final long[] out) {
            if (fsize == 0 && (rsize > 0 || !orphans.isEmpty())) {
                scan();
            }
            return drain(out);
        }

        /** Retires of this Local not yet handed out by an eject. */
        public long delayed() {
            return rsize + fsize;
        }

        private int drain(final long[] out) {
            final int n = Math.min(out.length, fsize);
            System.arraycopy(flist, fhead, out, 0, n);
            fhead += n;
            fsize -= n;
            return n;
        }

        /** Moves every retire that no announcement pairs with from rlist to flist (flist is empty). */
        private void scan() {
            for (long[] o; (o = orphans.poll()) != null; ) {
                for (final long h : o) {
                    append(h);
                }
            }
            Words.fullFence(); // (4)
            final int n = Participants.highWater();
            if (announced.length < n * slotsPerThread) {
                announced = new long[Math.max(n * slotsPerThread, 2 * announced.length)];
            }
            int h = 0;
            for (int id = 0; id < n; id++) {
                final int base = id * ROW;
                for (int s = 0; s < slotsPerThread; s++) {
                    long v = (long) SLOTS.getAcquire(table, base + s); // (5)
                    if (v == PENDING) { // a slow-path acquire in progress: finish its copy
                        v = ((Copy) COPIES.getAcquire(copies, base + s)).complete() & ~Guard.MARK_BITS; // (7)
                    }
                    if (v != 0) {
                        announced[h++] = v;
                    }
                }
            }
            Arrays.sort(announced, 0, h);
            Arrays.sort(rlist, 0, rsize);
            if (flist.length < rsize) {
                flist = new long[Math.max(rsize, 2 * flist.length)];
            }
            fhead = 0;
            int kept = 0;
            int a = 0;
            for (int r = 0; r < rsize; ) {
                final long v = rlist[r] & ~Guard.MARK_BITS;
                while (a < h && announced[a] < v) {
                    a++;
                }
                int t = 0;
                while (a < h && announced[a] == v) {
                    a++;
                    t++;
                }
                // the retires of address v, lowest kind first: the first t stay, the others are safe
                for (; r < rsize && (rlist[r] & ~Guard.MARK_BITS) == v; r++, t--) {
                    if (t > 0) {
                        rlist[kept++] = rlist[r];
                    } else {
                        flist[fsize++] = rlist[r];
                    }
                }
            }
            rsize = kept;
            nextScan = kept + threshold(n);
        }
    }

    /**
     * A single-writer atomic copy of the word at {@code src} into an announcement slot (Blelloch
     * and Wei's destination object, DISC 2020, which CDRC §4.3 uses for a wait-free acquire): the
     * value is set once, by the first of the owner and the scanners that meet the copy, to what that
     * one read from {@code src} after the copy was announced. A fresh object per slow-path acquire,
     * so a late helper can only ever set the value of the copy it read, never a later one's.
     */
    private static final class Copy {

        /** The value not yet copied: no counted word has this value (its address bits are 0). */
        private static final long EMPTY = Long.MIN_VALUE;
        private static final VarHandle VALUE;

        static {
            try {
                VALUE = MethodHandles.lookup().findVarHandle(Copy.class, "value", long.class).withInvokeExactBehavior();
            } catch (final ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private final long src;
        private volatile long value = EMPTY;

        Copy(final long src) {
            this.src = src;
        }

        /** Reads src and offers it as the copy's value, unless the copy is done; returns the value. */
        long complete() {
            final long v = value;
            if (v != EMPTY) {
                return v;
            }
            // (1'), (8); losing the CAS is fine: the value another completion set is the copy's
            final boolean set = (boolean) VALUE.compareAndSet(this, EMPTY, Words.lv(src));
            return value;
        }
    }
}
