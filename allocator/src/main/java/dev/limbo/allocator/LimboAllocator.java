package dev.limbo.allocator;

import dev.limbo.allocator.internal.BestFitPageAllocator;
import dev.limbo.allocator.internal.BlockStates;
import dev.limbo.allocator.internal.Descriptors;
import dev.limbo.allocator.internal.PageMap;
import dev.limbo.allocator.internal.SizeClasses;
import dev.limbo.core.OffHeapOutOfMemoryError;
import dev.limbo.core.Participants;
import dev.limbo.core.Region;
import dev.limbo.core.Words;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.ref.Cleaner;
import java.lang.ref.WeakReference;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntConsumer;

/**
 * Limbo's lock-free allocator: LRMalloc (Leite, 2018) over the global region, with a best-fit
 * coalescing page allocator underneath (thesis chapter 7), pluggable cache flush policies, batch
 * free, and checked and debug modes.
 *
 * <p>Pointers are offsets into {@link Words#SEGMENT}. Requests up to 16 KiB are served from 40 size
 * classes in superblocks of one {@linkplain PageMap#PAGE page} (64 KiB by default); larger requests
 * are runs of whole pages.
 *
 * <p>The default policy is {@link FlushPolicy#OWNED}: mimalloc's free-list sharding, superblocks
 * owned per thread cache, whose owner is named in the page-map word (see {@code OwnedSuperblocks}).
 * The capped-cache policies stay as options for the batch-free study; of them,
 * {@link FlushPolicy#OWNER_RETURN} (the default before OWNED) was chosen on cache-scratch: at 2
 * threads it ran 2.1x its 1-thread throughput (0.825 vs 0.388 rounds/us), while LRMalloc's
 * {@link FlushPolicy#FLUSH_ALL} ran 1.04x (0.423 vs 0.405), the passive false sharing the thesis
 * reports ({@code AllocCacheScratch}, 2 forks, JMH 1.37, 2-core x86).
 *
 * <p><b>Checked mode</b> (see {@link Builder#checked}) turns a double free, a pointer that was
 * never allocated, an interior or misaligned pointer, and a pointer of another allocator into an
 * {@link IllegalArgumentException} or {@link IllegalStateException} that names the problem. A free
 * changes the block's state by a CAS, so of two threads freeing one block at once exactly one
 * succeeds. Freed blocks and large runs wait in a quarantine of the freeing thread's cache (a FIFO
 * of at most {@link Builder#quarantineBytes} bytes, default 256 KiB) before they are reused, so a
 * stale free (a second free after the program allocated the same size again) is reported while
 * the block is in quarantine or free; once the block was handed out again, a stale free of it
 * cannot be told from its new owner's free, and succeeds (CheckedMode's notes). Checked mode is
 * off by default: the CAS and the quarantine's cold reuse about halve the allocate+free fast path
 * (AllocFastPath pair, 16 B, 3 forks, on a 2-core VM whose uncontended CAS costs 12 ns: 17.4 ± 2.9
 * vs 37.2 ± 2.2 pairs/us in one invocation); the system property {@value #CHECKED_PROPERTY}{@code =true}
 * turns it on for every allocator that does not choose. Without it, null, misaligned, out-of-region and foreign
 * pointers, pages that hold no allocation, a large block freed twice, a small block freed twice in
 * a row by the same thread, and (by {@link #freeBatch} and on the rare path of a virtual thread,
 * or a platform thread without a participant id, that finds every striped cache busy) interior
 * pointers are still rejected.
 *
 * <p>Platform threads get a cache each, found through their {@linkplain Participants participant
 * id}; virtual threads share striped caches, claimed for one call. A platform thread that finds
 * every id held by a live thread (more than {@code limbo.participants} at once) shares the stripes
 * too, and each such call is counted in {@link AllocatorStats#participantFallbacks()}.
 *
 * <p>Other double frees and interior pointers into small blocks go unnoticed in unchecked mode.
 * They damage <em>user data</em>: the block may be handed out twice, an interior pointer is handed
 * out as a block that overlaps two, and a superblock counted empty too early goes back to the page
 * allocator while blocks of it are still in use, so data in other blocks (even of other allocators,
 * which share the page allocator) may be overwritten. They never damage the allocator's metadata:
 * the region header, the page map, the descriptors, their anchors and the partial and recycle
 * stacks. Every link the allocator follows through free blocks is checked to lead to a block
 * inside the superblock it belongs to (or, for a thread cache's links between superblocks, to a
 * block of this allocator and size class), every walk of a superblock's list stops at its block
 * count, and a list found broken is dropped at that point instead of followed (its blocks leak;
 * {@link AllocatorStats#brokenLists()} counts such lists).
 *
 * <p><b>Debug mode</b> is checked mode (with its quarantine) that also poisons freed blocks and
 * reports a write into a freed block when the block leaves the quarantine or is reused.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Rooms: this class is the facade (settings, the public operations, pointer validation, the
 * direct paths of a call that finds every stripe busy). A free passes through the rooms once, in
 * one direction: facade (ownerOf) -> CacheRegistry (the calling thread's cache, or a stripe) ->
 * ThreadCache (push) -> CheckedMode (quarantine) / OwnedSuperblocks (local list) -> SuperblockHeap
 * (remote list, flush) or LargeRuns. An allocate takes the same way; freeBatch and the direct
 * paths go from the facade straight to SuperblockHeap and LargeRuns. Each room's notes give its
 * algorithm, invariants and memory ordering; the superblock protocol (anchors, remote lists,
 * orderings (1)-(9)) is SuperblockHeap's.
 *
 * Linearization points: those of the room an operation reaches (ThreadCache, SuperblockHeap,
 * LargeRuns, CheckedMode). freeBatch validates every entry before it frees any; it is not atomic
 * as a whole, each run linearizes on its own.
 *
 * Progress: allocate and free are lock-free (the rooms' CAS loops retry only when another
 * thread's CAS succeeded). The release hook (adopt) and close() hold the Lifecycle's monitor, so
 * that a dead thread's cache is never flushed into superblocks that close() is giving back;
 * neither runs on an allocation path.
 *
 * Memory ordering: closed is volatile, written under the Lifecycle's monitor by close() and read
 * by every call before it uses a cache it has not found already (checkOpen) and by adopt; it
 * guards no data (the caller must order its calls after close(), see close()). Every other
 * ordered access is in a room.
 *
 * Reclamation and ABA: see SuperblockHeap (descriptors), LargeRuns (owner words), CacheRegistry
 * (caches).
 * }</pre>
 */
