package dev.limbo.allocator;

import dev.limbo.allocator.internal.CacheFlushEvent;
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
 * Layout: the state of class c is four words at slots[4c]: HEAD, COUNT, CURRENT and CAP, in one
 * array and one cache line, so that an allocate or a free pays two range checks. A free tells a
 * small block of this allocator by one comparison of its owner word's tag (PageMap.TAG_SHIFT).
 *
 * Invariants: HEAD and COUNT describe a list of COUNT free blocks of class c; when COUNT is 0, HEAD
 * is meaningless. Every block on the list lies wholly inside a page that was a superblock of class c
 * of this allocator when the block entered the list: free checks the owner word and that the block
 * ends inside the page (pastPage); a pop checks the link it follows (leavesPage, then the page map
 * for a link that leaves the page) and drops the rest of the list if the link is broken, which only
 * a double free in unchecked mode does (the block, in use, had its link overwritten). So a double
 * free can make the cache hand a block out twice, never hand out memory outside the pages of its
 * superblocks. Only the owning thread (or, for a stripe, the thread that claimed it; for a dead
 * thread's cache, the adopting thread while nobody holds its id, then the new thread it passes to
 * as a spare) touches the fields: the public allocate and free check that the caller is the owner
 * (checkOwner), and the allocator calls allocateHere and freeHere only with a cache it found by the
 * calling thread's id, or a stripe it claimed. With OWNER_RETURN, CURRENT is the descriptor of the superblock
 * this cache owns for class c, or 0; it is taken by a fill, given up before a flush or when the
 * cache is retired, and kept by a spare for the thread it passes to.
 * CAP is the allocator's cap for the class, copied here.
 *
 * Linearization points: allocate - the pop of HEAD (thread-local), or the anchor CAS of a fill;
 * free - the push (thread-local), the remote-list CAS (OWNER_RETURN), or the anchor CAS of a flush.
 *
 * Progress: allocate and free are lock-free: thread-local work plus the lock-free fill and flush.
 *
 * Memory ordering: (1) the stripe claim CAS acquires, (2) its release store hands the cache's
 * plain fields to the next claimer; a spare passes through the allocator's spares array (a
 * compareAndSet, then a getAndSet: the same hand-over). Remote-list and anchor accesses are in
 * LimboAllocator.
 * }</pre>
 */
public final class ThreadCache {

    private static final VarHandle BUSY;

