package dev.limbo.reclaim.rc;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Participants;
import dev.limbo.core.Words;
import dev.limbo.reclaim.Guard;

import java.lang.ref.Cleaner;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Concurrent deferred reference counting (Anderson, Blelloch, Wei, PLDI 2021, §3-§5, Figures 3 and
 * 4) with weak references (the authors' PLDI 2022 follow-up, digest §4.6): counted off-heap objects
 * whose decrements that could race with an increment are deferred through {@link AcquireRetire}, and
 * snapshots that protect an object through an announcement slot instead of a count.
 *
 * <p>A counted field (the paper's {@code atomic_rc_ptr}) is an aligned off-heap word holding a
 * counted address, with optional {@link Guard#MARK_BITS} marks; the operations here act on such a
 * field by address. A reference the caller owns (the paper's {@code rc_ptr}) is a plain {@code long}
 * it must {@link #release} once; a snapshot ({@code snapshot_ptr}) is a {@code long} it must
 * {@link #releaseSnapshot} on the same thread; a weak reference is a {@code long} it must
 * {@link #releaseWeak}. {@link RcRef}, {@link SnapshotRef} and {@link WeakRcRef} wrap them as
 * {@link AutoCloseable} handles with use-after-close, owner-thread and (in debug mode) leak checks.
 *
 * <p>A counted object starts with a {@value #HEADER}-byte header: its strong count at offset 0 (1
 * on {@link #allocate}, owned by the creator) and, at offset 8, its weak count in the high 32 bits
 * (1 on allocation, held by the strong references together) and its {@linkplain #register
 * registered} type id in the low 32 bits. Its {@link RcType} names its strong and weak fields, which
 * are released when its strong count reaches zero; the block is freed when the weak count does.
 * Cycles of strong references are never freed (reference counting's limit): make a back edge weak.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm: Figures 3 and 4 of the paper (digest §4.2, §4.5) over acquire-retire with K = 8
 * announcement slots per thread: slot 0 for load and cas, slots 1-7 for snapshots.
 *  increment(p) = getAndAdd(+1); decrement(p): getAndAdd(-1); when it returned 1, CAS the count
 *      0 -> DEAD (bit 62); the object dies only if that CAS wins (a weak upgrade may have revived
 *      it in between: PLDI'22's sticky counter).
 *  load(A): p = acquire(A, slot 0); if p != 0 increment(p); release(slot 0); return p.
 *  snapshot(A): s = a slot of 1-7 whose shadow is empty, else the round-robin victim, whose object
 *      first gets its deferred increment (the evicted snapshot becomes a counted reference, §4.5);
 *      p = acquire(A, s); shadow[s] = p. No count change.
 *  releaseSnapshot(p): if a slot's shadow holds p, clear it and release the slot; otherwise p was
 *      evicted and the caller owns a count: decrement(p). Two snapshots of one object are
 *      interchangeable (digest §8.5), so the slot cleared need not be the one taken.
 *  store(A, d) (copy): increment(d); cur = getAndSet(A, d); retireAndEject(cur).
 *  storeMove(A, d): the caller's reference moves into A: no increment.
 *  cas(A, e, d) (copy): announce d in slot 0 BEFORE the compare, also when a snapshot of this
 *      thread holds d (see the departure from the artifact below); if CAS(A, e, d) {
 *      increment(d); retireAndEject(e) }; release slot 0.
 *  casMove(A, e, d): CAS(A, e, d); on success retireAndEject(e) (the caller's count moved in).
 *  casMark(A, e, d): CAS between two words with the same address: no count changes.
 *  release(p): eager decrement (nobody else reads the caller's own reference).
 *  retireAndEject(p): retire(p); apply each handle eject returns (every retire is paired with one
 *      eject, the assumption of Theorem 2).
 *  Weak: loadWeak / storeWeak / weakOf / releaseWeak do the same on the weak count, retiring the
 *      weak decrements as kind 1 (AcquireRetire pairs an announcement with the strong retires of
 *      an address first); upgrade(w): getAndAdd(+1) on the strong count, failing if DEAD was set.
 *  death of p (DEAD won): retire the reference in each strong (kind 0) and weak (kind 1) field
 *      (deferred, so a long chain dies a scan at a time without recursion, digest §7.4), then drop
 *      the strong owners' weak count; the block is freed when the weak count reaches 0.
 *
 * Invariants (Theorem 1): strong count(p) = the strong references to p held in counted fields and
 * by callers (an evicted snapshot counts as one), plus the strong retires of p still delayed; so a
 * delayed retire keeps p alive (count >= 1), and load increments only while its active acquire
 * holds back one delayed decrement: an object whose count reached zero and was marked DEAD is never
 * incremented (only upgrade tries, and it fails). Snapshots: for each address, the snapshots open
 * on a thread = the slots of that thread whose shadow holds it + its evicted ones, each evicted one
 * holding one count. weak count(p) = weak references + delayed weak retires + 1 while p is not
 * DEAD; the block is freed only when it reaches 0, so an upgrade never touches a freed block.
 * Linearization points: load/snapshot - the acquire's validating load, or an acquire load of the
 * field that read null (then no slot is touched); store/storeMove - the getAndSet (8);
 * cas/casMove/casMark - the CAS (9); release - its decrement (7); upgrade - its getAndAdd (7).
 *
 * Memory ordering: acquire-retire's accesses (1)-(6) are numbered in AcquireRetire (announce +
 * fence vs the scan's fence + slot loads). (7) volatile getAndAdd on counts and the volatile CAS to
 * DEAD: the decrement that returns 1 follows every earlier access to the object by the holders of
 * the other references (their decrements are volatile too), so disposing after it is safe. (8)
 * volatile getAndSet of the field and (9) volatile CAS: they publish the object (its header and
 * fields were written before them) and pair with the acquire load (1) of a later load; the unlink
 * they perform precedes the retire and thus the scan's fence (4). (10) acquire loads of a dying
 * object's counted fields. The header is written with opaque stores before the object is published
 * by (8) or (9). The shadow slots are the owner thread's plain state.
 *
 * Progress: load and snapshot are lock-free (acquire retries while the field changes); store,
 * storeMove, cas, casMove, release, upgrade and the weak operations are wait-free up to the
 * allocator and the amortized scans of eject.
 * Reclamation: per thread at most AcquireRetire.garbageBound(n) delayed decrements once each of its
 * retires had its eject; a dying object's field retires are appended without their own eject,
 * so a cascade adds at most its fields to the bound until the next ejects drain them. A departed
 * thread's delayed decrements are adopted by the next scan of any thread (AcquireRetire orphans).
 * Departure from the paper: Figure 3's delete destructs (decrements at once) the references a dying
 * object holds; here they are retired instead (digest §7.4), so a long chain never recurses and a
 * snapshot that still reads a dying object's field keeps the child alive (digest §8.6).
 * Departure from the artifact: its cas skips the reservation of a desired that a snapshot of the
 * caller protects. That is unsafe under multiset protection: an announcement holds back ONE retire,
 * and between the CAS and its increment d may have two retires with one count between them (the
 * snapshot's source field B, counted, and the new uncounted copy in A): if another thread
 * overwrites both A and B and its scan sees only the snapshot's announcement, it ejects one of the
 * two, d's count reaches 0 and d dies under the snapshot, before the increment. With the
 * reservation the two announcements hold back both retires, so cas always reserves.
 * ABA: a counted field's CAS compares addresses; the object at e cannot be freed and reused while
 * the caller holds a reference or a snapshot of it, which the paper requires of the caller of cas.
 * }</pre>
 */
public final class Cdrc implements AutoCloseable {

    /** Bytes of the counted-object header: the strong count word, then the weak count and type word. */
    public static final int HEADER = 16;
    /** Snapshot slots per thread (the paper's 7; slot 0 serves load and cas). */
    public static final int SNAPSHOT_SLOTS = 7;
    /** The strong count's flag of an object that died (the sticky zero of PLDI'22). */
    private static final long DEAD = 1L << 62;
    /** One weak reference in the header's second word. */
    private static final long WEAK_ONE = 1L << 32;
    /** The retire kind of a deferred weak decrement (kind 0 is a strong one). */
    private static final long WEAK_KIND = 1;
    /** Handles a thread applies per eject at most. */
    private static final int EJECT_BATCH = 8;
    private static final Cleaner CLEANER = Cleaner.create();

    private final LimboAllocator allocator;
    private final AcquireRetire ar;
    private final boolean debug;
    private final Local[] ctxs = new Local[Participants.CAPACITY];
    private final AutoCloseable releaseHook;
    private final AtomicLong leakedHandles = new AtomicLong();
    private volatile RcType[] types = new RcType[0];
    private volatile long[][] fields = new long[0][];
    private volatile long[][] weakFields = new long[0][];
    private volatile boolean closed;

    /**
     * A domain whose counted objects live in {@code allocator}, without handle leak tracking.
     *
     * @param allocator where counted objects are allocated and freed
     */
    public Cdrc(final LimboAllocator allocator) {
        this(allocator, false);
    }

    /**
     * A domain whose counted objects live in {@code allocator}.
     *
     * @param allocator where counted objects are allocated and freed
     * @param debug whether handles ({@link RcRef}, {@link SnapshotRef}, {@link WeakRcRef}) that
     *        become unreachable while open are reported ({@link #leakedHandles()} and a warning)
     */
    public Cdrc(final LimboAllocator allocator, final boolean debug) {
        this.allocator = Objects.requireNonNull(allocator, "allocator");
        this.debug = debug;
        this.ar = new AcquireRetire(1 + SNAPSHOT_SLOTS);
        this.releaseHook = Participants.onRelease(this::forget);
    }

    /**
     * Registers a type of counted object.
     *
     * @return its type id, for {@link #allocate}
     */
    public synchronized int register(final RcType type) {
        Objects.requireNonNull(type, "type");
        final int id = types.length;
        final long[][] f = Arrays.copyOf(fields, id + 1);
        f[id] = type.countedFields();
        final long[][] w = Arrays.copyOf(weakFields, id + 1);
        w[id] = type.weakFields();
        final RcType[] t = Arrays.copyOf(types, id + 1);
        t[id] = type;
        fields = f;
        weakFields = w;
        types = t;
        return id;
    }

    /**
     * Allocates a zeroed counted object of registered type {@code typeId}, with count 1, owned by
     * the caller.
     *
     * @throws IllegalArgumentException if {@code typeId} is not registered
     * @throws IllegalStateException if the domain is closed
     */
    public long allocate(final int typeId) {
        final RcType[] t = types;
        if (typeId < 0 || typeId >= t.length) {
            throw new IllegalArgumentException("type id " + typeId + " is not registered (" + t.length + " types)");
        }
        if (closed) {
            throw new IllegalStateException("Cdrc domain is closed");
        }
        final long p = allocator.allocateZeroed(t[typeId].bytes());
        Words.opaqueStore(p, 1);
        Words.opaqueStore(p + Long.BYTES, WEAK_ONE | typeId);
        return p;
    }

    /** The strong count of the object {@code p} (marks ignored), 0 once it died: a moving value while others share it. */
    public long count(final long p) {
        final long c = Words.la(p & ~Guard.MARK_BITS);
        return (c & DEAD) != 0 ? 0 : c;
    }

    /** The weak count of the object {@code p} (marks ignored), including the strong references' one while it lives. */
    public long weakCount(final long p) {
        return Words.la((p & ~Guard.MARK_BITS) + Long.BYTES) >>> 32;
    }

    /** The registered type id of the object {@code p} (marks ignored). */
    public int typeOf(final long p) {
        return (int) Words.la((p & ~Guard.MARK_BITS) + Long.BYTES);
    }

    /**
     * Reads the counted field at {@code field} and returns a new reference to its object (marks
     * kept), which the caller must {@link #release}; 0 if the field is null.
     */
    public long load(final long field) {
        return load(ctx(), field);
    }

    /** {@link #load(long)} with the calling thread's {@code c}. */
    public long load(final Local c, final long field) {
        final long seen = Words.la(field); // a null needs no acquire
        if ((seen & ~Guard.MARK_BITS) == 0) {
            return seen;
        }
        final AcquireRetire.Local l = c.local;
        final long p = l.acquire(0, field);
        if ((p & ~Guard.MARK_BITS) != 0) {
            increment(p & ~Guard.MARK_BITS);
        }
        l.release(0);
        return p;
    }

    /**
     * Reads the counted field at {@code field} and protects its object without a count change
     * until the calling thread passes the same word to {@link #releaseSnapshot}; 0 (nothing to
     * release) if the field is null. A thread may hold any number of snapshots: beyond
     * {@value #SNAPSHOT_SLOTS} the oldest is evicted and becomes a counted reference, which only
     * costs speed.
     *
     * @return the field's word, marks kept
     */
    public long snapshot(final long field) {
        return snapshot(ctx(), field);
    }

    /** {@link #snapshot(long)} with the calling thread's {@code c}. */
    public long snapshot(final Local c, final long field) {
        final long seen = Words.la(field); // a null needs no slot: the acquire would return it unannounced
        if ((seen & ~Guard.MARK_BITS) == 0) {
            return seen;
        }
        final int s = c.slot();
        final long p = c.local.acquire(s, field);
        c.shadow[s] = p & ~Guard.MARK_BITS;
        return p;
    }

    /** Ends the calling thread's snapshot {@code p} (marks ignored; 0 is a no-op). */
    public void releaseSnapshot(final long p) {
        if ((p & ~Guard.MARK_BITS) != 0) {
            releaseSnapshot(ctx(), p);
        }
    }

    /** {@link #releaseSnapshot(long)} with the calling thread's {@code c}. */
    public void releaseSnapshot(final Local c, final long p) {
        final long a = p & ~Guard.MARK_BITS;
        if (a == 0) {
            return;
        }
        for (int s = 1; s <= SNAPSHOT_SLOTS; s++) {
            if (c.shadow[s] == a) {
                c.shadow[s] = 0;
                c.local.release(s);
                return;
            }
        }
        decrement(c, a); // it was evicted: the caller owns a count
    }

    /**
     * Returns a new counted reference to {@code p}, which the caller keeps alive meanwhile (a
     * reference, snapshot or weak-upgraded reference it holds): {@code rc_ptr}'s copy, or a snapshot
     * turned into a counted reference.
     */
    public long retain(final long p) {
        final long a = p & ~Guard.MARK_BITS;
        if (a != 0) {
            increment(a);
        }
        return p;
    }

    /** Stores a copy of the caller's reference {@code desired} (marks kept; 0 for null) in the counted field. */
    public void store(final long field, final long desired) {
        storeMove(field, retain(desired));
    }

    /** Moves the caller's reference {@code desired} into the counted field: the caller no longer owns it. */
    public void storeMove(final long field, final long desired) {
        final long cur = Words.xchg(field, desired) & ~Guard.MARK_BITS; // (8)
        if (cur != 0) {
            retireAndEject(ctx(), cur);
        }
    }

    /**
     * Sets the counted field to a copy of the caller's reference or snapshot {@code desired} if it
     * holds {@code expected} (full words, marks included); the caller keeps its own either way.
     *
     * @return whether it did
     */
    public boolean cas(final long field, final long expected, final long desired) {
        final Local c = ctx();
        final long d = desired & ~Guard.MARK_BITS;
        if (d != 0) {
            c.local.reserve(0, d); // also when a snapshot holds d: see the departure from the artifact
        }
        final boolean swapped = Words.cas(field, expected, desired); // (9)
        if (swapped) {
            if (d != 0) {
                increment(d);
            }
            final long e = expected & ~Guard.MARK_BITS;
            if (e != 0) {
                retireAndEject(c, e);
            }
        }
        if (d != 0) {
            c.local.release(0);
        }
        return swapped;
    }

    /**
     * Like {@link #cas}, but on success the caller's reference {@code desired} moves into the field
     * (the caller no longer owns it); on failure the caller keeps it.
     *
     * @return whether it did
     */
    public boolean casMove(final long field, final long expected, final long desired) {
        if (!Words.cas(field, expected, desired)) { // (9)
            return false;
        }
        final long e = expected & ~Guard.MARK_BITS;
        if (e != 0) {
            retireAndEject(ctx(), e);
        }
        return true;
    }

    /**
     * Changes only the marks of the counted field: sets it to {@code desired} if it holds
     * {@code expected}, two words with the same address. No count changes.
     *
     * @return whether it did
     * @throws IllegalArgumentException if the two words name different addresses
     */
    public boolean casMark(final long field, final long expected, final long desired) {
        if (((expected ^ desired) & ~Guard.MARK_BITS) != 0) {
            throw new IllegalArgumentException("casMark changes marks only: 0x" + Long.toHexString(expected)
                    + " and 0x" + Long.toHexString(desired) + " name different addresses");
        }
        return Words.cas(field, expected, desired); // (9)
    }

    /** Drops the caller's reference {@code p} (marks ignored; 0 is a no-op) at once. */
    public void release(final long p) {
        final long a = p & ~Guard.MARK_BITS;
        if (a != 0) {
            decrement(ctx(), a);
        }
    }

    /** {@link #release(long)} with the calling thread's {@code c}. */
    public void release(final Local c, final long p) {
        final long a = p & ~Guard.MARK_BITS;
        if (a != 0) {
            decrement(c, a);
        }
    }

    /**
     * Reads the weak field at {@code field} and returns a new weak reference to its object (marks
     * kept), which the caller must {@link #releaseWeak}; 0 if the field is null. The object may
     * have died: {@link #upgrade} tells.
     */
    public long loadWeak(final long field) {
        final AcquireRetire.Local l = ctx().local;
        final long p = l.acquire(0, field);
        if ((p & ~Guard.MARK_BITS) != 0) {
            Words.xadd((p & ~Guard.MARK_BITS) + Long.BYTES, WEAK_ONE); // (7)
        }
        l.release(0);
        return p;
    }

    /** Stores a weak copy of {@code target} (a strong or weak reference the caller holds; 0 for null) in the weak field. */
    public void storeWeak(final long field, final long target) {
        final long cur = Words.xchg(field, weakOf(target)) & ~Guard.MARK_BITS; // (8)
        if (cur != 0) {
            retireAndEject(ctx(), cur | WEAK_KIND);
        }
    }

    /** Returns a new weak reference to {@code p}, a strong or weak reference the caller holds (marks kept). */
    public long weakOf(final long p) {
        final long a = p & ~Guard.MARK_BITS;
        if (a != 0) {
            Words.xadd(a + Long.BYTES, WEAK_ONE); // (7)
        }
        return p;
    }

    /**
     * Tries to turn the caller's weak reference {@code w} into a new strong one; the caller keeps
     * {@code w} either way.
     *
     * @return {@code w} (marks kept), now also a strong reference the caller must {@link #release};
     *         0 if the object died
     */
    public long upgrade(final long w) {
        final long a = w & ~Guard.MARK_BITS;
        if (a == 0 || (Words.xadd(a, 1) & DEAD) != 0) { // (7)
            return 0;
        }
        return w;
    }

    /** Drops the caller's weak reference {@code w} (marks ignored; 0 is a no-op) at once. */
    public void releaseWeak(final long w) {
        final long a = w & ~Guard.MARK_BITS;
        if (a != 0) {
            weakDecrement(a);
        }
    }

    /**
     * Applies every delayed decrement of the calling thread that no announcement holds back,
     * including the ones the deaths it causes add (tests, shutdown).
     *
     * @return the decrements it applied
     */
    public long flush() {
        final Local c = ctx();
        long applied = 0;
        for (int n; (n = c.local.ejectNow(c.out)) > 0; ) {
            applied += n;
            for (int i = 0; i < n; i++) {
                apply(c, c.out[i]);
            }
        }
        return applied;
    }

    /** Decrements of the calling thread still delayed. */
    public long delayed() {
        return ctx().local.delayed();
    }

    /** Snapshots of the calling thread evicted into counted references so far. */
    public long evictions() {
        return ctx().evictions;
    }

    /** Handles reported as garbage-collected while open (debug mode). */
    public long leakedHandles() {
        return leakedHandles.get();
    }

    /** The acquire-retire instance that defers the decrements. */
    public AcquireRetire acquireRetire() {
        return ar;
    }

    /**
     * Takes over every thread's delayed decrements and applies them, then unregisters the domain's
     * thread-exit hooks. Objects still referenced stay allocated. No other thread may use the domain
     * meanwhile or later; handles of a closed domain throw {@link IllegalStateException}.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        ar.adoptAll();
        flush();
        ar.close();
        try {
            releaseHook.close();
        } catch (final Exception e) {
            throw new IllegalStateException("cannot unregister the release hook", e);
        }
    }

    /** Whether {@link #close()} ran. */
    public boolean isClosed() {
        return closed;
    }

    /** Handle checks: a handle of a closed domain may not be used. */
    void checkOpen(final String handle) {
        if (closed) {
            throw new IllegalStateException(handle + " belongs to a closed Cdrc domain");
        }
    }

    /** In debug mode, reports {@code handle} if it becomes unreachable while {@code state} says open. */
    Cleaner.Cleanable watch(final Object handle, final HandleState state) {
        if (!debug) {
            return null;
        }
        return CLEANER.register(handle, () -> {
            if (state.open) {
                leakedHandles.incrementAndGet();
                System.getLogger(Cdrc.class.getName()).log(System.Logger.Level.WARNING,
                        state.kind + " 0x" + Long.toHexString(state.word) + " was garbage-collected while open (never closed)");
            }
        });
    }

    /** What a handle's leak report needs, without referencing the handle. */
    static final class HandleState {
        final String kind;
        volatile long word;
        volatile boolean open = true;

        HandleState(final String kind, final long word) {
            this.kind = kind;
            this.word = word;
        }
    }

    /** The calling thread's state, for the {@code (Local, ...)} forms of the hot operations. */
    public Local local() {
        return ctx();
    }

    private Local ctx() {
        final int id = Participants.current();
        Local c = ctxs[id];
        if (c == null) {
            c = new Local(ar.local());
            ctxs[id] = c;
        }
        return c;
    }

    /** A departed id's snapshot shadows go with it (AcquireRetire cleared its slots). */
    private void forget(final int id) {
        ctxs[id] = null;
    }

    private void retireAndEject(final Local c, final long handle) {
        c.local.retire(handle);
        final int n = c.local.eject(c.out);
        for (int i = 0; i < n; i++) {
            apply(c, c.out[i]);
        }
    }

    private void apply(final Local c, final long handle) {
        if ((handle & WEAK_KIND) != 0) {
            weakDecrement(handle & ~Guard.MARK_BITS);
        } else {
            decrement(c, handle);
        }
    }

    private static void increment(final long a) {
        final long old = Words.xadd(a, 1); // (7)
        if (old < 1 || (old & DEAD) != 0) {
            throw new IllegalStateException("increment of dead counted object 0x" + Long.toHexString(a) + " (count was " + old + ")");
        }
    }

    private void decrement(final Local c, final long a) {
        final long old = Words.xadd(a, -1); // (7)
        if (old == 1) {
            if (Words.cas(a, 0, DEAD)) { // (7)
                die(c, a);
            }
        } else if (old < 1 || (old & DEAD) != 0) {
            Words.xadd(a, 1); // (7) undone, so that DEAD - 1 does not read as a live count to a later upgrade
            throw new IllegalStateException("decrement of dead counted object 0x" + Long.toHexString(a) + " (count was " + old + ")");
        }
    }

    private void weakDecrement(final long a) {
        final long old = Words.xadd(a + Long.BYTES, -WEAK_ONE); // (7)
        if (old >>> 32 == 1) {
            allocator.free(a);
        } else if (old >>> 32 == 0) {
            throw new IllegalStateException("weak decrement of freed counted object 0x" + Long.toHexString(a));
        }
    }

    /** Retires the references in the dead object's fields, then drops the strong references' weak count. */
    private void die(final Local c, final long a) {
        final int type = (int) Words.la(a + Long.BYTES);
        for (final long offset : fields[type]) {
            final long child = Words.la(a + offset) & ~Guard.MARK_BITS; // (10)
            if (child != 0) {
                c.local.retire(child);
            }
        }
        for (final long offset : weakFields[type]) {
            final long child = Words.la(a + offset) & ~Guard.MARK_BITS; // (10)
            if (child != 0) {
                c.local.retire(child | WEAK_KIND);
            }
        }
        weakDecrement(a);
    }

    /**
     * One thread's state in the domain: its acquire-retire slots, snapshot shadows and eject
     * buffer. {@link Cdrc#local()} returns the calling thread's; an operation that makes many
     * calls passes it to the {@code (Local, ...)} forms, saving a thread lookup per call. Use it only
     * on the thread that got it, and not after that thread gave its participant id back.
     */
    public static final class Local {

        final AcquireRetire.Local local;
        /** The unmarked address each snapshot slot (1-7) protects, 0 if free; index 0 is unused. */
        final long[] shadow = new long[1 + SNAPSHOT_SLOTS];
        final long[] out = new long[EJECT_BATCH];
        int next;
        long evictions;

        Local(final AcquireRetire.Local local) {
            this.local = local;
        }

        /** The participant id of the thread this state belongs to (for per-thread arrays). */
        public int id() {
            return local.id();
        }

        /** A free snapshot slot, or the round-robin victim after giving its object the increment it deferred. */
        int slot() {
            for (int s = 1; s <= SNAPSHOT_SLOTS; s++) {
                if (shadow[s] == 0) {
                    return s;
                }
            }
            final int victim = 1 + next;
            next = (next + 1) % SNAPSHOT_SLOTS;
            increment(shadow[victim]); // still protected by the slot
            shadow[victim] = 0;
            evictions++;
            return victim;
        }
    }
}