public final class LimboAllocator implements OffHeapAllocator, AutoCloseable {

    /** Offsets of whole words in the region are below this. */
    static final long WORD_LIMIT = Words.SEGMENT.byteSize() - 7;

    final int id;
    /** The tag of this allocator's small blocks' owner words (PageMap.smallTag). */
    final long smallTag;
    final boolean checked;
    final boolean debug;
    /** Checked mode's block states, quarantines and poison; null in unchecked mode. */
    final CheckedMode checkedMode;
    private final long quarantineBytes;
    final FlushPolicy policy;
    /** Whether owned superblocks take other threads' frees on remote lists (OWNER_RETURN, OWNED). */
    final boolean remoteFrees;
    final int[] cap = new int[SizeClasses.COUNT + 1];
    private final BestFitPageAllocator pages = BestFitPageAllocator.global();
    /** The superblocks, their descriptors and remote lists. */
    final SuperblockHeap heap;
    /** The large runs. */
    final LargeRuns large;
    /** The thread caches, by participant id, and the stripes. */
    final CacheRegistry registry;
    /** The registry's lookup by thread id, held here so that allocate and free find a cache in as few loads. */
    private final ThreadCache[] byThreadId;
    /** The id, the memory and the release hook that {@link #close()} (or the cleaner) gives back. */
    private final Lifecycle lifecycle;
    private final Cleaner.Cleanable cleanable;
    /** Whether this is {@link #shared()}, which refuses to close. */
    private final boolean shared;
    /** Set by {@link #close()}; every call checks it before it uses a cache it has not found already. */
    private volatile boolean closed;

