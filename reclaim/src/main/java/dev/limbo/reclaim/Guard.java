package dev.limbo.reclaim;

import dev.limbo.core.Words;
import dev.limbo.reclaim.internal.BlockBag;
import dev.limbo.reclaim.internal.BlockLayout;
import dev.limbo.reclaim.internal.BlockSource;
import dev.limbo.reclaim.internal.ReclamationEvent;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Locale;

/**
 * A thread's pinned section of a {@link ReclaimDomain}: obtained from {@link ReclaimDomain#pin()},
 * closed by try-with-resources. While it is open, pointers read through {@link #protect} stay
 * valid (not freed, not reused) and nodes unlinked by the caller are handed over with
 * {@link #retire}.
 *
 * <pre>{@code
 * try (Guard g = domain.pin()) {
 *     long node = g.protect(0, head + NEXT);      // read head.next and keep its target safe
 *     ...
 *     if (Words.cas(head + NEXT, node, next)) {
 *         g.retire(node);                         // freed once no thread can still reach it
 *     }
 * }
 * }</pre>
 *
 * <p>A guard belongs to the thread that pinned it, and each thread has one guard per domain:
 * pinning again while pinned returns the same guard with a deeper nesting count, and the section
 * ends when the outermost {@code close()} runs. Guards are reused, so pinning allocates nothing.
 * A guard must not be used after its outermost {@code close()} ({@link IllegalStateException}), nor
 * by another thread (debug mode checks this).
 *
 * <p>Slots: {@link #protect} and {@link #protectIfEqual} take a slot index below the domain's
 * {@link ReclaimDomain#slots()}; protecting a pointer in a slot releases the slot's previous
 * pointer (for hazard pointers; the epoch schemes protect everything until the section ends).
 * Each nesting depth has a window of slots of its own (at most the builder's {@code maxNesting}
 * depths), so an operation that runs nested (a structure called inside the caller's own section)
 * never overwrites what the outer section protects; every window's protections last until the
 * outermost close.
 * Pointers may carry mark bits in their low 3 bits: they are protected as the pointer without marks.
 */
public abstract class Guard implements AutoCloseable {

    /** Low pointer bits that structures may use as marks; protection ignores them. */
    public static final long MARK_BITS = 7;

    /** The number of {@link #locals()} words. */
    public static final int LOCALS = 8;

    /** {@link #nesting}: the close handshake's accesses (C1), (C6) and (C7) (see ReclaimDomain#pin). */
    static final VarHandle NESTING;
    private static final VarHandle RETIRED;
    private static final VarHandle FREED;

