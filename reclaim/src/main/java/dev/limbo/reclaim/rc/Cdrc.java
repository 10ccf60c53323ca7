package dev.limbo.reclaim.rc;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Participants;
import dev.limbo.core.Words;
import dev.limbo.reclaim.Guard;

import java.util.Arrays;
import java.util.Objects;

/**
 * Concurrent deferred reference counting (Anderson, Blelloch, Wei, PLDI 2021, §3, Figure 3):
 * counted off-heap objects whose decrements that could race with an increment are deferred
 * through {@link AcquireRetire}. A counted field (the paper's {@code atomic_rc_ptr}) is an aligned
 * off-heap word holding a counted address, with optional {@link Guard#MARK_BITS} marks; the
 * static-style operations here ({@link #load}, {@link #store}, {@link #cas} and their move forms)
 * act on such a field by address, and a counted reference the caller owns (the paper's
 * {@code rc_ptr}) is a plain {@code long} it must {@link #release} once.
 *
 * <p>A counted object starts with a {@value #HEADER}-byte header: its count at offset 0 (1 on
 * {@link #allocate}, owned by the creator) and its {@linkplain #register registered} type id at
 * offset 8. Its {@link RcType} names its counted fields, which are released when it dies.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm: Figure 3 of the paper (digest §4.2) over acquire-retire with one announcement slot per
 * thread (slot 0; the snapshot slots of §4.5 come later). increment(p) = getAndAdd(+1);
 * decrement(p) = getAndAdd(-1), and the object dies when it returns 1.
 *  load(A): p = acquire(A, slot 0); if p != 0 increment(p); release(slot 0); return p.
 *  store(A, d) (copy): increment(d); cur = getAndSet(A, d); retireAndEject(cur).
 *  storeMove(A, d): the caller's reference moves into A: no increment.
 *  cas(A, e, d) (copy): reserve(slot 0, d) (announce BEFORE the compare); if CAS(A, e, d)
 *      { increment(d); retireAndEject(e) }; release(slot 0).
 *  casMove(A, e, d): CAS(A, e, d); on success retireAndEject(e) and the caller's reference moved
 *      into A (no announcement: the cell's copy is the caller's count).
 *  release(p): eager decrement (nobody else reads the caller's own reference).
 *  retireAndEject(p): retire(p); decrement each handle eject returns (every retire is paired with
 *      one eject, the assumption of Theorem 2).
 *  death of p: for each counted field f of its type, retire the reference in f (deferred, so a
 *      long chain dies a scan at a time without recursion, digest §7.4); then free the block.
 *
 * Invariants (Theorem 1): count(p) = the references to p held in counted fields and by callers,
 * plus the retires of p that are still delayed; so a delayed retire keeps p alive (count >= 1), and
 * an increment only happens when the caller holds a reference or an active acquire of p, which
 * holds back one delayed decrement: a count that reached 0 is never incremented.
 * Linearization points: load - the acquire's validating load; store/storeMove - the getAndSet (8);
 * cas/casMove - the CAS (9); release - its decrement (7).
 *
 * Memory ordering: acquire-retire's accesses (1)-(6) are numbered in AcquireRetire (announce +
 * fence vs the scan's fence + slot loads). (7) volatile getAndAdd on counts: the decrement that
 * returns 1 follows every earlier access to the object by the holders of the other references
 * (their decrements are volatile too), so freeing after it is safe. (8) volatile getAndSet of the
 * field and (9) volatile CAS: they publish the object (its header and fields were written before
 * them) and pair with the acquire load (1) of a later load; the unlink they perform precedes the
 * retire and thus the scan's fence (4). (10) acquire loads of a dying object's counted fields.
 * The header is written with opaque stores before the object is published by (8) or (9).
 *
 * Progress: load is lock-free (acquire retries while the field changes); store, storeMove,
 * casMove, release and a failed cas are wait-free up to the allocator; cas announces once.
 * Reclamation: per thread at most AcquireRetire.garbageBound(n) delayed decrements once each of its
 * retires had its eject; a dying object's field retires are appended without their own eject,
 * so a cascade adds at most its fields to the bound until the next ejects drain them.
 * Departure from the paper: Figure 3's delete destructs (decrements at once) the references a dying
 * object holds; here they are retired instead (digest §7.4), so a long chain never recurses and a
 * snapshot (§4.5, later) that still reads a dying object's field keeps the child alive.
 * ABA: a counted field's CAS compares addresses; the object at e cannot be freed and reused while
 * the caller holds a reference to it, which the paper requires of the caller of cas.
 * }</pre>
 */
public final class Cdrc implements AutoCloseable {

    /** Bytes of the counted-object header: the count word and the type word. */
    public static final int HEADER = 16;
    /** Handles a thread decrements per eject at most. */
    private static final int EJECT_BATCH = 8;

    private final LimboAllocator allocator;
    private final AcquireRetire ar;
    private final long[][] ejected = new long[Participants.CAPACITY][];
    private volatile RcType[] types = new RcType[0];
    private volatile long[][] fields = new long[0][];

    /**
     * A domain whose counted objects live in {@code allocator}.
     *
     * @param allocator where counted objects are allocated and freed
     */
    public Cdrc(final LimboAllocator allocator) {
        this.allocator = Objects.requireNonNull(allocator, "allocator");
        this.ar = new AcquireRetire(1);
    }

    /**
     * Registers a type of counted object.
     *
     * @return its type id, for {@link #allocate}
     */
    public synchronized int register(final RcType type) {
        final int id = types.length;
        final long[][] f = Arrays.copyOf(fields, id + 1);
        f[id] = type.countedFields();
        fields = f;
        final RcType[] t = Arrays.copyOf(types, id + 1);
        t[id] = type;
        types = t;
        return id;
    }