    private LimboAllocator(final Builder b, final boolean shared) {
        final Descriptors descriptors = new Descriptors(pages);
        final AtomicLong largeBytes = new AtomicLong();
        this.lifecycle = new Lifecycle(descriptors, largeBytes, pages);
        this.id = lifecycle.id;
        this.shared = shared;
        this.smallTag = PageMap.smallTag(id);
        this.checked = b.checked || b.debug;
        this.debug = b.debug;
        this.quarantineBytes = b.quarantineBytes;
        this.heap = new SuperblockHeap(id, checked, pages, descriptors);
        this.large = new LargeRuns(id, pages, largeBytes);
        this.checkedMode = checked ? new CheckedMode(large, debug, quarantineBytes) : null;
        this.policy = b.policy;
        this.remoteFrees = policy == FlushPolicy.OWNER_RETURN || policy == FlushPolicy.OWNED;
        for (int sc = 1; sc <= SizeClasses.COUNT; sc++) {
            // OWNED: the list holds blocks of the current superblock (or of one fill), never more than a page's worth.
            cap[sc] = policy == FlushPolicy.OWNED ? Integer.MAX_VALUE
                    : (int) Math.max(8, Math.min(PageMap.blocks(sc), b.cacheBytes / SizeClasses.size(sc)));
        }
        this.registry = new CacheRegistry(this);
        this.byThreadId = registry.byThreadId;
        // The hook and the cleaner action reference the allocator weakly or not at all, so that an
        // allocator nobody references can be collected (and then closed by the cleaner).
        lifecycle.hook(Participants.onRelease(new AdoptHook(new WeakReference<>(this))));
        this.cleanable = Lifecycle.CLEANER.register(this, lifecycle);
    }

    /** The release hook: adopts a departed thread's cache while the allocator is reachable. */
    private record AdoptHook(WeakReference<LimboAllocator> allocator) implements IntConsumer {
        @Override
        public void accept(final int participant) {
            final LimboAllocator a = allocator.get();
            if (a != null) {
                a.adopt(participant);
            }
        }
    }

    /** An allocator with the default settings. */
    public static LimboAllocator create() {
        return builder().build();
    }

    /**
     * The process-wide allocator with the default settings, created on first use and never closed
     * (its {@link #close()} throws): what components use when they are given no allocator, so that
     * building and closing them in a loop creates no allocator each time.
     */
    public static LimboAllocator shared() {
        return Shared.INSTANCE;
    }

    /** Holds {@link #shared()}, created on first use. */
    private static final class Shared {
        static final LimboAllocator INSTANCE = new LimboAllocator(new Builder(), true);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** System property: the default of {@link Builder#checked} ({@code true} or {@code false}, default false). */
    public static final String CHECKED_PROPERTY = "limbo.alloc.checked";

    /** Settings of a {@link LimboAllocator}. */
    public static final class Builder {
        private boolean checked = Boolean.getBoolean(CHECKED_PROPERTY);
        private boolean debug;
        private FlushPolicy policy = FlushPolicy.OWNED;
        private long cacheBytes = 64 << 10;
        private long quarantineBytes = CheckedMode.DEFAULT_QUARANTINE_BYTES;

        /** Checked mode: clear exceptions for bad pointers (default: {@value LimboAllocator#CHECKED_PROPERTY}, else off). */
        public Builder checked(final boolean on) {
            this.checked = on;
            return this;
        }

        /** Debug mode: checked, plus poisoning and write-after-free detection. */
        public Builder debug(final boolean on) {
            this.debug = on;
            return this;
        }

        /**
         * Checked and debug mode: the most bytes of freed blocks and large runs that each cache keeps
         * in quarantine (out of reuse, so that a stale free of them is caught) before it reuses them;
         * default 256 KiB. 0 turns the quarantine off. A block or run larger than the bound is not
         * quarantined. Ignored in unchecked mode.
         */
        public Builder quarantineBytes(final long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("quarantine size must not be negative, was " + bytes);
            }
            this.quarantineBytes = bytes;
            return this;
        }

        /** The flush policy (default {@link FlushPolicy#OWNED}); not null. */
        public Builder flushPolicy(final FlushPolicy p) {
            this.policy = Objects.requireNonNull(p, "flush policy");
            return this;
        }

        /** The most bytes a cache holds per size class before it flushes (at least 8 blocks). */
        public Builder cacheBytesPerClass(final long bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("cache size must be positive, was " + bytes);
            }
            this.cacheBytes = bytes;
            return this;
        }