    static {
        try {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            NESTING = lookup.findVarHandle(Guard.class, "nesting", int.class).withInvokeExactBehavior();
            RETIRED = lookup.findVarHandle(Guard.class, "retired", long.class).withInvokeExactBehavior();
            FREED = lookup.findVarHandle(Guard.class, "freed", long.class).withInvokeExactBehavior();
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final ReclaimDomain domain;
    /** This thread's participant id: the index of its announcement and hazard slots. */
    final int id;
    final Thread owner;
    /** Offset of this thread's row in the domain's per-thread slot table. */
    final long row;
    final BlockSource blocks;
    /** The pool's per-thread bag of free records. */
    final BlockBag pool;
    /** Amortized free: records known safe, freed a few per pin. */
    final BlockBag freeable;
    final long[] scratch = new long[BlockLayout.CAPACITY];
    private final long[] locals = new long[LOCALS];
    /** The section depth; written by the owner only, read by a closing thread through {@link #NESTING}. */
    int nesting;
    /** Amortized free: records freed per outermost pin (adapts when the domain says so). */
    int freesPerPin;
    /** Between {@link ReclaimDomain#offline()} and {@link ReclaimDomain#online()}; owner only. */
    boolean offline;
    /** Set when the thread's participant id was released; the guard is then never used again. */
    boolean released;
    @SuppressWarnings("unused") // accessed through RETIRED
    private long retired;
    @SuppressWarnings("unused") // accessed through FREED
    private long freed;

    Guard(final ReclaimDomain domain, final int id) {
        this.domain = domain;
        this.id = id;
        this.owner = Thread.currentThread();
        this.row = domain.slotTable.slot(id);
        this.blocks = new BlockSource(domain.allocator);
        this.pool = new BlockBag(blocks);
        this.freeable = new BlockBag(blocks);
        this.freesPerPin = domain.freesPerPin;
    }

    /**
     * Reads the pointer stored at region offset {@code address} and protects its target, in
     * {@code slot}, until the slot is reused or the section ends. Returns the word read, marks
     * included.
     */
    public abstract long protect(int slot, long address);

    /**
     * Protects {@code expected} in {@code slot} if the word at {@code address} still equals it
     * (marks included), for traversals that already read the word: returns whether it did.
     */
    public abstract boolean protectIfEqual(int slot, long address, long expected);

    /**
     * Hands over a node that the caller unlinked: it is freed once no thread can hold a reference
     * to it. Retire each node exactly once, after it is unreachable from the structure.
     */
    public abstract void retire(long ptr);

    /**
     * Stores link {@code ptr} (marks allowed) into the shared field at region offset
     * {@code address} with a release store, publishing what the target's initialization wrote.
     * Structures write every link of a published node through the guard, never with {@link Words}
     * directly: a reference-counting scheme adjusts the counts of the old and the new target here;
     * for every other scheme it is exactly {@code Words.sr}.
     */
    public void store(final long address, final long ptr) {
        Words.sr(address, ptr);
    }

    /**
     * Compares and sets the link at {@code address} from {@code expected} to {@code ptr} (marks
     * included), as {@code Words.cas} does; a counting scheme moves the counts when it succeeds.
     */
    public boolean cas(final long address, final long expected, final long ptr) {
        return Words.cas(address, expected, ptr);
    }

    /**
     * Initializes a link of a node that no other thread can reach yet (before it is published): a
     * plain store; a counting scheme counts the new reference.
     */
    public void initLink(final long address, final long ptr) {
        Words.sp(address, ptr);
    }

    /**
     * A record of the domain's {@linkplain ReclaimDomain#recordBytes() size}, from the pool; only
     * inside the section.
     */
    public final long allocate() {
        checkPinned();
        return domain.markLive(domain.pool.allocate(pool));
    }

    /**
     * {@value #LOCALS} words of per-thread scratch for the structure operation in progress (a
     * search window: predecessor, current, successor), so that operations can return several
     * values without allocating. Contents are not preserved across operations.
     */
    public final long[] locals() {
        return locals;
    }

    /** Ends the section if this is the outermost close. */
    @Override
    public final void close() {
        checkOwner();
        final int depth = nesting;
        if (depth <= 0) {
            throw new IllegalStateException("guard closed more often than pinned");
        }
        if (depth > 1) {
            nesting = depth - 1;
            return;
        }
        try {
            exit();
        } finally {
            NESTING.setRelease(this, 0); // (C7): the section's accesses happen-before a closer's (C6)
        }
    }

    /** The nesting depth: 0 when the thread is not pinned. */
    public final int depth() {
        return nesting;
    }

    /** Outermost pin: announce the section (called with nesting already 1). */
    abstract void enter();

    /** Outermost close: leave the section. */
    abstract void exit();

    /**
     * Checks a slot index and that the section is open; returns the region offset of the slot in
     * the current section's window (depth d uses slot words (d - 1) * slots .. d * slots - 1).
     */
    final long slotAddress(final int slot) {
        if (slot < 0 || slot >= domain.slots) {
            throw new IndexOutOfBoundsException(String.format(Locale.ROOT,
                    "slot %d out of range [0, %d): the domain was built with slots(%d)", slot, domain.slots, domain.slots));
        }
        checkPinned();
        return row + ReclaimDomain.HAZARDS + ((long) (nesting - 1) * domain.slots + slot) * Long.BYTES;
    }

    final void checkPinned() {
        if (nesting <= 0) {
            throw new IllegalStateException("guard used outside its pinned section (after its outermost close)");
        }
        checkOwner();
    }

    final void checkOwner() {
        if (domain.debug && Thread.currentThread() != owner) {
            throw new IllegalStateException("guard of thread '" + owner.getName() + "' used by thread '"
                    + Thread.currentThread().getName() + "'");
        }
    }

    /**
     * Counts a retire and checks the record's identity (its trailer moves from live to retired:
     * see {@link ReclaimDomain#TRAILER_BYTES}) and, in debug mode, more; every scheme's
     * {@link #retire} calls it first.
     */
    final void noteRetire(final long ptr) {
        checkPinned();
        domain.transition(ptr, ReclaimDomain.LIVE, domain.tag | ReclaimDomain.RETIRED, "retire");
        if (domain.debug) {
            domain.debugRetire(ptr);
        }
        RETIRED.setOpaque(this, (long) RETIRED.getOpaque(this) + 1);
    }

    /** Records in {@code safe} can no longer be reached: free them, now or amortized. */
    final void release(final BlockBag safe) {
        if (safe.isEmpty()) {
            return;
        }
        final ReclamationEvent event = new ReclamationEvent(); // JFR; no clock read unless recorded
        final boolean timed = event.isEnabled();
        if (timed) {
            event.begin();
        }
        final long n = safe.size();
        if (domain.amortized) {
            safe.moveAllTo(freeable);
            commit(event, timed, n, true);
            final long excess = freeable.size() - domain.backlogLimit;
            if (excess > 0) {
                freeFromBacklog(excess); // the backlog's bound: see Builder.backlogLimit
            }
            return;
        }
        if (domain.debug) {
            domain.debugFreeing(safe);
        }
        domain.pool.freeAll(pool, blocks, safe, scratch);
        FREED.setOpaque(this, (long) FREED.getOpaque(this) + n);
        commit(event, timed, n, false);
    }

    /** Commits a reclamation event if a recording enabled it when the batch began and still does. */
    private void commit(final ReclamationEvent event, final boolean timed, final long records,
                        final boolean deferred) {
        if (timed && event.shouldCommit()) {
            event.scheme = domain.scheme.id();
            event.records = records;
            event.deferred = deferred;
            event.commit();
        }
    }

    /**
     * Amortized free (Token-EBR paper §3.3): frees up to {@link #freesPerPin} records from the
     * freeable list. Called at the start of an outermost pin, before the thread announces itself,
     * so that freeing never delays other threads' epoch advance.
     */
    final void freeSome() {
        if (!freeable.isEmpty()) {
            freeFromBacklog(freesPerPin);
        }
    }

    /** Frees up to {@code n} records from the freeable list. */
    private void freeFromBacklog(final long n) {
        final BlockBag list = freeable;
        long done = 0;
        for (long i = 0; i < n; i++) {
            final long ptr = list.pop();
            if (ptr == 0) {
                break;
            }
            if (domain.debug) {
                domain.debugFreeing(ptr);
            }
            domain.pool.free(pool, blocks, ptr, scratch);
            done++;
        }
        FREED.setOpaque(this, (long) FREED.getOpaque(this) + done);
    }

    /**
     * Adaptive amortized free (the artifact's DEAMORTIZE_ADAPTIVELY): called when a new safe batch
     * arrives; one more free per pin while a block's worth is left over, one fewer when nothing is.
     */
    final void adaptFreesPerPin() {
        if (!domain.adaptive) {
            return;
        }
        final long left = freeable.size();
        if (left >= BlockLayout.CAPACITY) {
            freesPerPin++;
        } else if (left == 0 && freesPerPin > 1) {
            freesPerPin--;
        }
    }

    /** Frees the whole freeable list now (flush). */
    final void freeAllFreeable() {
        final long n = freeable.size();
        if (n == 0) {
            return;
        }
        final ReclamationEvent event = new ReclamationEvent();
        final boolean timed = event.isEnabled();
        if (timed) {
            event.begin();
        }
        if (domain.debug) {
            domain.debugFreeing(freeable);
        }
        domain.pool.freeAll(pool, blocks, freeable, scratch);
        FREED.setOpaque(this, (long) FREED.getOpaque(this) + n);
        commit(event, timed, n, false);
    }

    long retiredCount() {
        return (long) RETIRED.getOpaque(this);
    }

    long freedCount() {
        return (long) FREED.getOpaque(this);
    }

    /** Clears a slot word (hazard or announcement) with a release store. */
    static void clear(final long address) {
        Words.sr(address, 0L);
    }
}
