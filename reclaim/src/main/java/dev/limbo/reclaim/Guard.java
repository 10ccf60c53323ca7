package dev.limbo.reclaim;

import dev.limbo.allocator.internal.EventGate;
import dev.limbo.core.Words;
import dev.limbo.reclaim.internal.BlockBag;
import dev.limbo.reclaim.internal.BlockLayout;
import dev.limbo.reclaim.internal.BlockSource;
import dev.limbo.reclaim.internal.ReclamationEvent;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;

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
 *
 * <p>Capabilities: a structure asks the domain once, when it is built, what its scheme needs
 * ({@link ReclaimDomain#has}, {@link Capability}), and never tests which scheme it has. With
 * {@link Capability#PROTECTION_NEEDS_VALIDATION}, a protection keeps a node safe only if the node
 * was still reachable when the protection was published, and the structure must prove that after
 * protecting (see the capability).
 *
 * <p>Neutralization (DEBRA+, NBR, NBR+; the JVM's cooperative form of their signals). An operation
 * has read phases and write phases. A read phase only reads shared memory, and takes every
 * pointer it follows from {@link #protect} or {@link #protectIfEqual}; a reclaimer may
 * neutralize the thread at any time during it, and the thread learns of it at its next poll:
 * {@code protect}, {@code protectIfEqual}, {@link #poll} or {@link #beginWrite} throws the
 * preallocated {@link Restart}, and the records that the read phase reached may already be freed.
 * A protect polls after its load, so the word it returns was read before any neutralization
 * that could free the record it came from; a plain read of a node's other fields (a key, a
 * value) is confirmed only by the next poll, and may decide an answer or a write only after it.
 * A structure therefore:
 * <ol>
 *   <li>runs each read phase in a loop that catches {@link Restart} and starts the phase over
 *       from a root of the structure (head, root, sentinels), in the same section;</li>
 *   <li>before writing shared memory (a CAS, a store to a published node, a retire), reserves
 *       every node the write phase will touch with {@link #reserve} and calls {@link #beginWrite},
 *       which throws {@link Restart} if the read phase was neutralized; from there to
 *       {@link #endWrite} the thread is not neutralized (a mark waits for the next poll after
 *       {@code endWrite}), and the reserved nodes stay allocated;</li>
 *   <li>confirms a result computed from reads alone (a {@code get}) with {@link #poll} after its
 *       last read, before returning it;</li>
 *   <li>after a nested section (a structure operation called inside its own section), polls
 *       before using a pointer read before it: a restart inside the nested section also restarts
 *       every enclosing depth at its next poll.</li>
 * </ol>
 * Every read-phase traversal step protects, so no read phase runs unbounded without a poll. No
 * scheme frees records inside a read phase (amortized free runs in {@code pin()}, before the
 * section's first read), so a restart never interrupts a free. For schemes that do not
 * neutralize, the polls are a never-taken branch, {@code reserve} and {@code endWrite} do
 * nothing and {@code beginWrite} never throws; {@link ReclaimDomain.Builder#restartInjection}
 * makes any domain throw {@link Restart} at random polls, to test a structure's restart paths.
 *
 * <p>Counted links (LFRC and other counting schemes): a structure writes every link of a node
 * through {@link #store}, {@link #cas} and {@link #initLink}, and declares where its nodes' links
 * are with {@link ReclaimDomain#declareLinks} (the destructor hook: when a counted node's count
 * reaches zero, the scheme releases the targets of those links). For the other schemes these
 * calls are exactly the plain store, release store and CAS of {@link Words}.
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
    /** {@link #neutralized}: (R2) the reclaimer's mark and the owner's poll (R3); see {@link #beginWrite}. */
    private static final VarHandle NEUTRALIZED;
    private static final VarHandle RESTARTS;

    static {
        try {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            NESTING = lookup.findVarHandle(Guard.class, "nesting", int.class).withInvokeExactBehavior();
            RETIRED = lookup.findVarHandle(Guard.class, "retired", long.class).withInvokeExactBehavior();
            FREED = lookup.findVarHandle(Guard.class, "freed", long.class).withInvokeExactBehavior();
            NEUTRALIZED = lookup.findVarHandle(Guard.class, "neutralized", int.class).withInvokeExactBehavior();
            RESTARTS = lookup.findVarHandle(Guard.class, "restarts", long.class).withInvokeExactBehavior();
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
    /**
     * Whether protect, poll and beginWrite poll for neutralization: the scheme neutralizes, or the
     * domain injects restarts. False for every other scheme, so that polling costs a never-taken branch.
     */
    final boolean polls;
    /** Bit d - 1: the section at depth d must restart its read phase at its next poll (a deeper one restarted). */
    private long pendingRestarts;
    /** Bit d - 1: the section at depth d is in a write phase (between beginWrite and endWrite). */
    private long writing;
    /**
     * A restart cleared the mark while an enclosing depth was in a write phase: the domain's count
     * of marks ({@link ReclaimDomain#anyMarked}) keeps this thread until that write phase ends,
     * since its reserved records may still be in use.
     */
    private boolean markOwed;
    /** Restart injection: polls left until the next injected restart. */
    private int injectCountdown;
    /** 1 while a reclaimer's neutralization is pending; set by {@link ReclaimDomain#neutralize}. */
    @SuppressWarnings("unused") // accessed through NEUTRALIZED
    private volatile int neutralized;
    @SuppressWarnings("unused") // accessed through RESTARTS
    private long restarts;
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
        this.polls = domain.polls;
        this.injectCountdown = domain.restartOneIn;
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
     * A poll point of the read phase: throws {@link Restart} if the thread was neutralized since
     * its read phase began (or a deeper section restarted), so that a result computed from what
     * the phase read is used only if those reads were safe. Does nothing in a write phase, and
     * nothing for schemes that do not neutralize.
     *
     * @throws Restart if the read phase must start over
     */
    public final void poll() {
        if (polls) {
            pollNow();
        }
    }

    /**
     * Reserves the record at or around {@code ptr} (marks ignored; an address inside a record, such
     * as a link's, reserves the record) in {@code slot} of the current window for the write phase
     * that follows: a neutralizing reclaimer does not free a reserved record (NBR's reservations).
     * An address outside every record (a structure's head word) reserves nothing and is harmless. Call it for every node the write phase touches, then {@link #beginWrite}.
     * For schemes whose protections already cover the write phase, it does nothing.
     */
    public final void reserve(final int slot, final long ptr) {
        if (polls) {
            Words.sr(reservationAddress(slot), ptr & ~MARK_BITS); // (R1)
        }
    }

    /**
     * Ends the read phase and begins a write phase: throws {@link Restart} if the thread was
     * neutralized meanwhile (nothing has been written; start the read phase over). Once it
     * returns, the reserved records stay allocated, and the thread is not neutralized, until
     * {@link #endWrite}.
     *
     * <pre>{@code
     * Memory ordering (the store-buffering pair of a victim and its neutralizer):
     *  victim:      (R1) release stores of its reservations; (R4) full fence; (R3) volatile load of
     *               its mark.
     *  neutralizer: (R2) volatile store of the victim's mark (a full fence); (R5) acquire loads of
     *               the reservations (ReclaimDomain#isReserved).
     *  Either the neutralizer sees the reservation, or the victim sees the mark and restarts.
     *  (R6) the domain's count of marks (ReclaimDomain#anyMarked): a neutralizer increments it before
     *  (R2); a cleared mark (restart, outermost pin, departure) is decremented after its clear, or,
     *  when a restart clears it inside an enclosing write phase, once that write phase ends.
     * }</pre>
     *
     * @throws Restart if the read phase must start over
     */
    public final void beginWrite() {
        if (polls) {
            VarHandle.fullFence(); // (R4)
            pollNow();
            writing |= 1L << (nesting - 1);
        }
    }

    /** Ends the write phase that {@link #beginWrite} began: a new read phase begins, and polls throw again. */
    public final void endWrite() {
        if (polls) {
            writing &= ~(1L << (nesting - 1));
            if (markOwed && writing == 0) {
                payMark();
            }
        }
    }

    /** The write phases that kept a cleared mark counted have ended: the domain's count drops it. */
    private void payMark() {
        markOwed = false;
        domain.unmarked();
    }

    /**
     * {@link #protect} for the schemes whose section protects every record it reaches (none, the
     * epoch schemes, Token-EBR), and for nbr, whose read phases neutralization protects: checks the slot, acquire-loads the word (the scheme's numbered
     * protect load, which pairs with the store or CAS that published the record), then polls, which
     * confirms the word.
     */
    final long sectionProtect(final int slot, final long address) {
        slotAddress(slot);
        final long word = Words.la(address);
        if (polls) {
            pollNow(); // (R3): confirms the word
        }
        return word;
    }

    /** {@link #protectIfEqual} as {@link #sectionProtect} does {@link #protect}. */
    final boolean sectionProtectIfEqual(final int slot, final long address, final long expected) {
        slotAddress(slot);
        final boolean equal = Words.la(address) == expected;
        if (polls) {
            pollNow(); // (R3): confirms the word
        }
        return equal;
    }

    /** {@link #poll} for a polling guard. */
    final void pollNow() {
        checkPinned();
        VarHandle.acquireFence(); // the reads that the poll confirms come before its read of the mark
        final long depth = 1L << (nesting - 1);
        if ((writing & depth) == 0 && ((int) NEUTRALIZED.getVolatile(this) != 0 // (R3)
                || (pendingRestarts & depth) != 0 || injectNow())) {
            restart();
        }
    }

    /** Restart injection: whether this poll restarts (about one poll in the builder's n). */
    private boolean injectNow() {
        if (domain.restartOneIn == 0 || --injectCountdown > 0) {
            return false;
        }
        injectCountdown = 1 + ThreadLocalRandom.current().nextInt(2 * domain.restartOneIn);
        return true;
    }

    /** Clears the mark, makes every enclosing depth restart at its next poll, and throws. */
    private void restart() {
        // a full fence with the clear: no read of the restarted phase may pass it, or a mark set
        // meanwhile could be erased after the read (and the read's record freed unnoticed)
        if ((int) NEUTRALIZED.getAndSet(this, 0) != 0) {
            if (writing == 0) {
                domain.unmarked();
            } else {
                markOwed = true; // an enclosing write phase still uses its reserved records
            }
        }
        final long depth = 1L << (nesting - 1);
        pendingRestarts = (pendingRestarts | (depth - 1)) & ~depth; // depths 1 .. nesting - 1
        RESTARTS.setOpaque(this, (long) RESTARTS.getOpaque(this) + 1);
        restarting();
        throw Restart.INSTANCE;
    }

    /**
     * Scheme hook: the thread is about to restart its read phase after a neutralization, an
     * injected restart or a deeper section's restart (a scheme that neutralizes re-announces here
     * what its neutralizer overrode). The mark is clear by then.
     */
    void restarting() {
    }

    /**
     * (R2): marks this thread neutralized (by a reclaimer), with a getAndSet (a full fence);
     * returns whether it was not marked already.
     */
    final boolean neutralize() {
        return (int) NEUTRALIZED.getAndSet(this, 1) == 0; // (R2)
    }

    /** Clears the mark (departure, or a neutralizer that lost its victim); returns whether it was set. */
    final boolean unmark() {
        return (int) NEUTRALIZED.getAndSet(this, 0) != 0;
    }

    /** Whether a restart left a cleared mark counted ({@link #markOwed}); for departure. */
    final boolean owesMark() {
        return markOwed;
    }

    /**
     * Outermost pin of a polling guard: a mark set before the section read anything is moot. The
     * clear is a getAndSet (a full fence), so that no read of the section passes it.
     */
    final void clearNeutralization() {
        if ((int) NEUTRALIZED.getVolatile(this) != 0 && unmark()) {
            domain.unmarked();
        }
    }

    /** Region offset of reservation {@code slot} in the current window. */
    private long reservationAddress(final int slot) {
        return slotAddress(slot) + (long) domain.slotWords * Long.BYTES;
    }

    /**
     * A record of the domain's {@linkplain ReclaimDomain#recordBytes() size}, from the pool; only
     * inside the section.
     */
    public final long allocate() {
        checkPinned();
        allocated();
        return domain.markLive(domain.pool.allocate(pool));
    }

    /** Scheme hook: the thread allocates a record (rcu's epoch clock counts allocations). */
    void allocated() {
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
        if (polls) {
            endSection(depth);
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

    /** A polling guard's section at {@code depth} ends: its restart and write state, and its reservations. */
    private void endSection(final int depth) {
        final long outer = (1L << (depth - 1)) - 1;
        pendingRestarts &= outer;
        writing &= outer;
        if (markOwed && writing == 0) {
            payMark();
        }
        final long base = row + ReclaimDomain.HAZARDS + ((long) domain.slotWords + (long) (depth - 1) * domain.slots) * Long.BYTES;
        for (int s = 0; s < domain.slots; s++) {
            clear(base + (long) s * Long.BYTES);
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

    /**
     * Records in {@code safe} can no longer be reached: free them, now or amortized
     * ({@link #dispose}). A scheme whose threads may still touch reserved records after their
     * grace period (debra+) screens them first.
     */
    void release(final BlockBag safe) {
        dispose(safe);
    }

    /** Frees the records of {@code safe}, now or amortized; {@code safe} becomes empty. */
    final void dispose(final BlockBag safe) {
        if (safe.isEmpty()) {
            return;
        }
        // JFR: no event object unless a recording may want it
        final ReclamationEvent event = EventGate.JFR && ReclamationEvent.GATE.isEnabled() ? new ReclamationEvent() : null;
        final boolean timed = event != null;
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
    final void commit(final ReclamationEvent event, final boolean timed, final long records,
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
        freeFrom(freeable, n);
    }

    /**
     * Frees up to {@code n} records of {@code list}, whose records are all safe (the freeable list,
     * or token-periodic's previous bag, freed a step at a time).
     */
    final void freeFrom(final BlockBag list, final long n) {
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
        adaptFreesPerPin(freeable.size());
    }

    /** {@link #adaptFreesPerPin()} for a batch that arrived when {@code left} records were left over. */
    final void adaptFreesPerPin(final long left) {
        if (!domain.adaptive) {
            return;
        }
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
        // JFR: no event object unless a recording may want it
        final ReclamationEvent event = EventGate.JFR && ReclamationEvent.GATE.isEnabled() ? new ReclamationEvent() : null;
        final boolean timed = event != null;
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

    long restartCount() {
        return (long) RESTARTS.getOpaque(this);
    }

    long retiredCount() {
        return (long) RETIRED.getOpaque(this);
    }

    long freedCount() {
        return (long) FREED.getOpaque(this);
    }

    /**
     * Release-clears this thread's slot words whose bits are set in {@code used} (bit w: slot word
     * w of its row, window and slot): the end of a section of a slot-based scheme.
     */
    final void clearSlots(final long used) {
        long u = used;
        while (u != 0) {
            final int s = Long.numberOfTrailingZeros(u);
            u &= u - 1;
            clear(row + ReclaimDomain.HAZARDS + (long) s * Long.BYTES);
        }
    }

    /** Clears a slot word (hazard or announcement) with a release store. */
    static void clear(final long address) {
        Words.sr(address, 0L);
    }
}
