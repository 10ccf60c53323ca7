package dev.limbo.allocator;

import dev.limbo.allocator.internal.CacheFlushEvent;
import dev.limbo.allocator.internal.EventGate;
import dev.limbo.allocator.internal.PageMap;
import dev.limbo.allocator.internal.SizeClasses;
import dev.limbo.core.Words;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Locale;

/**
 * A thread cache of {@link LimboAllocator} (LRMalloc thesis §5.3): per size class, a stack of free
 * blocks threaded through the blocks themselves, with no synchronization on the fast paths.
 *
 * <p>A platform thread gets its own cache, found through its participant id; hot callers can hold
 * it (from {@link LimboAllocator#context()}) and call {@link #allocate}/{@link #free} directly to
 * skip the lookup. It must then be used only by the thread that obtained it; both methods check.
 * Virtual threads share a few striped caches instead, claimed for the duration of one call.
 *
 * <p>Links are relative: a free block's first word holds {@code next - (block + size)}, so 0 means
 * "the adjacent block" and a zero-filled superblock is already a complete list (LRMalloc PR #9).
 *
 * <pre>{@code
 * Implementation notes
 *
 * Layout: the state of class c is one small object, classes[c] (ClassSlot: head, count, current
 * and cap), so that an allocate or a free pays one range check (on classes) and then reads fields
 * at fixed offsets. A free tells a small block of this allocator by one comparison of its owner
 * word's tag (PageMap.TAG_SHIFT); checked mode keeps an impossible tag here, so that its frees
 * leave the unchecked path at that same comparison.
 *
 * Invariants: head and count describe a list of count free blocks of class c; when count is 0,
 * head is meaningless. Every block on the list lies wholly inside a page that was a superblock of class c
 * of this allocator when the block entered the list: free checks the owner word and that the block
 * ends inside the page (pastPage); a pop checks the link it follows (leavesPage, then the page map
 * for a link that leaves the page) and drops the rest of the list if the link is broken, which only
 * a double free in unchecked mode does (the block, in use, had its link overwritten). So a double
 * free can make the cache hand a block out twice, never hand out memory outside the pages of its
 * superblocks. Only the owning thread (or, for a stripe, the thread that claimed it; for a dead
 * thread's cache, the adopting thread while nobody holds its id, then the new thread it passes to
 * as a spare; for an idle owner's cache, trim() while it holds the cache's claim) touches the
 * fields: the public allocate and free check that the caller is the owner (checkOwner), and the
 * allocator calls allocateOwned and freeOwned only with a cache it found by the calling thread's
 * id, and allocateHere and freeHere with a stripe it claimed. The owner's operations run inside
 * the marks of IdleCacheHandshake, which keep trim() out of them. With OWNER_RETURN, current is
 * the descriptor of the superblock this cache owns for class c, or 0; it is taken by a fill, given
 * up before a flush or when the cache is retired, and kept by a spare for the thread it passes to.
 * cap is the allocator's cap for the class, copied here.
 *
 * Decay (jemalloc's tcache GC, with its event count in place of a clock): every DECAY_EVENTS
 * small allocations and frees (one decrement of a plain owner-only counter on the fast paths) the
 * holder runs decay(), at the end of the operation, so that the values of the operation need not
 * be kept across the call. Per class, the blocks that sat in the cache for a whole interval are its
 * low-water mark; jemalloc tracks that mark on every pop, this cache finds it at no fast-path cost:
 * a pass moves the class's whole list aside into a reserve (reserveHead/reserveCount, off the
 * fast-path cache line), and a pop that finds the list empty takes a batch of the reserve back
 * before it fills from a superblock. So the blocks still in the reserve at the next pass were not
 * touched for a whole interval, and that pass returns its older 3/4 (rounded up: a single block goes) to
 * the superblocks, keeps the newest quarter, and links it above the list freed meanwhile to form
 * the next reserve. A class used once thus loses its blocks within a few passes, and its
 * superblock, when no other thread holds blocks of it, becomes EMPTY. The take-back comes in
 * batches, TAKE_BACK blocks and then twice the last batch each time, so that what stays in the
 * reserve at the next pass is the true low-water mark less at most the need plus TAKE_BACK (the
 * batches overshoot the need by less than that), at the cost of walking each batch once; the
 * decay never returns a block the class needed in the interval. Invariants: reserveCount blocks
 * of class c are linked from reserveHead[c] as in the list; the cache holds count + reserveCount blocks of c, at most
 * max(cap, blocks per superblock) in the list plus 4/3 of that in the reserve (a reserve is at most
 * a list plus a quarter of the previous reserve).
 *
 * Linearization points: allocate - the pop of HEAD (thread-local), or the anchor CAS of a fill;
 * free - the push (thread-local), the remote-list CAS (OWNER_RETURN), or the anchor CAS of a flush.
 *
 * Progress: allocate and free are lock-free: thread-local work plus the lock-free fill and flush.
 *
 * Memory ordering: the claim of a stripe or of an idle owner's cache, and the owner's marks, are
 * IdleCacheHandshake's (C1), (C2), (A1)-(A4); a spare passes through the registry's spares array (a
 * compareAndSet, then a getAndSet: the same hand-over, CacheRegistry (1), (2)). A drain request of trim()
 * on an owner that is inside an operation (or that the handshake is off for): (3) opaque store of drainRequested, read by (4), the opaque load of each decay pass;
 * (5) opaque store of 1 into the countdown, which the owner reads and writes plainly: it only
 * brings the pass forward, and if the owner's decrement overwrites it the pass comes on schedule.
 * The request carries no data: the owner drains its own cache, on its own thread. Remote-list
 * and anchor accesses are in SuperblockHeap.
 * }</pre>
 */