        /**
         * A new allocator with these settings. Close it when done with it; one that becomes
         * unreachable unclosed is closed by a cleaner after garbage collection.
         *
         * @throws IllegalStateException if 65,535 allocators are open in this JVM
         */
        public LimboAllocator build() {
            return new LimboAllocator(this, false);
        }
    }

    @Override
    public String name() {
        return "limbo";
    }

    @Override
    public MemorySegment memory() {
        return Words.SEGMENT;
    }

    /** The settings this allocator was built with, for reports. */
    public String describe() {
        return String.format(Locale.ROOT, "limbo#%d[policy=%s, checked=%s, debug=%s, quarantine=%d KiB, page=%d KiB]",
                id, policy, checked, debug, checked ? quarantineBytes >> 10 : 0, PageMap.PAGE >> 10);
    }

    // ---------------------------------------------------------------- public operations

    /**
     * Allocates {@code bytes} (8-byte aligned; blocks of a power-of-two class are aligned to it).
     *
     * @throws IllegalArgumentException if {@code bytes} is not positive
     * @throws OffHeapOutOfMemoryError  if the region or the commit limit is exhausted; the message
     *                                  names the limit and the property that raises it
     */
    @Override
    public long allocate(final long bytes) {
        final ThreadCache cache = CacheRegistry.known(byThreadId);
        if (cache != null) {
            return cache.allocateOwned(bytes);
        }
        checkOpen();
        if (!Thread.currentThread().isVirtual()) {
            final ThreadCache local = registry.localCache();
            if (local != null) {
                return local.allocateOwned(bytes);
            }
            registry.participantFallbacks.increment(); // no participant id: share the stripes as virtual threads do
        }
        return allocateShared(bytes);
    }

    /**
     * Allocates through a striped cache (virtual threads, platform threads without a participant id
     * or whose cache trim() holds at the moment), or without a cache when every stripe is busy.
     */
    long allocateShared(final long bytes) {
        final ThreadCache stripe = registry.claimStripe();
        if (stripe == null) {
            return allocateDirect(bytes);
        }
        try {
            return stripe.allocateHere(bytes);
        } finally {
            stripe.release();
        }
    }

    /** Allocates {@code bytes} and zeroes them. */
    public long allocateZeroed(final long bytes) {
        final long ptr = allocate(bytes);
        Words.SEGMENT.asSlice(ptr, bytes).fill((byte) 0);
        return ptr;
    }

    /**
     * Frees {@code ptr}.
     *
     * @throws IllegalArgumentException if {@code ptr} is misaligned, outside the region, interior to a
     *                                  block, or belongs to another allocator or to none
     * @throws IllegalStateException    (checked mode) if the block is already free
     */
    @Override
    public void free(final long ptr) {
        final ThreadCache cache = CacheRegistry.known(byThreadId);
        if (cache != null) {
            cache.freeOwned(ptr);
            return;
        }
        checkOpen();
        if (!Thread.currentThread().isVirtual()) {
            final ThreadCache local = registry.localCache();
            if (local != null) {
                local.freeOwned(ptr);
                return;
            }
            registry.participantFallbacks.increment(); // no participant id: share the stripes as virtual threads do
        }
        freeShared(ptr);
    }

    /** Frees as {@link #allocateShared} allocates. */
    void freeShared(final long ptr) {
        final ThreadCache stripe = registry.claimStripe();
        if (stripe == null) {
            freeDirect(ptr);
            return;
        }
        try {
            stripe.freeHere(ptr);
        } finally {
            stripe.release();
        }
    }

    /**
     * Frees a segment returned by {@link #asSegmentAllocator()}.
     *
     * @throws IllegalArgumentException if {@code segment} is not a segment of the off-heap region, or
     *                                  as {@link #free(long)} for the pointer at its start
     * @throws IllegalStateException    as {@link #free(long)}
     */
    public void free(final MemorySegment segment) {
        checkOpen();
        final long offset = Objects.requireNonNull(segment, "segment").address() - Words.SEGMENT.address();
        if (!segment.isNative() || Long.compareUnsigned(offset, Words.SEGMENT.byteSize()) >= 0) {
            throw new IllegalArgumentException(segment + " is not a segment of the off-heap region: only segments "
                    + "of asSegmentAllocator() can be freed");
        }
        free(offset);
    }