    static {
        try {
            BUSY = MethodHandles.lookup().findVarHandle(ThreadCache.class, "busy", int.class)
                    .withInvokeExactBehavior();
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final LimboAllocator allocator;
    /**
     * The id of the owning thread (for a stripe, of whichever thread created it). It changes when a
     * terminated thread's cache passes to a new thread; a racy reader sees the old owner's id (a
     * dead thread's, never reused) or the new one, and only the owner itself compares equal.
     */
    long ownerId;
    // Copies of the allocator's settings, one load away on the fast paths.
    private final long smallTag;
    private final boolean checked;
    private final boolean ownerReturn;
    private static final int HEAD = 0;
    private static final int COUNT = 1;
    private static final int CURRENT = 2;
    private static final int CAP = 3;
    /** Per size class c, the words HEAD, COUNT, CURRENT and CAP at {@code 4c}; see the notes. */
    private final long[] slots = new long[(SizeClasses.COUNT + 1) << 2];
    /** Checked mode's quarantine of recently freed blocks and runs ({@link CheckedMode}); null if unchecked. */
    final CheckedMode.Quarantine quarantine;
    /**
     * Bytes of blocks that entered this cache from superblocks (fills, remote-list collections) and
     * that left it for superblocks or remote lists (flushes, remote frees). Blocks in use through
     * this cache = taken - returned - cached; kept off the per-block fast paths.
     */
    long takenBytes;
    long returnedBytes;
    /**
     * Set when the owner's participant id was released and the cache drained; never used again. (A
     * terminated thread's cache that becomes a spare is not retired: it passes to a new owner.)
     */
    boolean retired;
    @SuppressWarnings("unused") // accessed through BUSY
    private volatile int busy;

    ThreadCache(final LimboAllocator allocator) {
        this.allocator = allocator;
        this.ownerId = Thread.currentThread().threadId();
        this.smallTag = allocator.smallTag;
        this.checked = allocator.checked;
        this.ownerReturn = allocator.policy == FlushPolicy.OWNER_RETURN;
        for (int sc = 1; sc <= SizeClasses.COUNT; sc++) {
            slots[(sc << 2) + CAP] = allocator.cap[sc];
        }
        this.quarantine = checked ? allocator.checkedMode.quarantine(this) : null;
    }

    /**
     * Allocates {@code bytes} through this cache; see {@link LimboAllocator#allocate}.
     *
     * @throws IllegalStateException if the calling thread is not the one that got this cache from
     *                               {@link LimboAllocator#context()}, or the cache was retired
     */
    public long allocate(final long bytes) {
        checkOwner();
        return allocateHere(bytes);
    }

    /** {@link #allocate} for the thread that holds the cache: its owner, or the claimer of a stripe. */
    long allocateHere(final long bytes) {
        if (Long.compareUnsigned(bytes - 1, SizeClasses.MAX_SMALL) >= 0) {
            return allocator.allocateLarge(bytes);
        }
        final int sc = SizeClasses.classOf(bytes);
        final long[] s = slots;
        final int at = sc << 2;
        long n = s[at + COUNT];
        long block = s[at + HEAD];
        if (n == 0) {
            n = refill(sc);
            block = s[at + HEAD];
        }
        // The last block's link is read too (harmless: the block is ours); HEAD is unused at COUNT 0.
        final int size = SizeClasses.size(sc);
        final long next = block + size + Words.lp(block);
        if (leavesPage(block, next, size) && n > 1 && !allocator.isBlock(next, sc)) { // n == 1: next is unused
            n = dropRest();
        }
        s[at + HEAD] = next;
        s[at + COUNT] = n - 1;
        if (checked) {
            allocator.checkedMode.markAllocated(block, sc);
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
        freeHere(ptr);
    }

    /** {@link #free} for the thread that holds the cache: its owner, or the claimer of a stripe. */
    void freeHere(final long ptr) {
        final long owner = LimboAllocator.ownerOf(ptr);
        if (owner >>> PageMap.TAG_SHIFT != smallTag) { // not a small block of this allocator
            if (checked) {
                quarantine.freeNotSmall(ptr, owner);
            } else {
                allocator.freeNotSmall(ptr, owner);
            }
            return;
        }
        final int sc = PageMap.sizeClass(owner);
        if (checked) {
            quarantine.free(ptr, owner);
            return;
        } else if (slots[(sc << 2) + HEAD] == ptr && slots[(sc << 2) + COUNT] > 0 // unchecked: freed twice in a row,
                || pastPage(ptr, SizeClasses.size(sc))) { // or reaching past the page
            throw rejected(ptr, sc);
        }
        push(ptr, sc, PageMap.descriptor(owner));
    }

    /**
     * Whether {@code next}, the link of {@code block}, leads out of the part of {@code block}'s page
     * where a block of {@code size} bytes fits, or to an address that is not 8-byte aligned. A link
     * that stays is followed as it is: every block it can lead to lies inside the page (if it does
     * not start a block, only the blocks it overlaps suffer). A link that leaves must lead to a
     * block of this allocator's class, which the page map tells ({@link LimboAllocator#isBlock}).
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
     * double free broke: the rest is leaked ({@link LimboAllocator#broken()}). Returns 1, the count
     * that leaves only that first block to hand out.
     */
    private int dropRest() {
        allocator.broken();
        return 1;
    }

    void push(final long ptr, final int sc, final int descriptor) {
        final long[] s = slots;
        final int at = sc << 2;
        // The highest index first: its range check covers the three below it.
        final long cap = s[at + CAP];
        // CURRENT stays 0 unless the policy is owner return, so a block of the owned superblock (the
        // common case) costs one comparison.
        if (s[at + CURRENT] != descriptor && ownerReturn && allocator.pushRemote(descriptor, ptr)) {
            returnedBytes += SizeClasses.size(sc);
            return;
        }
        long n = s[at + COUNT];
        if (n >= cap) {
            flush(sc);
            n = s[at + COUNT];
        }
        Words.sp(ptr, s[at + HEAD] - (ptr + SizeClasses.size(sc)));
        s[at + HEAD] = ptr;
        s[at + COUNT] = n + 1;
    }

    /** The first block of the cached list of class {@code sc}. */
    long head(final int sc) {
        return slots[(sc << 2) + HEAD];
    }

    /** The number of cached blocks of class {@code sc}. */
    int count(final int sc) {
        return (int) slots[(sc << 2) + COUNT];
    }

    /** Replaces the cached list of class {@code sc} (fills, and tests that stage a cache). */
    void setList(final int sc, final long head, final int count) {
        slots[(sc << 2) + HEAD] = head;
        slots[(sc << 2) + COUNT] = count;
    }

    /** OWNER_RETURN: the descriptor of the superblock this cache owns for class {@code sc}, or 0. */
    int current(final int sc) {
        return (int) slots[(sc << 2) + CURRENT];
    }

    void setCurrent(final int sc, final int descriptor) {
        slots[(sc << 2) + CURRENT] = descriptor;
    }

    private int refill(final int sc) {
        if (!ownerReturn || current(sc) == 0 || allocator.collectRemote(this, sc, current(sc)) == 0) {
            abandon(sc);
            final int descriptor = allocator.fill(this, sc);
            if (ownerReturn) {
                setCurrent(sc, allocator.own(descriptor) ? descriptor : 0);
            }
        }
        final int n = count(sc);
        takenBytes += (long) n * SizeClasses.size(sc);
        return n;
    }

    /** OWNER_RETURN: gives up ownership of the current superblock of class {@code sc}. */
    private void abandon(final int sc) {
        final int descriptor = current(sc);
        if (descriptor != 0) {
            setCurrent(sc, 0);
            allocator.abandon(descriptor);
        }
    }

    /** Returns blocks to their superblocks as the policy says; called when the cache is full. */
    void flush(final int sc) {
        // JFR: no event object unless a recording may want it
        final CacheFlushEvent event = CacheFlushEvent.GATE.isEnabled() ? new CacheFlushEvent() : null;
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
                if (leavesPage(last, next, size) && !allocator.isBlock(next, sc)) {
                    allocator.broken(); // keep the blocks before the broken link, drop the rest
                    keep = i;
                    returned = 0;
                    break;
                }
                last = next;
            }
            final long rest = last + size + Words.lp(last); // flushList checks it
            setList(sc, head(sc), keep);
            returnedBytes += (long) returned * size;
            allocator.flushList(rest, returned, sc);
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
        }
    }

    /** Returns the whole cached list of class {@code sc} to its superblocks. */
    private void returnList(final int sc) {
        final int n = count(sc);
        final long head = head(sc);
        setList(sc, 0, 0);
        returnedBytes += (long) n * SizeClasses.size(sc);
        allocator.flushList(head, n, sc);
    }

    /** Bytes of free blocks held here (racy read; exact when the owner is quiescent). */
    long cachedBytes() {
        long bytes = 0;
        for (int sc = 1; sc <= SizeClasses.COUNT; sc++) {
            bytes += (long) count(sc) * SizeClasses.size(sc);
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

    boolean tryClaim() {
        // (1) CAS; acquires the previous holder's writes, released by (2).
        return (int) BUSY.getOpaque(this) == 0 && (boolean) BUSY.compareAndSet(this, 0, 1);
    }

    void release() {
        // (2) release store; pairs with (1).
        BUSY.setRelease(this, 0);
    }
}
