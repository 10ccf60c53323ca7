package dev.limbo.reclaim;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.allocator.internal.EventGate;
import dev.limbo.core.Participants;
import dev.limbo.core.PerThreadSlots;
import dev.limbo.core.Words;
import dev.limbo.core.internal.Native;
import dev.limbo.reclaim.internal.BlockBag;
import dev.limbo.reclaim.internal.BlockLayout;
import dev.limbo.reclaim.internal.BlockSource;
import dev.limbo.reclaim.internal.EpochAdvanceEvent;
import dev.limbo.reclaim.internal.FenceFallbackEvent;
import dev.limbo.reclaim.internal.HazardScanEvent;
import dev.limbo.reclaim.internal.NeutralizationEvent;
import dev.limbo.reclaim.internal.ReclamationEvent;
import dev.limbo.reclaim.internal.RecordPool;
import dev.limbo.reclaim.internal.TokenPassEvent;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A reclamation domain: the memory-safety context of one data structure, or of several that share
 * it. The structure allocates its nodes through the domain, reads shared pointers through
 * {@link Guard#protect}, and hands unlinked nodes to {@link Guard#retire}; the scheme decides when
 * they are freed. A structure never knows which scheme it has (DEBRA's Record Manager):
 *
 * <pre>{@code
 * ReclaimDomain domain = ReclaimDomain.builder(Scheme.DEBRA)   // the one line that picks the scheme
 *         .allocator(allocator).recordBytes(32).slots(3).build();
 * }</pre>
 *
 * <p>Layers: reclaimer (the scheme) → amortized free (optional) → pool → allocator. The pool is
 * DEBRA's: per-thread bags of 256-pointer blocks in front of a shared lock-free stack of blocks,
 * in front of the {@link LimboAllocator}; beyond a bounded cache, freed records go back to the
 * allocator in batches.
 *
 * <p>Threads: each thread gets a {@link Guard} per domain, indexed by its
 * {@linkplain Participants participant id} and found on a pin through a small cache keyed by the
 * thread's id (no {@link ThreadLocal} of the domain's own, so no live thread keeps a closed domain
 * reachable). When a thread dies or closes its id,
 * its retired nodes are handed to the domain (as "orphans" that wait for their grace period or the
 * next scan) and its pooled records to the shared pool: nothing leaks across thread churn. A
 * thread may close its id only outside its sections: {@link Participants#close()} while pinned
 * throws {@link IllegalStateException}.
 *
 * <p>Escape hatch: {@link #allocateExclusive} and {@link #freeExclusive} bypass the scheme, for
 * single-threaded construction and teardown, when no other thread can reach the records.
 *
 * <p>{@link #close()} frees everything the domain holds (retired nodes, pools, tables); it must
 * run when no thread uses the domain any more. Later {@link #pin()} calls throw.
 */
public abstract class ReclaimDomain implements AutoCloseable {

    /**
     * Bytes of the domain-owned trailer word after each record: the record's identity and state,
     * {@code tag | LIVE} from allocation to retire and {@code tag | RETIRED} after, where the tag is
     * the domain's own random 62-bit value. {@link Guard#retire} moves it from live to retired by
     * CAS, so a record retired twice, a record of another domain, of another allocator, or a
     * pointer never allocated is refused with a clear exception before the scheme or the pool sees
     * it. A trailer rather than a header keeps record pointers equal to allocator blocks (same
     * alignment, no conversion between the pool and the allocator). Limit: a stale retire of a
     * record already freed and handed out again by this domain is a valid retire of the new record,
     * and cannot be told apart.
     */
    public static final long TRAILER_BYTES = Long.BYTES;
    static final long LIVE = 1;
    static final long RETIRED = 2;

    /**
     * Offset of the first hazard slot in a thread's slot row: {@code slotWords} hazard words, then
     * as many reservation words ({@link Guard#reserve}), window by window.
     */
    static final long HAZARDS = 0;
    /** The most slots a guard may have. */
    public static final int MAX_SLOTS = 15;
    /** System property: the default of {@link Builder#asymmetricFence} ({@code true} or {@code false}). */
    public static final String ASYMMETRIC_FENCE_PROPERTY = "limbo.reclaim.asymmetricFence";

    static {
        // The first JFR event class a JVM initializes sets up JFR's event machinery (70-120 ms here,
        // recording or not). Initialize the schemes' events now, so that this does not happen in
        // the first pinned section that advances an epoch, scans or frees, where it would hold
        // every other thread's reclamation back for as long. A runtime without JFR has none.
        if (EventGate.JFR) {
            new EpochAdvanceEvent();
            new FenceFallbackEvent();
            new ReclamationEvent();
            new HazardScanEvent();
            new NeutralizationEvent();
            new TokenPassEvent();
        }
    }

    final Scheme scheme;
    final LimboAllocator allocator;
    final long recordBytes;
    /** The domain's tag in the record trailers: random, low two bits clear (see {@link #TRAILER_BYTES}). */
    final long tag = ThreadLocalRandom.current().nextLong() & ~3L;
    final int slots;
    /** The deepest nesting of sections; each depth has its own window of {@link #slots} slot words. */
    final int maxNesting;
    /** Slot words per thread: {@code slots * maxNesting}. */
    final int slotWords;
    final boolean debug;
    /**
     * Whether guards poll for neutralization: the domain has {@link Capability#NEUTRALIZATION} (its
     * scheme neutralizes, or the builder added it), or restart injection is on.
     */
    final boolean polls;
    /** Restart injection: about one poll in this many throws {@link Restart}; 0 when off. */
    final int restartOneIn;
    /**
     * Scheme-owned words per record ({@link #headerWords}): a birth era, a retire era, a reference
     * count. They lie after the record's {@link #recordBytes}, before the trailer word.
     */
    final int headerWords;
    /** Offset of the trailer word from a record's start: {@code recordBytes + 8 * headerWords}. */
    final long trailerOffset;
    /** The links of the structure's nodes, as offsets in a record ({@link #declareLinks}); empty until declared. */
    private volatile long[] links;
    final boolean amortized;
    /**
     * Type-stable memory (lfrc): no record goes back to the allocator while the domain lives; the
     * pool keeps every freed record (per-thread bags, then the shared stack, unbounded) and hands
     * out fresh records zeroed, and {@link #close()} frees them.
     */
    final boolean typeStable;
    final boolean adaptive;
    final int freesPerPin;
    /** Amortized free: the most safe records left waiting; beyond it, the excess is freed at once. */
    final long backlogLimit;
    final int minCalls;
    final int scanThreshold;
    /** DEBRA+: the suspect threshold c, in records of the scanner's current limbo bag. */
    final int suspectThreshold;
    /** Epoch schemes: whether pins announce without a fence, scanners issuing membarrier instead. */
    final boolean asymmetricFence;
    /** Asymmetric mode: the least time between two heavy barriers of this domain. */
    final long heavyBarrierIntervalNanos;
    final RecordPool pool;
    final PerThreadSlots slotTable;
    private final long slotMemory;
    /**
     * Each thread's guard, by participant id: a pin finds its guard here, never through a
     * {@link ThreadLocal} of its own, so that no live thread keeps a closed domain reachable.
     */
    private final Guard[] guards = new Guard[Participants.CAPACITY];
    /**
     * A cache of guards by thread id modulo its length (a power of two): read and written with
     * plain accesses by the threads themselves, racily. A thread trusts an entry only if it is its
     * own guard ({@link Guard#owner}, a final field, so a racily read guard is never seen half
     * built) and not released: thread ids are never reused, and a thread that releases its
     * participant id runs the release hook itself (so it sees released), while a thread that died
     * pins no more. A lost or overwritten entry only costs the slow path.
     */
    private final Guard[] byThread = new Guard[Math.min(1 << 12, Integer.highestOneBit(Participants.CAPACITY * 2 - 1))];
    /**
     * {@link #guards}' elements. A thread reads its own element with a plain load (pin's lookup):
     * it wrote the element itself (register), or a release hook wrote null for the id's previous
     * holder, which happens-before the id's next claim (Participants). Other threads' elements are
     * read with acquire loads and written with release stores or getAndSet.
     */
    private static final VarHandle GUARDS = MethodHandles.arrayElementVarHandle(Guard[].class).withInvokeExactBehavior();
    /** Retired nodes of departed threads: an epoch stamp (or 0) and a bag. */
    final ConcurrentLinkedQueue<Orphan> orphans = new ConcurrentLinkedQueue<>();
    final AtomicLong scans = new AtomicLong();
    private final AtomicLong departedRetired = new AtomicLong();
    private final AtomicLong departedFreed = new AtomicLong();
    private final AtomicLong departedRestarts = new AtomicLong();
    private final AtomicLong neutralizations = new AtomicLong();
    /**
     * (R6) Marks set now, plus marks that restarts cleared inside an enclosing write phase
     * (Guard#markOwed): at every point at least the number of guards whose mark is set. A
     * neutralizer counts before it marks, a cleared mark is dropped after it is cleared (or once
     * its write phases end), all with sequentially consistent atomics. See {@link #anyMarked}.
     */
    private final AtomicInteger marks = new AtomicInteger();
    private final ConcurrentHashMap<Long, Boolean> debugRetired;
    private final AutoCloseable releaseHook;
    private final AutoCloseable closeCheck;
    private final long closeTimeoutNanos;
    /** The scheme's capabilities, plus any the builder added. */
    private final Set<Capability> capabilities;
    /** Serializes close() calls; {@code this} stays free for the release hook while close() waits. */
    private final Object closeLock = new Object();
    /** (C3)/(C4): set when close() begins; pins check it after raising their nesting (C1). */
    private volatile boolean closed;

    /** Retired records of a departed thread, safe once the domain passes {@code stamp}. */
    record Orphan(long stamp, BlockBag bag) {
    }

    ReclaimDomain(final Builder b) {
        this(b, 0);
    }

    /** A domain whose scheme reserves {@code headerWords} words of its own per record. */
    ReclaimDomain(final Builder b, final int headerWords) {
        this(b, headerWords, false);
    }

    /**
     * A domain whose scheme reserves {@code headerWords} words per record and, if
     * {@code typeStable}, needs type-stable memory ({@link #typeStable}): its pool is then never
     * bypassed (debug mode included) and never returns records to the allocator before close.
     */
    ReclaimDomain(final Builder b, final int headerWords, final boolean typeStable) {
        this.scheme = b.scheme;
        this.allocator = b.allocator;
        this.recordBytes = b.recordBytes;
        this.slots = b.slots;
        this.maxNesting = b.maxNesting;
        this.slotWords = b.slots * b.maxNesting;
        this.debug = b.debug;
        this.restartOneIn = b.restartOneIn;
        this.headerWords = headerWords;
        this.trailerOffset = b.recordBytes + (long) headerWords * Long.BYTES;
        this.amortized = b.scheme.amortized();
        this.adaptive = b.adaptive;
        this.freesPerPin = b.freesPerPin;
        this.backlogLimit = b.backlogLimit;
        this.minCalls = b.minCalls;
        this.scanThreshold = b.scanThreshold;
        this.suspectThreshold = b.suspectThreshold;
        this.asymmetricFence = b.asymmetricFence && Native.MEMBARRIER;
        this.heavyBarrierIntervalNanos = b.heavyBarrierIntervalNanos;
        this.typeStable = typeStable;
        if (typeStable) {
            this.pool = new RecordPool(allocator, trailerOffset + TRAILER_BYTES,
                    b.poolRecords == 0 ? BlockLayout.CAPACITY : b.poolRecords, Integer.MAX_VALUE, true);
        } else {
            final long localRecords = b.debug || b.bypassPool ? 0 : b.poolRecords;
            this.pool = new RecordPool(allocator, trailerOffset + TRAILER_BYTES, localRecords,
                    localRecords == 0 ? 0 : b.sharedBlocks);
        }
        final MemoryLayout[] row = {
                MemoryLayout.sequenceLayout(slotWords, ValueLayout.JAVA_LONG).withName("hazards"),
                MemoryLayout.sequenceLayout(slotWords, ValueLayout.JAVA_LONG).withName("reservations")};
        this.slotMemory = allocator.allocateZeroed(PerThreadSlots.bytesFor(row));
        this.slotTable = new PerThreadSlots(slotMemory, row);
        this.debugRetired = debug ? new ConcurrentHashMap<>() : null;
        this.releaseHook = Participants.onRelease(this::departed);
        this.closeCheck = Participants.onClose(this::checkNotPinned);
        this.closeTimeoutNanos = b.closeTimeoutNanos;
        final EnumSet<Capability> all = EnumSet.copyOf(b.capabilities);
        all.addAll(b.scheme.capabilities());
        this.capabilities = Collections.unmodifiableSet(all);
        this.polls = b.restartOneIn > 0 || all.contains(Capability.NEUTRALIZATION);
    }

    /** A builder for a domain of {@code scheme}. */
    public static Builder builder(final Scheme scheme) {
        return new Builder(scheme);
    }

    /** A builder for the scheme with id {@code schemeId} ({@code none}, {@code ebr}, {@code debra}, ...). */
    public static Builder builder(final String schemeId) {
        return new Builder(Scheme.of(schemeId));
    }

    // ---------------------------------------------------------------- operations

    /**
     * Enters a section (re-entrant) and returns the calling thread's guard; close it with
     * try-with-resources. Allocation-free after the thread's first call.
     *
     * <p>A pin that fails (the domain is closed, or the scheme's entry throws, for example an
     * {@code OffHeapOutOfMemoryError} from the frees it does on the way in) leaves the thread as it
     * was: not pinned, not announced, no slot held.
     *
     * @throws IllegalStateException if the domain is closed or closing
     */
    public final Guard pin() {
        final Guard g = currentGuard();
        final int depth = g.nesting;
        if (depth == 0) {
            if (g.offline) {
                throw new IllegalStateException("pin() while offline: call online() first");
            }
            enterOutermost(g);
        } else {
            g.checkOwner();
            if (closed) {
                throw closedException();
            }
            if (depth >= maxNesting) {
                throw new IllegalStateException(String.format(Locale.ROOT,
                        "sections of reclamation domain %s nested deeper than %d (builder.maxNesting)", this, maxNesting));
            }
            g.nesting = depth + 1;
        }
        return g;
    }

    /**
     * The outermost pin: the close handshake, then the scheme's entry.
     *
     * <pre>{@code
     * Close handshake (the store-buffering pair of a pin and close()):
     *  (C1) opaque store nesting = 1; (C2) StoreLoad: a full fence where the kernel lacks
     *       membarrier, else program order only (VarHandle.acquireFence, which HotSpot's compilers
     *       do not move memory accesses across; the same reliance as EpochDomain's (3)), paired
     *       with close()'s heavy barrier (C5); (C3) volatile load of closed.
     *  close(): (C4) volatile store closed = true; (C5) membarrier (or nothing: (C4) is a full
     *       fence); (C6) acquire loads of every guard's nesting until all are 0.
     *  Either the closer's (C6) sees nesting = 1 and waits, or the pin's (C3) sees closed and the
     *  pin backs out: both cannot miss. The guard's outermost close ends with (C7), a release store
     *  of nesting = 0 after its scheme exit, so every access of the section happens-before a
     *  closer that reads 0 and frees the domain's memory.
     * }</pre>
     */
    private void enterOutermost(final Guard g) {
        Guard.NESTING.setOpaque(g, 1); // (C1)
        if (Native.MEMBARRIER) {
            VarHandle.acquireFence(); // (C2): a compiler barrier; (C5) does the rest
        } else {
            VarHandle.fullFence(); // (C2)
        }
        if (closed) { // (C3)
            Guard.NESTING.setRelease(g, 0); // (C7)
            throw closedException();
        }
        if (g.polls) {
            g.clearNeutralization();
        }
        try {
            g.enter();
        } catch (final Throwable t) {
            try {
                g.exit(); // undo a partial entry: quiescent announcement, no hazard published
            } catch (final Throwable undo) {
                t.addSuppressed(undo);
            }
            Guard.NESTING.setRelease(g, 0); // (C7)
            throw t;
        }
    }

    /**
     * Announces that the calling thread is in a quiescent state: it holds no reference to any
     * node of the domain. Quiescent-state-based schemes (QSBR) count on it; the schemes that
     * track sections ({@code pin()}) are quiescent between sections already, so for them it only
     * checks that the thread is not pinned.
     *
     * @throws IllegalStateException if the calling thread is pinned, or the domain is closed
     */
    public final void quiescent() {
        quiescentState(outsideSections("quiescent()"));
    }

    /**
     * Takes the calling thread out of the scheme's view, for a stretch in which it will not touch
     * the domain (a blocking call, a long computation): no scheme waits for it meanwhile. Until
     * {@link #online()}, its pins throw {@link IllegalStateException}.
     *
     * @throws IllegalStateException if the calling thread is pinned or already offline, or the domain is closed
     */
    public final void offline() {
        final Guard g = outsideSections("offline()");
        if (g.offline) {
            throw new IllegalStateException("offline() twice: the thread is offline already");
        }
        g.offline = true;
        wentOffline(g);
    }

    /**
     * Brings the calling thread back after {@link #offline()}.
     *
     * @throws IllegalStateException if the calling thread is not offline, or the domain is closed
     */
    public final void online() {
        checkOpen();
        final Guard g = guards[Participants.current()];
        if (g == null || !g.offline) {
            throw new IllegalStateException("online() without offline(): the thread is online");
        }
        g.offline = false;
        cameOnline(g);
    }

    /** The calling thread's guard, after checking that the domain is open and the thread not pinned. */
    private Guard outsideSections(final String call) {
        checkOpen();
        final Guard g = currentGuard();
        if (g.nesting != 0) {
            throw new IllegalStateException(call + " inside a pinned section: close the guard first");
        }
        return g;
    }

    /**
     * Frees whatever is reclaimable now: adopts the leftovers of terminated threads, tries to end
     * grace periods (advancing the epoch while every thread is quiescent) or scans hazard
     * pointers, and frees the calling thread's safe records, amortized ones included. After every
     * thread has stopped using the domain (terminated, or called flush itself), a flush frees
     * every retired node (except with {@code none}).
     *
     * @throws IllegalStateException if the calling thread is pinned, or the domain is closed
     */
    public final void flush() {
        if (closed) {
            throw closedException();
        }
        final Guard g = currentGuard();
        if (g.nesting != 0) {
            throw new IllegalStateException("flush() inside a pinned section: close the guard first");
        }
        Participants.reapTerminated();
        Participants.awaitReleases(); // a dead thread's leftovers may still be on their way (Cleaner)
        flush(g);
        g.freeAllFreeable();
    }

    /** A snapshot of the counters. */
    public final ReclaimStats stats() {
        long retired = departedRetired.get();
        long freed = departedFreed.get();
        long restarts = departedRestarts.get();
        for (int i = 0; i < guards.length; i++) {
            final Guard g = guardOf(i);
            if (g != null) {
                retired += g.retiredCount();
                freed += g.freedCount();
                restarts += g.restartCount();
            }
        }
        return new ReclaimStats(scheme.id(), retired, freed, retired - freed, advances(), scans.get(),
                pool.sharedRecords(), fenceFallbacks(), restarts, neutralizations.get(), retries());
    }

    /** Allocates a record outside any section, bypassing the pool: construction only. */
    public final long allocateExclusive() {
        checkOpen();
        final long bytes = trailerOffset + TRAILER_BYTES;
        return markLive(typeStable ? allocator.allocateZeroed(bytes) : allocator.allocate(bytes));
    }

    /**
     * Frees a record at once, bypassing the scheme: only when no other thread can reach it (a
     * structure's teardown, or a node that was never published). Under a counting scheme
     * ({@link Capability#COUNTED_LINKS}) the record goes to the scheme's own free list, and the
     * references its links hold ({@link Guard#initLink}) are released.
     *
     * @throws IllegalStateException    if {@code ptr} was retired already
     * @throws IllegalArgumentException if {@code ptr} is not a live record of this domain (freed, of
     *                                  another domain or allocator, or never allocated)
     */
    public final void freeExclusive(final long ptr) {
        checkOpen();
        transition(ptr, LIVE, 0, "free");
        if (debug) {
            debugRetired.remove(ptr);
        }
        freeUnpublished(ptr);
    }

    /**
     * Scheme part of {@link #freeExclusive}: frees the live record {@code ptr}, which no other
     * thread can reach, at once (its trailer is cleared already). Straight to the allocator, except
     * for schemes with type-stable memory, which keep it and release what it links.
     */
    void freeUnpublished(final long ptr) {
        allocator.free(ptr);
    }

    /**
     * Writes a fresh record's trailer (live, of this domain) and lets the scheme initialize its
     * header words. Returns {@code ptr}.
     */
    final long markLive(final long ptr) {
        if (headerWords != 0) {
            initHeader(ptr + recordBytes);
        }
        Words.sp(ptr + trailerOffset, tag | LIVE);
        return ptr;
    }

    /**
     * Scheme hook: initializes the {@link #headerWords} words at {@code header} of a record being
     * handed out (by {@link Guard#allocate}, {@link #allocateExclusive} or from the pool), before
     * any structure sees it. Only schemes that reserve header words override it.
     */
    void initHeader(final long header) {
    }

    /** Region offset of header word {@code i} of record {@code ptr} (for the scheme). */
    final long header(final long ptr, final int i) {
        return ptr + recordBytes + (long) Objects.checkIndex(i, headerWords) * Long.BYTES;
    }

    /**
     * Moves {@code ptr}'s trailer from {@code tag | from} to {@code to} by CAS (two threads retiring
     * one record: exactly one wins), or throws saying what the record is instead.
     */
    final void transition(final long ptr, final long from, final long to, final String what) {
        if (ptr <= 0 || (ptr & Guard.MARK_BITS) != 0) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "cannot %s 0x%x: not a record pointer (null, negative or marked)", what, ptr));
        }
        final long trailer = ptr + trailerOffset;
        final long seen;
        try {
            if (Words.cas(trailer, tag | from, to)) {
                return;
            }
            seen = Words.lv(trailer);
        } catch (final IndexOutOfBoundsException outside) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "cannot %s 0x%x: it lies outside the off-heap region", what, ptr), outside);
        }
        if (seen == (tag | RETIRED)) {
            throw new IllegalStateException(String.format(Locale.ROOT,
                    "cannot %s 0x%x: it was retired already (a record is retired or freed exactly once)", what, ptr));
        }
        throw new IllegalArgumentException(String.format(Locale.ROOT,
                "cannot %s 0x%x: it is not a live record of reclamation domain %s (of another domain or "
                        + "allocator, already freed, or never allocated)", what, ptr, this));
    }

    /**
     * Declares where the structure's nodes keep their links: the offsets, within a record, of the
     * words that hold node pointers (marks allowed). This is the destructor hook of counting
     * schemes: when a counted record's count reaches zero, the scheme releases the targets of
     * these links; other schemes only keep the declaration. A structure declares its links once,
     * when it is built; structures sharing a domain must declare the same links. A structure
     * whose records have more than one layout (EllenBst's nodes and info records) declares an
     * empty set: a counting scheme cannot release its records' children and must refuse it, and
     * no structure with links can share its domain.
     *
     * @throws IllegalArgumentException if an offset is not 8-aligned or does not leave room for a
     *                                  word inside {@link #recordBytes()}
     * @throws IllegalStateException    if different links were declared already
     */
    public final void declareLinks(final long... offsets) {
        final long[] sorted = offsets.clone();
        Arrays.sort(sorted);
        for (final long offset : sorted) {
            if (offset < 0 || offset > recordBytes - Long.BYTES || (offset & (Long.BYTES - 1)) != 0) {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                        "link offset %d is not an 8-aligned word inside the domain's %d-byte records", offset, recordBytes));
            }
        }
        linksDeclared(sorted);
        synchronized (closeLock) {
            final long[] declared = links;
            if (declared != null && !Arrays.equals(declared, sorted)) {
                throw new IllegalStateException(String.format(Locale.ROOT,
                        "links %s declared on reclamation domain %s, which has links %s: structures sharing a "
                                + "domain must have the same node links", Arrays.toString(sorted), this,
                        Arrays.toString(declared)));
            }
            links = sorted;
        }
    }

    /**
     * Scheme hook of {@link #declareLinks}: checks the declared offsets ({@code sorted}); a
     * counting scheme refuses an empty set with {@link IllegalArgumentException}.
     */
    void linksDeclared(final long[] sorted) {
    }

    /**
     * The declared link offsets ({@link #declareLinks}), sorted; null if no structure declared
     * any yet, empty if a structure declared that its records have no countable links.
     */
    public final long[] links() {
        final long[] declared = links;
        return declared == null ? null : declared.clone();
    }

    /** {@link #links()} without the copy, for the schemes (never modified); null if none declared. */
    final long[] linkOffsets() {
        return links;
    }

    /**
     * Neutralizes the thread holding participant {@code id} (R2), if it uses this domain: its next
     * poll outside a write phase throws {@link Restart}. For schemes that neutralize (and tests);
     * counted in {@link ReclaimStats#neutralizations()}. Returns whether the thread has a guard here.
     */
    final boolean neutralize(final int id) {
        final Guard g = guardOf(id);
        if (g == null) {
            return false;
        }
        marks.incrementAndGet(); // (R6): before the mark, so that marks never counts fewer than are set
        if (!g.neutralize()) { // (R2)
            marks.decrementAndGet(); // it was marked already, and counted
        } else if (guardOf(id) != g && g.unmark()) {
            // the thread departed meanwhile, and its departure may have read the mark before it was set
            marks.decrementAndGet();
        }
        neutralizations.incrementAndGet();
        return true;
    }

    /** (R6): a guard's mark was cleared (or its owed count paid): the count of marks drops it. */
    final void unmarked() {
        marks.decrementAndGet();
    }

    /**
     * (R6) Whether some thread may be marked neutralized now (or still use the reservations of a
     * write phase that began before a restart cleared its mark). When not, no thread is between a
     * neutralization and its restart: each thread that a neutralizer counted as checked has since
     * restarted its read phase or ended its section, so it holds no record unlinked before its
     * neutralization, and no reservation needs to be screened (DebraPlus (P4)).
     */
    final boolean anyMarked() {
        return marks.get() > 0;
    }

    /**
     * Whether some thread reserves record {@code ptr} (R5), by its address or an address inside
     * it (a link's): after neutralizing every thread, a record that no reservation names is safe
     * from threads in their write phases, and threads in their read phases will restart.
     */
    final boolean isReserved(final long ptr) {
        final int n = Participants.highWater();
        for (int id = 0; id < n; id++) {
            final long base = slotTable.slot(id) + HAZARDS + (long) slotWords * Long.BYTES;
            for (int s = 0; s < slotWords; s++) {
                final long r = Words.la(base + (long) s * Long.BYTES); // (R5)
                if (r - ptr >= 0 && r - ptr < recordBytes) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * (R5) for a batch of records: copies every non-zero reservation of participants
     * {@code 0 .. n - 1} into {@code into} (which holds at least {@code n * slotWords} words) and
     * returns how many there are. A reclaimer that screens a batch against them reads every
     * reservation once per batch instead of once per record ({@link #isReserved}).
     */
    final int collectReservations(final long[] into, final int n) {
        int count = 0;
        for (int id = 0; id < n; id++) {
            final long base = slotTable.slot(id) + HAZARDS + (long) slotWords * Long.BYTES;
            for (int s = 0; s < slotWords; s++) {
                final long r = Words.la(base + (long) s * Long.BYTES); // (R5)
                if (r != 0) {
                    into[count++] = r;
                }
            }
        }
        return count;
    }

    /** The scheme. */
    public final Scheme scheme() {
        return scheme;
    }

    /** The size of the records the pool hands out. */
    public final long recordBytes() {
        return recordBytes;
    }

    /**
     * Whether the domain's scheme has {@code capability}: structures test this, once when they are
     * built, and never the scheme's identity.
     */
    public final boolean has(final Capability capability) {
        return capabilities.contains(capability);
    }

    /** The number of protection slots per guard. */
    public final int slots() {
        return slots;
    }

    /** The allocator the records come from. */
    public final LimboAllocator allocator() {
        return allocator;
    }

    /**
     * Checks that guards have at least {@code needed} slots; structures call it when they are
     * built over a domain.
     *
     * @throws IllegalArgumentException if they have fewer
     */
    public final void requireSlots(final int needed) {
        if (needed > slots) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "the structure needs %d protection slots per guard; the domain has %d (builder.slots(%d))",
                    needed, slots, needed));
        }
    }

    /** Whether {@link #close()} ran. */
    public final boolean isClosed() {
        return closed;
    }

    /**
     * Frees every record the domain holds: retired nodes of all threads (except with {@code none},
     * which never tracks them), pooled records, blocks and tables, back to the allocator. From the
     * moment it begins, every {@link #pin()} (nested or not) throws
     * {@link IllegalStateException}; it then waits, up to the builder's
     * {@linkplain Builder#closeTimeout close timeout}, for the sections in flight on other threads to
     * end. If they do not, it refuses: the domain stays open and usable. Every cleanup step runs
     * even when one fails; the failures are reported together. Idempotent.
     *
     * @throws IllegalStateException if the calling thread is pinned in this domain, if other
     *                               threads stayed pinned past the timeout (the domain stays open), or
     *                               if a cleanup step failed (the domain is closed; the first failure
     *                               is the cause, the others are suppressed)
     */
    @Override
    public final void close() {
        synchronized (closeLock) {
            if (closed) {
                return;
            }
            final Guard mine = guards[Participants.current()];
            if (mine != null && mine.nesting != 0) {
                throw new IllegalStateException(String.format(Locale.ROOT,
                        "close() inside a pinned section of reclamation domain %s (depth %d): close the guard first",
                        this, mine.nesting));
            }
            closed = true; // (C4)
            try {
                if (Native.MEMBARRIER) {
                    Native.membarrier(); // (C5)
                }
                awaitUnpinned();
            } catch (final RuntimeException refused) {
                closed = false;
                throw refused;
            }
            synchronized (this) {
                teardown();
            }
        }
    }

    /** (C6): waits until no live thread is pinned, or throws after the close timeout. */
    private void awaitUnpinned() {
        final long start = System.nanoTime();
        for (long pause = 1_000; ; pause = Math.min(2 * pause, 1_000_000)) {
            final String pinned = pinnedThreads();
            if (pinned.isEmpty()) {
                return;
            }
            if (System.nanoTime() - start > closeTimeoutNanos) {
                throw new IllegalStateException(String.format(Locale.ROOT,
                        "close() refused: %s still pinned in reclamation domain %s after %d ms "
                                + "(builder.closeTimeout); the domain stays open",
                        pinned, this, TimeUnit.NANOSECONDS.toMillis(closeTimeoutNanos)));
            }
            LockSupport.parkNanos(pause);
        }
    }

    /** The live threads pinned now ((C6)), named; a thread that died pinned never unpins and is skipped. */
    private String pinnedThreads() {
        final StringBuilder names = new StringBuilder();
        for (int i = 0; i < guards.length; i++) {
            final Guard g = guardOf(i);
            if (g != null && (int) Guard.NESTING.getAcquire(g) != 0 && g.owner.isAlive()) { // (C6)
                names.append(names.isEmpty() ? "thread '" : ", '").append(g.owner.getName()).append('\'');
            }
        }
        return names.toString();
    }

    /** Frees what the domain holds; every step runs, and the failures are thrown together. */
    private void teardown() {
        final List<Throwable> failures = new ArrayList<>();
        // Everything goes through one fresh bag: no guard needs to be left (threads may all have departed).
        final BlockSource blocks = new BlockSource(allocator);
        final BlockBag bag = new BlockBag(blocks);
        for (int i = 0; i < guards.length; i++) {
            final Guard g = (Guard) GUARDS.getAndSet(guards, i, (Guard) null);
            if (g != null) {
                g.released = true;
                step(failures, () -> {
                    drainRetired(g, bag);
                    g.freeable.moveAllTo(bag);
                    g.freeable.releaseBlocks();
                    g.pool.moveAllTo(bag);
                    g.pool.releaseBlocks();
                    g.blocks.close();
                });
            }
        }
        step(failures, () -> drainShared(bag));
        // after the guards: a thread that re-claims a departed id meanwhile finds no stale guard
        step(failures, releaseHook::close);
        step(failures, closeCheck::close);
        for (Orphan o; (o = orphans.poll()) != null; ) {
            final Orphan orphan = o;
            step(failures, () -> orphan.bag().moveAllTo(bag));
        }
        step(failures, () -> pool.drain(bag, blocks, new long[BlockLayout.CAPACITY]));
        step(failures, blocks::close);
        step(failures, () -> allocator.free(slotMemory));
        if (!failures.isEmpty()) {
            final IllegalStateException e = new IllegalStateException(String.format(Locale.ROOT,
                    "reclamation domain %s closed, but %d cleanup step(s) failed; the first: %s",
                    this, failures.size(), failures.get(0)), failures.get(0));
            for (int i = 1; i < failures.size(); i++) {
                e.addSuppressed(failures.get(i));
            }
            throw e;
        }
    }

    /** A cleanup step of {@link #teardown()}. */
    private interface Step {
        void run() throws Exception;
    }

    private static void step(final List<Throwable> failures, final Step step) {
        try {
            step.run();
        } catch (final Exception | Error e) {
            failures.add(e);
        }
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "%s[slots=%d, record=%d B%s]", scheme.id(), slots, recordBytes,
                debug ? ", debug" : "");
    }

    // ---------------------------------------------------------------- for the schemes

    /** A new guard for the calling thread, holding participant id {@code id}. */
    abstract Guard newGuard(int id);

    /** Scheme part of {@link #flush()}: end grace periods or scan, free {@code g}'s safe records. */
    abstract void flush(Guard g);

    /**
     * A departed thread's guard: free what is safe now, hand the rest of its retired records to
     * {@link #orphans} (stamped as the scheme needs) and clear its announcement. Runs while no
     * thread uses the guard, after its hazard slots were cleared. Each departure also frees the
     * orphans that became safe, so that orphans stay bounded when no live thread scans (thread
     * churn: every thread retires less than a scan's threshold and dies).
     */
    abstract void abandon(Guard g);

    /** Teardown: moves every record that {@code g} still tracks into {@code target}. */
    abstract void drainRetired(Guard g, BlockBag target);

    /** Teardown: moves every record that the scheme holds outside the guards into {@code target}. */
    void drainShared(final BlockBag target) {
    }

    /** Scheme part of {@link #quiescent()}: the thread, not pinned, passes a quiescent state. */
    void quiescentState(final Guard g) {
    }

    /** Scheme part of {@link #offline()}: the thread, not pinned, leaves the scheme's view. */
    void wentOffline(final Guard g) {
    }

    /** Scheme part of {@link #online()}: the thread rejoins the scheme's view. */
    void cameOnline(final Guard g) {
    }

    /** Epoch advances so far; 0 for schemes without epochs. */
    abstract long advances();

    /** CAS retries in the scheme's own shared structures ({@link ReclaimStats#retries()}); 0 by default. */
    long retries() {
        return 0;
    }

    /** Heavy barriers that failed and made the domain fall back to fenced pins; 0 for schemes without them. */
    long fenceFallbacks() {
        return 0;
    }

    /**
     * The scheme's garbage bound, as its implementation notes state it: the most retired records
     * one thread holds unreclaimed, with {@code n} participant ids in use, even while other
     * threads stall (one stays pinned forever); or {@link Long#MAX_VALUE} where a stalled thread
     * lets garbage grow without bound (nothing retired after the stall began is freed). Every
     * scheme declares it, and the stalled-thread test of the scheme suite checks it.
     */
    abstract long garbageBound(int n);

    /**
     * The most retired records one thread may hold unreclaimed while {@code threads} threads use
     * the domain, even if one of them stalls inside a section forever: the scheme's proven garbage
     * bound (each scheme's documentation gives its formula), or {@link Long#MAX_VALUE} for the
     * schemes that a stalled thread stops (the epoch family, Token-EBR, Stamp-it, {@code none}) and
     * for {@code lfrc} over structures with links (a held record keeps what it links to). The era
     * schemes ({@code ibr}, {@code he}, {@code wfe}) may hold back, beyond it, the records that
     * were alive when the stall began: a stalled reservation covers their lifetimes.
     * All threads together hold at most {@code threads} times as many. Robust schemes have a
     * finite bound: pick one of them when a thread may be descheduled or stalled in a section.
     *
     * @throws IllegalArgumentException if {@code threads < 1}
     */
    public final long unreclaimedBound(final int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        }
        return garbageBound(threads);
    }

    /**
     * Frees orphans whose stamp is at most {@code safeStamp} through {@code g} (their bags move
     * into {@code g}'s free path).
     */
    final void reclaimOrphans(final Guard g, final long safeStamp) {
        if (orphans.isEmpty()) {
            return;
        }
        final int n = orphans.size();
        for (int i = 0; i < n; i++) {
            final Orphan o = orphans.poll();
            if (o == null) {
                return;
            }
            if (o.stamp() <= safeStamp) {
                g.release(o.bag());
            } else {
                orphans.offer(o);
            }
        }
    }

    // ---------------------------------------------------------------- debug checks

    final void debugRetire(final long ptr) {
        allocator.usableSize(ptr); // throws for a pointer the allocator does not hold
        if (debugRetired.putIfAbsent(ptr, Boolean.TRUE) != null) {
            throw new IllegalStateException(String.format(Locale.ROOT,
                    "0x%x retired twice: a node must be retired exactly once, after it is unlinked", ptr));
        }
    }

    final void debugFreeing(final long ptr) {
        debugRetired.remove(ptr);
    }

    final void debugFreeing(final BlockBag bag) {
        bag.forEach(debugRetired::remove);
    }

    // ---------------------------------------------------------------- threads

    /** Participant {@code id}'s guard, or null; an acquire load, for any thread. */
    final Guard guardOf(final int id) {
        return (Guard) GUARDS.getAcquire(guards, id);
    }

    /**
     * The calling thread's guard, registered on its first use of the domain. The fast path looks
     * the thread up by its thread id in {@link #byThread} (a load and a compare, about 1 ns),
     * instead of a ThreadLocal lookup (about 3 ns for Participants.current() on this project's
     * machine, a third of an uncontended pin): a hit is the thread's own guard, still holding its
     * participant id. A miss (first use, a slot shared with another thread, an id released and
     * claimed again) takes the participant id and fills the slot.
     */
    private Guard currentGuard() {
        final Thread t = Thread.currentThread();
        final Guard hit = byThread[(int) t.threadId() & (byThread.length - 1)];
        if (hit != null && hit.owner == t && !hit.released) {
            return hit;
        }
        final int id = Participants.current();
        final Guard g = guards[id];
        final Guard mine = g != null ? g : register(id);
        byThread[(int) t.threadId() & (byThread.length - 1)] = mine;
        return mine;
    }

    /** The calling thread's guard (registered on first use), for scheme work outside a section. */
    final Guard callerGuard() {
        return currentGuard();
    }

    private Guard register(final int id) {
        if (closed) {
            throw closedException();
        }
        final Guard g = newGuard(id);
        GUARDS.setRelease(guards, id, g);
        return g;
    }

    /**
     * Participants close check: the calling thread, which holds {@code id}, must not be pinned
     * here. Releasing the id would end its section under it (departed clears its announcement and
     * hazard slots, so what it reads could be freed), and its later unpin would write into the
     * slots of whichever thread took the id next.
     */
    private void checkNotPinned(final int id) {
        final Guard g = guards[id]; // the calling thread's own id
        if (g != null && g.nesting != 0) {
            throw new IllegalStateException(String.format(Locale.ROOT,
                    "Participants.close() while pinned in reclamation domain %s (depth %d): close the guard "
                            + "first; the participant id is kept", this, g.nesting));
        }
    }

    /** Participants release hook: the thread holding {@code id} died or closed its id. */
    private synchronized void departed(final int id) {
        final Guard g = (Guard) GUARDS.getAndSet(guards, id, (Guard) null);
        if (g == null) {
            return; // it never pinned here, or close() tore the domain down
        }
        g.released = true;
        if (g.unmark()) { // (R6): a neutralizer that marks it after this sees it gone and unmarks it itself
            marks.decrementAndGet();
        }
        if (g.owesMark()) {
            marks.decrementAndGet();
        }
        for (int s = 0; s < 2 * slotWords; s++) {
            Guard.clear(g.row + HAZARDS + (long) s * Long.BYTES); // its hazards and reservations protect nothing now
        }
        abandon(g);
        // Amortized free's backlog is safe already: free it here rather than hand it to one adopter,
        // which would free it a record per pin and, under thread churn, soon depart too.
        g.freeAllFreeable();
        g.freeable.releaseBlocks();
        pool.release(g.pool, g.blocks, g.scratch);
        g.blocks.close();
        departedRetired.addAndGet(g.retiredCount());
        departedFreed.addAndGet(g.freedCount());
        departedRestarts.addAndGet(g.restartCount());
    }

    /** A fresh bag holding all of {@code bag}'s records (for handing a departed thread's bag on). */
    static BlockBag takeAll(final Guard g, final BlockBag bag) {
        final BlockBag moved = new BlockBag(g.blocks);
        bag.moveAllTo(moved);
        return moved;
    }

    final void checkOpen() {
        if (closed) {
            throw closedException();
        }
    }

    private IllegalStateException closedException() {
        return new IllegalStateException("reclamation domain " + this + " is closed");
    }

    // ---------------------------------------------------------------- builder

    /** Settings of a domain; every one has a default except the allocator's records' size. */
    public static final class Builder {

        private final Scheme scheme;
        private LimboAllocator allocator;
        private long recordBytes;
        private int slots = 4;
        private int maxNesting = 4;
        private final EnumSet<Capability> capabilities = EnumSet.noneOf(Capability.class);
        private boolean debug;
        private boolean adaptive = true;
        private long backlogLimit = 4L * BlockLayout.CAPACITY;
        private boolean bypassPool;
        private int freesPerPin = 1;
        private int restartOneIn;
        private int minCalls = 100;
        private int scanThreshold = 100;
        private int suspectThreshold = 4 * BlockLayout.CAPACITY;
        private long poolRecords = 2L * BlockLayout.CAPACITY;
        private int sharedBlocks = 64;
        private boolean asymmetricFence =
                Boolean.parseBoolean(System.getProperty(ASYMMETRIC_FENCE_PROPERTY, "true"));
        private long heavyBarrierIntervalNanos = TimeUnit.MILLISECONDS.toNanos(1);
        private long closeTimeoutNanos = TimeUnit.SECONDS.toNanos(10);

        Builder(final Scheme scheme) {
            this.scheme = Objects.requireNonNull(scheme, "scheme");
        }

        /**
         * The allocator records come from (default: the process-wide {@link LimboAllocator#shared()},
         * which is unchecked unless the system property {@value LimboAllocator#CHECKED_PROPERTY}
         * is true; close() returns every record to it).
         */
        public Builder allocator(final LimboAllocator allocator) {
            this.allocator = Objects.requireNonNull(allocator, "allocator");
            return this;
        }

        /** The size of the structure's nodes: what {@link Guard#allocate()} returns. Required. */
        public Builder recordBytes(final long bytes) {
            if (bytes < Long.BYTES || bytes > 16384) {
                throw new IllegalArgumentException("record size must be in [8, 16384] bytes, was " + bytes);
            }
            this.recordBytes = bytes;
            return this;
        }

        /** Protection slots per guard, 1..15 (default 4). */
        public Builder slots(final int n) {
            if (n < 1 || n > MAX_SLOTS) {
                throw new IllegalArgumentException("slots must be in [1, " + MAX_SLOTS + "], was " + n);
            }
            this.slots = n;
            return this;
        }

        /**
         * The deepest nesting of sections (default 4): a pin inside a section opens a nested one,
         * whose protections use a slot window of their own, so an inner operation never overwrites
         * what the outer section protects. {@code slots * maxNesting} must be at most 64.
         */
        public Builder maxNesting(final int depth) {
            if (depth < 1 || depth > 64) {
                throw new IllegalArgumentException("maxNesting must be in [1, 64], was " + depth);
            }
            this.maxNesting = depth;
            return this;
        }

        /**
         * Adds a capability the scheme does not declare (for tests and debugging): structures then
         * act as they would under a scheme that declares it, for example re-validating reachability
         * under an epoch scheme. It only ever makes structures more careful, never less.
         */
        public Builder capability(final Capability capability) {
            capabilities.add(Objects.requireNonNull(capability, "capability"));
            return this;
        }

        /**
         * Debug mode: guards check their owner thread, a node retired twice or not from the
         * allocator throws, and the pool is bypassed so the allocator's debug mode (poison,
         * quarantine) sees every freed record.
         */
        public Builder debug(final boolean on) {
            this.debug = on;
            return this;
        }

        /** Amortized free: records freed per pin (default 1, the paper's). */
        public Builder freesPerPin(final int n) {
            if (n < 1) {
                throw new IllegalArgumentException("frees per pin must be at least 1, was " + n);
            }
            this.freesPerPin = n;
            return this;
        }

        /**
         * Amortized free: adapt the frees per pin to the backlog (default on, as the Token-EBR
         * artifact's DEAMORTIZE_ADAPTIVELY allows): one more per pin while a block's worth is left
         * over when a new safe batch arrives, one fewer when nothing is.
         */
        public Builder adaptive(final boolean on) {
            this.adaptive = on;
            return this;
        }

        /**
         * Amortized free: the most safe records a thread leaves waiting (default 1024). An
         * operation that retires more than it frees (a tree remove retires two nodes, and one is
         * freed per pin) would grow the backlog without bound; past the limit, the excess is freed
         * at once.
         */
        public Builder backlogLimit(final long records) {
            if (records < 0) {
                throw new IllegalArgumentException("backlog limit must not be negative, was " + records);
            }
            this.backlogLimit = records;
            return this;
        }

        /**
         * Sends freed records straight to the allocator, without DEBRA's pool (default off). The
         * Token-EBR paper frees to the allocator on purpose: that is where batch free hurts, and
         * where amortized free helps; its benchmarks use this.
         */
        public Builder bypassPool(final boolean on) {
            this.bypassPool = on;
            return this;
        }

        /** DEBRA: operations between epoch advances by one thread, at least (default 100). */
        public Builder minCalls(final int n) {
            if (n < 1) {
                throw new IllegalArgumentException("minCalls must be at least 1, was " + n);
            }
            this.minCalls = n;
            return this;
        }

        /**
         * How much work a thread does between two scans (default 100, the Stamp-it report's): for
         * {@code ebr} and {@code nebr}, pins between advance attempts; for {@code qsbr}, quiescent
         * states between scans; for {@code rcu}, retires between scans (the Token-EBR artifact's
         * {@code empty_freq}); for {@code hp}, the constant B of the scan threshold
         * R = 2 * slots * threads + B; for {@code nbr} and {@code nbr+}, the retired bag's capacity B
         * at which a thread neutralizes every thread and frees its bag (the NBR artifact's
         * MAX_RETIREBAG_CAPACITY, 32 K), nbr+'s low watermark being B / 2. It is the batch size B of the Token-EBR paper's Experiment 2
         * (digest §3.8), which uses B = 32 K for every scan-on-threshold scheme; with amortized
         * free, what a scan finds safe goes to the freeable list instead of being freed at once.
         */
        public Builder scanThreshold(final int n) {
            if (n < 1) {
                throw new IllegalArgumentException("scan threshold must be at least 1, was " + n);
            }
            this.scanThreshold = n;
            return this;
        }

        /**
         * DEBRA+: the suspect threshold c (default 1024 records, four blocks, the reference code's
         * "about 768 objects per bag"): a scanning thread whose current limbo bag holds more than
         * c records neutralizes each thread that holds the epoch back, and counts it as checked.
         * Smaller values bound garbage tighter and neutralize more often.
         */
        public Builder suspectThreshold(final int records) {
            if (records < 0) {
                throw new IllegalArgumentException("suspect threshold must not be negative, was " + records);
            }
            this.suspectThreshold = records;
            return this;
        }

        /**
         * Epoch schemes ({@code ebr}, {@code debra} and their {@code -af} forms): announce a pin
         * with an opaque store and no fence instruction (a compiler barrier only: this relies on
         * HotSpot, beyond what the Java memory model promises), and have the (rare) scans that advance the epoch
         * issue {@code membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)} instead, about once per epoch
         * and once per {@linkplain #heavyBarrierInterval interval} per domain. Pins become cheaper
         * (ReclaimGuardPtr, 1 thread: debra 55 -> about 80 ops/us); epochs then advance about once
         * per interval, except in {@link ReclaimDomain#flush()}. Default: the system property
         * {@value #ASYMMETRIC_FENCE_PROPERTY}, else on. Ignored (a full fence per pin) where the
         * kernel lacks membarrier; other schemes ignore it.
         */
        public Builder asymmetricFence(final boolean on) {
            this.asymmetricFence = on;
            return this;
        }

        /**
         * Asymmetric mode: the least time between two heavy barriers of the domain (default 1 ms).
         * Each membarrier interrupts every CPU running a thread of the process (about 20 us on a
         * 2-vCPU VM with both busy), so a shorter interval reclaims sooner and costs more.
         */
        public Builder heavyBarrierInterval(final Duration interval) {
            if (interval.isNegative()) {
                throw new IllegalArgumentException("heavy barrier interval must not be negative, was " + interval);
            }
            this.heavyBarrierIntervalNanos = interval.toNanos();
            return this;
        }

        /**
         * Pool sizes: free records kept per thread (default 512) and blocks of 256 in the shared
         * stack (default 64); beyond them, records go back to the allocator. 0 records: no pool.
         */
        public Builder pool(final long perThreadRecords, final int sharedBlocks) {
            if (perThreadRecords < 0 || sharedBlocks < 0) {
                throw new IllegalArgumentException("pool sizes must not be negative");
            }
            this.poolRecords = perThreadRecords;
            this.sharedBlocks = sharedBlocks;
            return this;
        }

        /**
         * How long {@link ReclaimDomain#close()} waits for other threads' sections to end before it
         * refuses (default 10 s).
         */
        public Builder closeTimeout(final Duration timeout) {
            if (timeout.isNegative()) {
                throw new IllegalArgumentException("close timeout must not be negative, was " + timeout);
            }
            this.closeTimeoutNanos = timeout.toNanos();
            return this;
        }

        /**
         * Restart injection, a test aid for structure authors: about one poll in {@code oneIn}
         * ({@link Guard#protect}, {@link Guard#protectIfEqual}, {@link Guard#poll},
         * {@link Guard#beginWrite}) throws
         * {@link Restart}, as if a reclaimer had neutralized the thread, under any scheme; so a
         * structure's restart paths run without a neutralizing scheme (see {@link Guard},
         * "Neutralization"). 0 (the default) turns it off. Costs a fence per write phase while on.
         * Choose {@code oneIn} well above the polls of the longest read phase (a list traversal
         * polls once per node): a read phase that restarts at nearly every try never ends.
         */
        public Builder restartInjection(final int oneIn) {
            if (oneIn < 0) {
                throw new IllegalArgumentException("restartInjection(" + oneIn + "): must be >= 0 (0: off)");
            }
            this.restartOneIn = oneIn;
            return this;
        }

        public ReclaimDomain build() {
            if (recordBytes == 0) {
                throw new IllegalStateException("recordBytes(...) is required: the size of the structure's nodes");
            }
            if (slots * maxNesting > 64) {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                        "slots(%d) x maxNesting(%d) = %d slot words; at most 64", slots, maxNesting, slots * maxNesting));
            }
            if (allocator != null) {
                return scheme.create(this);
            }
            allocator = LimboAllocator.shared();
            try {
                return scheme.create(this);
            } finally {
                allocator = null; // a later allocator(...) call is not overridden
            }
        }
    }
}