    /**
     * Frees {@code n} pointers at once, grouped by superblock so that each superblock's run costs one
     * CAS (the batch-free fix for reclaimers, digest §7.4). Reorders the first {@code n} entries of
     * {@code ptrs}. All or nothing: every entry is validated (as {@link #free} validates, plus
     * interior pointers into small blocks and entries that appear twice, in either mode) before any
     * of them is freed, so a batch that throws frees nothing. (A block that another thread frees at
     * the same time is the exception: the race is reported, but the batch may be half freed.)
     *
     * @throws IllegalArgumentException as {@link #free}, or if {@code n} is out of range
     * @throws IllegalStateException    as {@link #free}, or if a pointer appears twice in the batch
     */
    public void freeBatch(final long[] ptrs, final int n) {
        checkOpen();
        if (n < 0 || n > ptrs.length) {
            throw new IllegalArgumentException("batch length " + n + " out of range [0, " + ptrs.length + "]");
        }
        Arrays.sort(ptrs, 0, n);
        for (int i = 0; i < n; i++) {
            final long ptr = ptrs[i];
            final long owner = ownerOf(ptr);
            if (i > 0 && ptrs[i - 1] == ptr) {
                throw new IllegalStateException(String.format(Locale.ROOT,
                        "double free: 0x%x appears twice in one batch", ptr));
            }
            if (owner >>> PageMap.TAG_SHIFT == smallTag) {
                checkBlock(ptr, owner, checked);
            } else {
                large.check(ptr, owner);
            }
        }
        // Every entry is valid: free the large ones, keeping the small ones in front, still sorted.
        int small = 0;
        for (int i = 0; i < n; i++) {
            final long ptr = ptrs[i];
            final long owner = PageMap.owner(ptr >>> PageMap.PAGE_SHIFT);
            if (owner >>> PageMap.TAG_SHIFT == smallTag) {
                ptrs[small++] = ptr;
            } else {
                large.free(ptr, owner);
            }
        }
        if (checked) {
            for (int i = 0; i < small; i++) {
                checkedMode.markFreed(ptrs[i], PageMap.owner(ptrs[i] >>> PageMap.PAGE_SHIFT)); // poisons in debug mode
            }
        }
        int i = 0;
        long freed = 0;
        while (i < small) {
            final long page = ptrs[i] >>> PageMap.PAGE_SHIFT;
            final long owner = PageMap.owner(page);
            final int sc = PageMap.sizeClass(owner);
            final int size = SizeClasses.size(sc);
            int j = i + 1;
            while (j < small && (ptrs[j] >>> PageMap.PAGE_SHIFT) == page) {
                j++;
            }
            // Link the run in address order through relative links; one CAS returns it.
            for (int k = i; k < j - 1; k++) {
                Words.sp(ptrs[k], ptrs[k + 1] - (ptrs[k] + size));
            }
            if (!remoteFrees || !heap.pushRemoteRun(PageMap.descriptor(owner), ptrs, i, j)) {
                heap.flushRun(PageMap.descriptor(owner), ptrs[i], ptrs[j - 1], j - i, sc);
            }
            freed += (long) (j - i) * size;
            i = j;
        }
        registry.uncachedNet.addAndGet(-freed);
    }

    /** The usable size of an allocated pointer: its class size, or its page-rounded size if large. */
    public long usableSize(final long ptr) {
        checkOpen();
        final long owner = ownerOf(ptr);
        checkOwnership(ptr, owner, id);
        if (PageMap.kind(owner) == PageMap.SMALL) {
            checkBlock(ptr, owner, checked);
            return SizeClasses.size(PageMap.sizeClass(owner));
        }
        large.check(ptr, owner);
        return PageMap.header(ptr >>> PageMap.PAGE_SHIFT) << PageMap.PAGE_SHIFT;
    }