public final class ThreadCache extends IdleCacheHandshake {

    private static final VarHandle DECAY_COUNTDOWN;
    private static final VarHandle DRAIN_REQUESTED;

    static {
        try {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            DECAY_COUNTDOWN = lookup.findVarHandle(ThreadCache.class, "decayCountdown", int.class)
                    .withInvokeExactBehavior();
            DRAIN_REQUESTED = lookup.findVarHandle(ThreadCache.class, "drainRequested", boolean.class)
                    .withInvokeExactBehavior();
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final LimboAllocator allocator;
    /** The allocator's superblocks, which fills and flushes draw from and return to. */
    private final SuperblockHeap heap;
    /** The allocator's large runs. */
    private final LargeRuns large;
    /** The allocator's checked mode; null if unchecked. */
    private final CheckedMode checkedMode;
    /**
     * The id of the owning thread (for a stripe, of whichever thread created it). It changes when a
     * terminated thread's cache passes to a new thread; a racy reader sees the old owner's id (a
     * dead thread's, never reused) or the new one, and only the owner itself compares equal.
     */
    long ownerId;
    // Copies of the allocator's settings, one load away on the fast paths.
    /** The tag of this allocator's small blocks in owner words; in checked mode -1, which no owner word has. */
    private final long smallTag;
    private final boolean checked;
    private final boolean ownerReturn;
    /** Per size class, its cached list and superblock; see the notes. */
    private final ClassSlot[] classes = new ClassSlot[SizeClasses.COUNT + 1];

    /** The state of one size class in this cache; only the cache's holder touches it. */
    private static final class ClassSlot {
        /** The first block of the cached list; meaningless when {@code count} is 0. */
        long head;
        /** The number of blocks on the cached list. */
        int count;
        /** OWNER_RETURN and OWNED: the descriptor of the class's current superblock, or 0. */
        int current;
        /** The allocator's cap for the class. */
        final int cap;

        ClassSlot(final int cap) {
            this.cap = cap;
        }
    }
    /** Checked mode's quarantine of recently freed blocks and runs ({@link CheckedMode}); null if unchecked. */
    final CheckedMode.Quarantine quarantine;
    /**
     * Bytes of blocks that entered this cache from superblocks (fills, remote-list collections) and
     * that left it for superblocks or remote lists (flushes, remote frees). Blocks in use through
     * this cache = taken - returned - cached; kept off the per-block fast paths.
     */
    long takenBytes;
    long returnedBytes;
    /** Small allocations and frees between two decay passes (jemalloc's TCACHE_GC_SWEEP). */
    static final int DECAY_EVENTS = 8192;
    /**
     * Events left before the next {@link #decay()} pass; the owner's plain accesses, and trim()'s
     * opaque store of 1 (see {@link #requestDrain()}).
     */
    private int decayCountdown = DECAY_EVENTS;
    /** Set by {@link #requestDrain()}: the next decay pass drains the whole cache. */
    @SuppressWarnings("unused") // accessed through DRAIN_REQUESTED
    private volatile boolean drainRequested;
    /** Per size class, the reserve of the decay (see the notes): its first block and its length. */
    private final long[] reserveHead = new long[SizeClasses.COUNT + 1];
    private final int[] reserveCount = new int[SizeClasses.COUNT + 1];
    /** The first batch a refill takes back from a reserve in an interval; each next one is twice as large. */
    private static final int TAKE_BACK = 8;
    /** OWNED: passes after which a class whose reserve stayed untouched is drained. */
    static final int IDLE_PASSES = 4;
    /** OWNED: per size class, the passes its reserve has stayed untouched. */
    private final int[] idlePasses = new int[SizeClasses.COUNT + 1];
    /** Per size class, the blocks the next refill takes back from the reserve. */
    private final int[] takeBack = new int[SizeClasses.COUNT + 1];
    /**
     * Set when the owner's participant id was released and the cache drained; never used again. (A
     * terminated thread's cache that becomes a spare is not retired: it passes to a new owner.)
     */
    boolean retired;

    /** OWNED: the superblocks this cache owns besides the current ones; null under the other policies. */
    private final OwnedSuperblocks owned;

    /**
     * A cache of {@code allocator}. Under OWNED, a cache of a {@code registry} may own superblocks: it
     * takes a cache tag from the registry, which gives it back when the cache retires; a cache with
     * no registry (null: a scratch cache of the direct path, tests) owns none.
     */
    ThreadCache(final LimboAllocator allocator, final CacheRegistry registry) {
        this.allocator = allocator;
        this.heap = allocator.heap;
        this.large = allocator.large;
        this.checkedMode = allocator.checkedMode;
        this.owned = registry != null && allocator.policy == FlushPolicy.OWNED
                ? new OwnedSuperblocks(heap, this, registry.takeTag()) : null;
        this.ownerId = Thread.currentThread().threadId();
        this.checked = allocator.checked;
        this.smallTag = checked ? -1 : allocator.smallTag;
        this.ownerReturn = allocator.policy == FlushPolicy.OWNER_RETURN;
        for (int sc = 0; sc <= SizeClasses.COUNT; sc++) {
            classes[sc] = new ClassSlot(allocator.cap[sc]);
        }
        this.quarantine = checked ? checkedMode.quarantine(this) : null;
    }

    /**
     * Allocates {@code bytes} through this cache; see {@link LimboAllocator#allocate}.
     *
     * @throws IllegalStateException if the calling thread is not the one that got this cache from
     *                               {@link LimboAllocator#context()}, or the cache was retired
     */
    public long allocate(final long bytes) {
        checkOwner();
        return allocateOwned(bytes);
    }

    /**
     * {@link #allocate} for the owner of a platform thread's cache, inside the marks of
     * {@link IdleCacheHandshake}; while trim() holds the cache, the allocator's striped caches
     * serve the call.
     */
    long allocateOwned(final long bytes) {
        if (!ENABLED) {
            return allocateHere(bytes);
        }
        if (!enter()) {
            return allocator.allocateShared(bytes);
        }
        try {
            return allocateHere(bytes);
        } finally {
            leave();
        }
    }

    /** {@link #free} for the owner of a platform thread's cache; see {@link #allocateOwned}. */
    void freeOwned(final long ptr) {
        if (!ENABLED) {
            freeHere(ptr);
        } else if (enter()) {
            try {
                freeHere(ptr);
            } finally {
                leave();
            }
        } else {
            allocator.freeShared(ptr);
        }
    }

    /** {@link #allocate} for the thread that holds the cache: its owner, or the claimer of a stripe. */
    long allocateHere(final long bytes) {
        if (Long.compareUnsigned(bytes - 1, SizeClasses.MAX_SMALL) >= 0) {
            return large.allocate(bytes);
        }
        final int sc = SizeClasses.classOf(bytes);
        final ClassSlot c = classes[sc];
        int n = c.count;
        long block = c.head;
        if (n == 0) {
            n = refill(sc);
            block = c.head;
        }
        // The last block's link is read too (harmless: the block is ours); head is unused at count 0.
        final int size = SizeClasses.size(sc);
        final long next = block + size + Words.lp(block);
        if (leavesPage(block, next, size) && n > 1 && !heap.isBlock(next, sc)) { // n == 1: next is unused
            n = dropRest();
        }
        c.head = next;
        c.count = n - 1;
        if (checked) {
            checkedMode.markAllocated(block, sc);
        }
        if (--decayCountdown == 0) { // last, so that only the block is live across the pass's call
            decay();
        }
        return block;
    }

    /**
     * Frees {@code ptr} through this cache; see {@link LimboAllocator#free}.
     *
     * @throws IllegalStateException if the calling thread is not the one that got this cache from
     *                               {@link LimboAllocator#context()}, or the cache was retired
     */
    public void free(final long ptr) {
        checkOwner();
        freeOwned(ptr);
    }

    /** {@link #free} for the thread that holds the cache: its owner, or the claimer of a stripe. */
    void freeHere(final long ptr) {
        final long owner = LimboAllocator.ownerOf(ptr);
        if (owner >>> PageMap.TAG_SHIFT != smallTag) { // not a small block of this allocator, or checked mode
            freeOther(ptr, owner);
            return;
        }
        final int sc = PageMap.sizeClass(owner);
        final ClassSlot c = classes[sc];
        if (c.head == ptr && c.count > 0 // freed twice in a row,
                || pastPage(ptr, SizeClasses.size(sc))) { // or reaching past the page
            throw rejected(ptr, sc);
        }
        push(ptr, sc, owner, c);
    }

    /** Frees {@code ptr}, whose page's owner word is {@code owner}, when it is not an unchecked small block of this allocator. */
    private void freeOther(final long ptr, final long owner) {
        if (!checked) {
            large.freeNotSmall(ptr, owner);
        } else if (owner >>> PageMap.TAG_SHIFT == allocator.smallTag) {
            quarantine.free(ptr, owner);
        } else {
            quarantine.freeNotSmall(ptr, owner);
        }
    }

    /**
     * Whether {@code next}, the link of {@code block}, leads out of the part of {@code block}'s page
     * where a block of {@code size} bytes fits, or to an address that is not 8-byte aligned. A link
     * that stays is followed as it is: every block it can lead to lies inside the page (if it does
     * not start a block, only the blocks it overlaps suffer). A link that leaves must lead to a
     * block of this allocator's class, which the page map tells ({@link SuperblockHeap#isBlock}).
     */
    private static boolean leavesPage(final long block, final long next, final int size) {
        // next and next's last word lie in block's page (no bit from PAGE_SHIFT up differs), and
        // next is 8-aligned (block is, so a low bit of next ^ block is one of next).
        return (((next ^ block) | ((next + size - Long.BYTES) ^ block)) & (-PageMap.PAGE | 7)) != 0;
    }

    /** Whether a block of {@code size} bytes at {@code ptr} reaches past the end of {@code ptr}'s page. */
    private static boolean pastPage(final long ptr, final int size) {
        return (ptr ^ (ptr + size - Long.BYTES)) >>> PageMap.PAGE_SHIFT != 0;
    }

    /**
     * Refuses a caller other than the owner: two threads in one cache would hand blocks out twice
     * and lose others, and a retired cache is no longer drained or counted.
     */
    private void checkOwner() {
        if (ownerId != Thread.currentThread().threadId()) {
            throw notOwner();
        }
    }

    private IllegalStateException notOwner() {
        if (allocator.isClosed()) {
            return allocator.closedError();
        }
        return new IllegalStateException(ownerId < 0
                ? "this thread cache was retired when its thread closed its participant id; call context() again"
                : String.format(Locale.ROOT, "this thread cache belongs to thread #%d, not to the calling thread #%d: "
                        + "use a context only on the thread that got it from context()", ownerId,
                        Thread.currentThread().threadId()));
    }

    /** The exception for a pointer that unchecked mode's cheap checks reject on free. */
    private RuntimeException rejected(final long ptr, final int sc) {
        if (pastPage(ptr, SizeClasses.size(sc))) {
            return new IllegalArgumentException(String.format(Locale.ROOT,
                    "interior pointer 0x%x: it is past the last %d-byte block of its superblock", ptr,
                    SizeClasses.size(sc)));
        }
        return new IllegalStateException(String.format(Locale.ROOT,
                "double free: block 0x%x was the last block this thread freed", ptr));
    }

    /**
     * Drops the cached list of the class being allocated from after its first block, whose link a
     * double free broke: the rest is leaked ({@link SuperblockHeap#broken()}). Returns 1, the count
     * that leaves only that first block to hand out.
     */
    private int dropRest() {
        heap.broken();
        return 1;
    }

    /** Frees {@code ptr}, a checked block of class {@code sc} of this allocator whose page's owner word is {@code owner}. */
    void push(final long ptr, final int sc, final long ownerWord) {
        push(ptr, sc, ownerWord, classes[sc]);
    }

    /** {@link #push(long, int, long)} with the class's slot {@code c}, which the caller has loaded already. */
    private void push(final long ptr, final int sc, final long owner, final ClassSlot c) {
        final int descriptor = PageMap.descriptor(owner);
        // current stays 0 unless the policy is owner return or owned, so a block of the owned
        // superblock (the common case) costs one comparison.
        if (c.current == descriptor || !freedElsewhere(ptr, sc, owner, descriptor)) {
            int n = c.count;
            if (n >= c.cap) {
                flush(sc);
                n = c.count;
            }
            Words.spNoAlignCheck(ptr, c.head - (ptr + SizeClasses.size(sc))); // ownerOf checked ptr's alignment
            c.head = ptr;
            c.count = n + 1;
        }
        if (--decayCountdown == 0) { // last, so that no value of the free is live across the pass's call
            decay();
        }
    }

    /**
     * Frees a block that is not of the current superblock of its class where the policy sends it:
     * OWNED's local or remote free, or OWNER_RETURN's remote list; false if it goes on the cached list.
     */
    private boolean freedElsewhere(final long ptr, final int sc, final long owner, final int descriptor) {
        if (owned != null) {
            freeNotCurrent(ptr, sc, owner, descriptor);
            return true;
        }
        if (ownerReturn && heap.pushRemote(descriptor, ptr)) {
            returnedBytes += SizeClasses.size(sc);
            return true;
        }
        return false;
    }

    /**
     * OWNED: frees a block that is not of the current superblock of its class: onto its owned
     * superblock's local list, or (another cache's, or nobody's) onto its remote list or anchor.
     */
    private void freeNotCurrent(final long ptr, final int sc, final long owner, final int descriptor) {
        if (owned.owns(owner)) {
            owned.freeLocal(ptr, sc, descriptor);
            return;
        }
        returnedBytes += SizeClasses.size(sc);
        if (!heap.pushRemote(descriptor, ptr)) {
            heap.flushRun(descriptor, ptr, ptr, 1, sc);
        }
    }

    /** This cache's tag in owner words (OWNED), or -1 if it has none. */
    int tag() {
        return owned == null ? -1 : owned.tag;
    }

    /** The first block of the cached list of class {@code sc}. */
    long head(final int sc) {
        return classes[sc].head;
    }

    /** The number of cached blocks of class {@code sc}. */
    int count(final int sc) {
        return classes[sc].count;
    }

    /** The number of cached blocks of class {@code sc}, its decay reserve included. */
    int cached(final int sc) {
        return count(sc) + reserveCount[sc];
    }

    /** Replaces the cached list of class {@code sc} (fills, and tests that stage a cache). */
    void setList(final int sc, final long head, final int count) {
        final ClassSlot c = classes[sc];
        c.head = head;
        c.count = count;
    }

    /** OWNER_RETURN: the descriptor of the superblock this cache owns for class {@code sc}, or 0. */
    int current(final int sc) {
        return classes[sc].current;
    }

    void setCurrent(final int sc, final int descriptor) {
        classes[sc].current = descriptor;
    }

    private int refill(final int sc) {
        final int reserved = reserveCount[sc];
        if (owned != null) {
            if (reserved > 0) { // the class is in use again: its reserve comes back whole
                reserveCount[sc] = 0;
                setList(sc, reserveHead[sc], reserved);
                return reserved;
            }
            return owned.refill(sc);
        }
        if (reserved > 0) { // the class is in use again: a batch of its reserve comes back
            final int take = Math.min(reserved, takeBack[sc]);
            takeBack[sc] = take << 1;
            final long head = reserveHead[sc];
            final long rest = take == reserved ? 0 : walk(head, take, sc);
            reserveHead[sc] = rest;
            reserveCount[sc] = rest == 0 ? 0 : reserved - take; // a broken link drops the rest
            setList(sc, head, take);
            return take;
        }
        if (!ownerReturn || current(sc) == 0 || heap.collectRemote(this, sc, current(sc)) == 0) {
            abandon(sc);
            final int descriptor = heap.fill(this, sc);
            if (ownerReturn) {
                setCurrent(sc, heap.own(descriptor) ? descriptor : 0);
            }
        }
        final int n = count(sc);
        takenBytes += (long) n * SizeClasses.size(sc);
        return n;
    }

    /** OWNER_RETURN, OWNED: gives up ownership of the current superblock of class {@code sc}. */
    private void abandon(final int sc) {
        final int descriptor = current(sc);
        if (descriptor != 0) {
            setCurrent(sc, 0);
            heap.disown(descriptor);
        }
    }

    /** Returns blocks to their superblocks as the policy says; called when the cache is full. */
    void flush(final int sc) {
        // JFR: no event object unless a recording may want it (nor an event class without JFR)
        final CacheFlushEvent event = EventGate.JFR && CacheFlushEvent.GATE.isEnabled() ? new CacheFlushEvent() : null;
        final boolean timed = event != null;
        if (timed) {
            event.begin();
        }
        abandon(sc);
        final int n = count(sc);
        int returned;
        if (allocator.policy == FlushPolicy.PARTIAL_FLUSH && n > 1) {
            // Keep the most recently freed (cache-hot) half on top; return the older half below it.
            int keep = n / 2;
            returned = n - keep;
            final int size = SizeClasses.size(sc);
            long last = head(sc);
            for (int i = 1; i < keep; i++) {
                final long next = last + size + Words.lp(last);
                if (leavesPage(last, next, size) && !heap.isBlock(next, sc)) {
                    heap.broken(); // keep the blocks before the broken link, drop the rest
                    keep = i;
                    returned = 0;
                    break;
                }
                last = next;
            }
            final long rest = last + size + Words.lp(last); // flushList checks it
            setList(sc, head(sc), keep);
            returnedBytes += (long) returned * size;
            heap.flushList(rest, returned, sc);
        } else {
            returned = n;
            returnList(sc);
        }
        if (timed && event.shouldCommit()) {
            event.sizeClass = sc;
            event.blockSize = SizeClasses.size(sc);
            event.blocks = returned;
            event.commit();
        }
    }

    /**
     * One pass of the decay (see the notes): per class, returns the older 3/4 of a reserve that
     * nobody touched since the last pass, and sets the rest, with the list, aside as the next one.
     */
    private void decay() {
        decayCountdown = DECAY_EVENTS;
        // (4) opaque load; sees (3) at the latest the pass after it (coherence of one variable).
        if ((boolean) DRAIN_REQUESTED.getOpaque(this)) {
            DRAIN_REQUESTED.setOpaque(this, false);
            drain();
            return;
        }
        for (int sc = 1; sc <= SizeClasses.COUNT; sc++) {
            if (owned != null) {
                decayOwned(sc);
                continue;
            }
            final int idle = reserveCount[sc];
            final int n = count(sc);
            if (idle == 0 && n == 0) {
                continue;
            }
            final int size = SizeClasses.size(sc);
            long head = head(sc);
            int kept = n;
            if (idle > 0) {
                abandon(sc); // idle for a whole interval: the owned superblock goes too
                final int keep = idle / 4;
                final long last = keep == 0 ? 0 : walk(reserveHead[sc], keep - 1, sc);
                if (keep == 0) {
                    returnedBytes += (long) idle * size;
                    heap.flushList(reserveHead[sc], idle, sc);
                } else if (last != 0) { // else a broken link dropped the reserve
                    returnedBytes += (long) (idle - keep) * size;
                    heap.flushList(last + size + Words.lp(last), idle - keep, sc); // flushList checks it
                    if (n > 0) {
                        Words.sp(last, head - (last + size)); // the kept quarter, then the list
                    }
                    head = reserveHead[sc];
                    kept += keep;
                }
            }
            setList(sc, 0, 0);
            reserveHead[sc] = head;
            reserveCount[sc] = kept;
            takeBack[sc] = TAKE_BACK;
        }
    }

    /**
     * One decay pass of class {@code sc} under OWNED. The list is set aside as the reserve, which
     * the next refill takes back whole (O(1)): a class whose reserve is still untouched after
     * IDLE_PASSES passes handed out no block from it for that long, and is drained (its superblocks
     * given up, every block it holds returned). (Not after one pass: a working set smaller than the
     * list, such as one block allocated and freed in a loop, never touches the reserve, and a drain
     * walks the whole list.) An owned superblock's blocks cannot go back to it in part
     * (it is never released while owned), so there is no partial return here; the other owned
     * superblocks decay on their own (OwnedSuperblocks.decay).
     */
    private void decayOwned(final int sc) {
        owned.decay(sc);
        if (reserveCount[sc] > 0) {
            if (++idlePasses[sc] < IDLE_PASSES) {
                return;
            }
            idlePasses[sc] = 0;
            abandon(sc);
            final int reserved = reserveCount[sc];
            reserveCount[sc] = 0;
            returnedBytes += (long) reserved * SizeClasses.size(sc);
            heap.flushList(reserveHead[sc], reserved, sc);
            if (count(sc) > 0) {
                returnList(sc);
            }
            owned.drain(sc);
            return;
        }
        idlePasses[sc] = 0;
        final int n = count(sc);
        if (n > 0) {
            reserveHead[sc] = head(sc);
            reserveCount[sc] = n;
            setList(sc, 0, 0);
        }
    }

    /**
     * The block {@code links} links after {@code head} on a list of class {@code sc}, each link
     * checked as a pop checks it; 0 if one is broken (counted, {@link SuperblockHeap#broken()}).
     */
    private long walk(final long head, final int links, final int sc) {
        final int size = SizeClasses.size(sc);
        long block = head;
        for (int i = 0; i < links; i++) {
            final long next = block + size + Words.lp(block);
            if (leavesPage(block, next, size) && !heap.isBlock(next, sc)) {
                heap.broken();
                return 0;
            }
            block = next;
        }
        return block;
    }

    /**
     * Asks the owner, from another thread ({@link LimboAllocator#trim()}), to drain this cache at
     * its next small allocation or free, and at the latest at its next decay pass: the request
     * sets the owner's event countdown to 1, with no access on the owner's fast path.
     */
    void requestDrain() {
        // (3) opaque store; read by (4).
        DRAIN_REQUESTED.setOpaque(this, true);
        // (5) opaque store over the owner's plain countdown: a race with the owner's decrement can
        // lose it (the owner writes back its own value), then the regular pass honours (3).
        DECAY_COUNTDOWN.setOpaque(this, 1);
    }

    /** Empties the cache completely, quarantine first (thread exit, trim). */
    void drain() {
        if (quarantine != null) {
            quarantine.releaseAll();
        }
        for (int sc = 1; sc <= SizeClasses.COUNT; sc++) {
            abandon(sc);
            if (count(sc) > 0) {
                returnList(sc);
            }
            final int reserved = reserveCount[sc];
            if (reserved > 0) {
                reserveCount[sc] = 0;
                returnedBytes += (long) reserved * SizeClasses.size(sc);
                heap.flushList(reserveHead[sc], reserved, sc);
            }
            if (owned != null) {
                owned.drain(sc);
            }
        }
    }

    /** Returns the whole cached list of class {@code sc} to its superblocks. */
    private void returnList(final int sc) {
        final int n = count(sc);
        final long head = head(sc);
        setList(sc, 0, 0);
        returnedBytes += (long) n * SizeClasses.size(sc);
        heap.flushList(head, n, sc);
    }

    /** Bytes of free blocks held here (racy read; exact when the owner is quiescent). */
    long cachedBytes() {
        long bytes = 0;
        for (int sc = 1; sc <= SizeClasses.COUNT; sc++) {
            bytes += (long) cached(sc) * SizeClasses.size(sc);
        }
        if (owned != null) {
            bytes += owned.localBytes();
        }
        return quarantine == null ? bytes : bytes + quarantine.smallBytes();
    }

    /** Bytes held in the quarantine, small blocks and large runs (racy read). */
    long quarantinedBytes() {
        return quarantine == null ? 0 : quarantine.smallBytes() + quarantine.largeBytes();
    }

    /** Bytes of large runs held in the quarantine (racy read), counted as cached, not in use. */
    long quarantinedLargeBytes() {
        return quarantine == null ? 0 : quarantine.largeBytes();
    }
}