    /**
     * Allocates a zeroed counted object of registered type {@code typeId}, with count 1, owned by
     * the caller.
     *
     * @throws IllegalArgumentException if {@code typeId} is not registered
     */
    public long allocate(final int typeId) {
        final RcType[] t = types;
        if (typeId < 0 || typeId >= t.length) {
            throw new IllegalArgumentException("type id " + typeId + " is not registered (" + t.length + " types)");
        }
        final long p = allocator.allocateZeroed(t[typeId].bytes());
        Words.opaqueStore(p, 1);
        Words.opaqueStore(p + Long.BYTES, typeId);
        return p;
    }

    /** The count of the live object {@code p} (marks ignored): a moving value while others share it. */
    public long count(final long p) {
        return Words.la(p & ~Guard.MARK_BITS);
    }

    /** The registered type id of the live object {@code p} (marks ignored). */
    public int typeOf(final long p) {
        return (int) Words.la((p & ~Guard.MARK_BITS) + Long.BYTES);
    }

    /**
     * Reads the counted field at {@code field} and returns a new reference to its object (marks
     * kept), which the caller must {@link #release}; 0 if the field is null.
     */
    public long load(final long field) {
        final AcquireRetire.Local l = ar.local();
        final long p = l.acquire(0, field);
        if ((p & ~Guard.MARK_BITS) != 0) {
            increment(p & ~Guard.MARK_BITS);
        }
        l.release(0);
        return p;
    }

    /** Stores a copy of the caller's reference {@code desired} (marks kept; 0 for null) in the counted field. */
    public void store(final long field, final long desired) {
        if ((desired & ~Guard.MARK_BITS) != 0) {
            increment(desired & ~Guard.MARK_BITS);
        }
        storeMove(field, desired);
    }

    /** Moves the caller's reference {@code desired} into the counted field: the caller no longer owns it. */
    public void storeMove(final long field, final long desired) {
        final long cur = Words.xchg(field, desired) & ~Guard.MARK_BITS; // (8)
        if (cur != 0) {
            retireAndEject(cur);
        }
    }

    /**
     * Sets the counted field to a copy of the caller's reference {@code desired} if it holds
     * {@code expected} (full words, marks included); the caller keeps its own reference either way.
     *
     * @return whether it did
     */
    public boolean cas(final long field, final long expected, final long desired) {
        final AcquireRetire.Local l = ar.local();
        final long d = desired & ~Guard.MARK_BITS;
        l.reserve(0, d);
        final boolean swapped = Words.cas(field, expected, desired); // (9)
        if (swapped) {
            if (d != 0) {
                increment(d);
            }
            final long e = expected & ~Guard.MARK_BITS;
            if (e != 0) {
                retireAndEject(e);
            }
        }
        l.release(0);
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
            retireAndEject(e);
        }
        return true;
    }

    /** Drops the caller's reference {@code p} (marks ignored; 0 is a no-op) at once. */
    public void release(final long p) {
        final long q = p & ~Guard.MARK_BITS;
        if (q != 0) {
            decrement(q);
        }
    }

    /**
     * Applies every delayed decrement of the calling thread that no announcement holds back,
     * including the ones the deaths it causes add (tests, shutdown).
     *
     * @return the decrements it applied
     */
    public long flush() {
        final AcquireRetire.Local l = ar.local();
        final long[] out = buffer(l);
        long applied = 0;
        for (int n; (n = l.ejectNow(out)) > 0; ) {
            applied += n;
            for (int i = 0; i < n; i++) {
                decrement(out[i]);
            }
        }
        return applied;
    }

    /** Decrements of the calling thread still delayed. */
    public long delayed() {
        return ar.local().delayed();
    }

    /** The acquire-retire instance that defers the decrements. */
    public AcquireRetire acquireRetire() {
        return ar;
    }

    /** Flushes the calling thread and unregisters the domain's thread-exit hook. */
    @Override
    public void close() {
        flush();
        ar.close();
    }

    private long[] buffer(final AcquireRetire.Local l) {
        long[] out = ejected[l.id()];
        if (out == null) {
            out = new long[EJECT_BATCH];
            ejected[l.id()] = out;
        }
        return out;
    }

    private void retireAndEject(final long p) {
        final AcquireRetire.Local l = ar.local();
        l.retire(p);
        final long[] out = buffer(l);
        final int n = l.eject(out);
        for (int i = 0; i < n; i++) {
            decrement(out[i]);
        }
    }

    private static void increment(final long p) {
        final long old = Words.xadd(p, 1); // (7)
        if (old < 1) {
            throw new IllegalStateException("increment of dead counted object 0x" + Long.toHexString(p) + " (count was " + old + ")");
        }
    }

    private void decrement(final long p) {
        final long old = Words.xadd(p, -1); // (7)
        if (old == 1) {
            die(p);
        } else if (old < 1) {
            throw new IllegalStateException("decrement of dead counted object 0x" + Long.toHexString(p) + " (count was " + old + ")");
        }
    }

    /** Retires the references in the dead object's counted fields, then frees its block. */
    private void die(final long p) {
        final long[] f = fields[(int) Words.la(p + Long.BYTES)];
        if (f.length > 0) {
            final AcquireRetire.Local l = ar.local();
            for (final long offset : f) {
                final long child = Words.la(p + offset) & ~Guard.MARK_BITS; // (10)
                if (child != 0) {
                    l.retire(child);
                }
            }
        }
        allocator.free(p);
    }
}