    /**
     * Resizes: returns {@code ptr} if it already has room, else allocates, copies and frees.
     * {@code ptr == 0} allocates.
     */
    public long reallocate(final long ptr, final long bytes) {
        checkOpen();
        if (ptr == 0) {
            return allocate(bytes);
        }
        if (bytes <= 0) {
            throw new IllegalArgumentException("reallocation size must be positive, was " + bytes);
        }
        final long usable = usableSize(ptr);
        if (bytes <= usable) {
            return ptr;
        }
        final long fresh = allocate(bytes);
        MemorySegment.copy(Words.SEGMENT, ptr, Words.SEGMENT, fresh, usable);
        free(ptr);
        return fresh;
    }

    /**
     * A {@link SegmentAllocator} whose segments are slices of the region. Free them with
     * {@link #free(MemorySegment)}. Alignments up to the page size are honoured, or up to the
     * alignment of the region's base address if that is smaller (it is at least the OS page size):
     * a segment's address is the base plus an offset, so no offset can align it further. A negative
     * size or a bad alignment is rejected with {@link IllegalArgumentException} before anything is
     * allocated.
     */
    public SegmentAllocator asSegmentAllocator() {
        checkOpen();
        final long maxAlignment = Math.min(PageMap.PAGE, Long.lowestOneBit(Words.SEGMENT.address()));
        return (byteSize, byteAlignment) -> {
            if (byteSize < 0) {
                throw new IllegalArgumentException("segment size must not be negative, was " + byteSize);
            }
            if (byteAlignment <= 0 || Long.bitCount(byteAlignment) != 1 || byteAlignment > maxAlignment) {
                throw new IllegalArgumentException("alignment must be a power of two up to " + maxAlignment
                        + ", was " + byteAlignment);
            }
            final long size = Math.max(1, byteSize);
            final long ptr = allocate(alignedRequest(size, byteAlignment));
            return Words.SEGMENT.asSlice(ptr, byteSize);
        };
    }

    /**
     * The calling platform thread's cache, for callers that want to skip the lookup. Only this thread
     * may use it: its {@code allocate} and {@code free} throw {@link IllegalStateException} on another
     * thread, and after this thread {@linkplain Participants#close() closed} its participant id
     * (which retires the cache; call {@code context()} again).
     *
     * @throws IllegalStateException on a virtual thread, or on a platform thread that holds no
     *                               participant id because all {@link Participants#CAPACITY} are held
     *                               by live threads (its {@code allocate} and {@code free} share the
     *                               striped caches instead)
     */
    public ThreadCache context() {
        checkOpen();
        if (Thread.currentThread().isVirtual()) {
            throw new IllegalStateException("virtual threads share striped caches; call allocate/free directly");
        }
        final ThreadCache cache = registry.localCache();
        if (cache == null) {
            throw new IllegalStateException(String.format(Locale.ROOT,
                    "no thread cache for this thread: all %d participant ids are held by live threads; raise -D%s, "
                            + "or call allocate/free directly (they share the striped caches then)",
                    Participants.CAPACITY, Participants.CAPACITY_PROPERTY));
        }
        return cache;
    }

    /**
     * Returns the calling thread's cached blocks, the blocks of every striped cache that no virtual
     * thread is using at the moment, adopts the caches of terminated threads, returns the blocks of
     * the spare caches and of every other live thread that is not inside an allocation or a free
     * at the moment (parked, blocked, or busy elsewhere), and decommits every free page run.
     * Returns the bytes decommitted. A thread that is inside an operation drains its cache itself,
     * at its next allocation or free (at the latest at its next decay pass). Draining an idle
     * thread's cache takes a {@code membarrier} system call; where the kernel lacks it, or with
     * {@code -Dlimbo.alloc.drainIdleCaches=false}, every other live thread drains its own cache
     * that way, and a thread that stays idle keeps its cache until then.
     */
    public long trim() {
        checkOpen();
        final ThreadCache local = registry.drainIdle();
        synchronized (lifecycle) { // no release hook adopts or retires a cache meanwhile
            if (!closed) {
                registry.drainOwners(local);
            }
        }
        return pages.trim();
    }

    /**
     * A snapshot of this allocator's state. While threads allocate and free it is approximate (each
     * cache's counts are read racily); while none does, it is exact, also while the release hook
     * of a thread that died moves that thread's cache to the spares (on the Cleaner's thread, or in
     * a reap): the hook and this snapshot hold the same monitor, so the cache counts once.
     */
    public AllocatorStats stats() {
        checkOpen();
        final long[] totals; // small bytes in use, cached, quarantined runs
        synchronized (lifecycle) { // no release hook moves a cache between the lists meanwhile
            totals = registry.totals();
        }
        final long net = totals[0] + large.bytes();
        final long cached = totals[1];
        final long[] states = heap.superblockStates();
        return new AllocatorStats(net, large.bytes() - totals[2], cached, states[0], states[1], states[2],
                states[3], pages.committedBytes(), pages.retainedBytes(),
                Region.global().committedBytes(), heap.brokenLists(),
                registry.participantFallbacks.sum());
    }

    @Override
    public String toString() {
        return describe();
    }

    // ---------------------------------------------------------------- lifecycle

    /**
     * Frees everything this allocator holds: every block it handed out that is still allocated,
     * small or large, every block in its caches, its superblocks and its descriptor table go back
     * to the shared page allocator (which keeps or decommits them as {@link #trim()} describes), its
     * id becomes free for a new allocator, and its participant release hook is unregistered. Then
     * every call but {@link #describe()}, {@link #toString()}, {@link #name()}, {@link #memory()},
     * {@link #isClosed()} and {@code close()} itself throws {@link IllegalStateException}, and so do
     * the {@linkplain #context() contexts} and {@linkplain #asSegmentAllocator() segment allocators}
     * it gave out. Idempotent.
     *
     * <p>The caller must make sure that no other thread uses the allocator while it closes, and
     * that later calls happen after it (a join, a lock, a volatile flag): a call that races with
     * {@code close()} may still find its thread's cache and hand out or free blocks of pages that
     * are no longer this allocator's, which costs user data, as any use after free does. Pointers
     * from this allocator must not be used after it closed: their pages may belong to another
     * allocator by then.
     *
     * <p>An allocator that becomes unreachable without {@code close()} is closed the same way by a
     * {@link Cleaner} after a garbage collection, as an {@link Arena#ofAuto() automatic arena} is:
     * keep a reference to it for as long as its blocks are in use.
     *
     * @throws IllegalStateException for {@link #shared()}, which other components use and which
     *                               lives as long as the JVM
     */
    @Override
    public void close() {
        if (shared) {
            throw new IllegalStateException("LimboAllocator.shared() cannot be closed: it is the allocator of every "
                    + "component built without one, and lives as long as the JVM; close an allocator of your own "
                    + "from LimboAllocator.create() instead");
        }
        synchronized (lifecycle) { // no release hook adopts a cache meanwhile
            if (closed) {
                return;
            }
            closed = true;
            registry.close();
        }
        cleanable.clean(); // runs the lifecycle once: the cleaner will not
    }

    /** Whether {@link #close()} ran. */
    public boolean isClosed() {
        return closed;
    }

    /**
     * The participant release hook: the registry adopts the departed thread's cache, under the
     * Lifecycle's monitor so that a dead thread's cache is never flushed into superblocks that
     * close() is giving back.
     */
    private void adopt(final int participant) {
        synchronized (lifecycle) {
            if (!closed) {
                registry.adopt(participant);
            }
        }
    }

    private void checkOpen() {
        if (closed) {
            throw closedError();
        }
    }

    /** The error of every call after {@link #close()}. */
    IllegalStateException closedError() {
        return new IllegalStateException(describe() + " is closed: close() gave all its memory back, and the "
                + "allocator takes no calls any more");
    }

    // ---------------------------------------------------------------- direct paths (virtual threads, no stripe)

    private long allocateDirect(final long bytes) {
        if (Long.compareUnsigned(bytes - 1, SizeClasses.MAX_SMALL) >= 0) {
            return large.allocate(bytes);
        }
        final int sc = SizeClasses.classOf(bytes);
        final ThreadCache scratch = new ThreadCache(this, null); // rare: every stripe was busy
        heap.fill(scratch, sc);
        final long block = scratch.head(sc);
        final int n = scratch.count(sc);
        final int size = SizeClasses.size(sc);
        if (n > 1) {
            heap.flushList(block + size + Words.lp(block), n - 1, sc);
        }
        if (checked) {
            checkedMode.markAllocated(block, sc);
        }
        registry.uncachedNet.addAndGet(size);
        return block;
    }

    private void freeDirect(final long ptr) {
        final long owner = ownerOf(ptr);
        if (owner >>> PageMap.TAG_SHIFT != smallTag) {
            large.freeNotSmall(ptr, owner);
            return;
        }
        if (checked) {
            checkedMode.markFreed(ptr, owner); // no quarantine on this rare path; poisons in debug mode
        } else {
            checkBlock(ptr, owner, false); // a rare path: it can afford the interior check
        }
        final int sc = PageMap.sizeClass(owner);
        registry.uncachedNet.addAndGet(-SizeClasses.size(sc));
        if (!remoteFrees || !heap.pushRemote(PageMap.descriptor(owner), ptr)) {
            heap.flushRun(PageMap.descriptor(owner), ptr, ptr, 1, sc);
        }
    }

    // ---------------------------------------------------------------- checks

    /** The page owner word of {@code ptr}, after range and alignment checks. */
    static long ownerOf(final long ptr) {
        // The same unsigned comparison as the segment's bounds check of a word at ptr, so that the
        // JIT can drop that later check; a constant, so no load.
        if ((ptr & 7) != 0 || Long.compareUnsigned(ptr, WORD_LIMIT) >= 0 || ptr == 0) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    ptr == 0 ? "the null pointer (0) is not a block" : (ptr & 7) != 0
                            ? "misaligned pointer 0x%x: blocks are 8-byte aligned"
                            : "pointer 0x%x is outside the off-heap region", ptr));
        }
        return PageMap.owner(ptr >>> PageMap.PAGE_SHIFT);
    }

    /** Checks that {@code ptr}, whose page's owner word is {@code owner}, is allocated by allocator {@code id}. */
    static void checkOwnership(final long ptr, final long owner, final int id) {
        if (PageMap.kind(owner) == PageMap.NONE) {
            throw new IllegalStateException(String.format(Locale.ROOT,
                    "pointer 0x%x is not allocated: freed already, or never returned by an allocator", ptr));
        }
        if (PageMap.allocator(owner) != id) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "pointer 0x%x belongs to allocator #%d, not to this one (#%d)", ptr, PageMap.allocator(owner), id));
        }
    }

    static IllegalStateException notAllocated(final long ptr, final int size) {
        return new IllegalStateException(String.format(Locale.ROOT,
                "block 0x%x (%d bytes) is not allocated: a double free, or a pointer never returned by allocate",
                ptr, size));
    }

    /** Checks that {@code ptr} starts a block; if {@code allocated}, that the block is allocated. */
    static void checkBlock(final long ptr, final long owner, final boolean allocated) {
        final int sc = PageMap.sizeClass(owner);
        final int size = SizeClasses.size(sc);
        final long offset = ptr & PageMap.PAGE_MASK;
        final int index = SizeClasses.divide(offset, sc);
        if ((long) index * size != offset || index >= PageMap.blocks(sc)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "interior pointer 0x%x: it is %d bytes into a %d-byte block", ptr, offset % size, size));
        }
        if (allocated && BlockStates.get(ptr >>> PageMap.PAGE_SHIFT, index) != BlockStates.ALLOCATED) {
            throw notAllocated(ptr, size);
        }
    }

    private static long alignedRequest(final long size, final long alignment) {
        if (alignment <= Long.BYTES || size > SizeClasses.MAX_SMALL) {
            return size; // every block is 8-aligned; large runs are page-aligned
        }
        for (long s = (size + alignment - 1) & -alignment; s <= SizeClasses.MAX_SMALL; s += alignment) {
            if (SizeClasses.size(SizeClasses.classOf(s)) % alignment == 0) {
                return SizeClasses.size(SizeClasses.classOf(s));
            }
        }
        return SizeClasses.MAX_SMALL + 1; // a page run
    }
}
