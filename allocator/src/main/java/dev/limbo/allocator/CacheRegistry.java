package dev.limbo.allocator;

import dev.limbo.allocator.internal.PageMap;
import dev.limbo.core.Participants;
import dev.limbo.core.StripedCounter;
import dev.limbo.core.internal.Native;
import dev.limbo.core.internal.NativeCallException;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The thread caches of a {@link LimboAllocator}: platform threads' caches by participant id (and a
 * direct-mapped lookup by thread id), the striped caches that virtual threads (and platform
 * threads without a participant id) claim for one call, the spare caches of terminated threads,
 * the adoption and retirement of caches, the tags that owning caches carry in owner words, and
 * the walks over all caches that trim, stats and close make.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm: a cache per platform thread, found through its participant id (no ThreadLocal, whose
 * entries would keep the allocator reachable from every thread that used it) and cached by thread
 * id in a direct-mapped array; STRIPES caches that a virtual thread claims by a CAS for one call
 * (IdleCacheHandshake (C1)/(C2)); a terminated thread's cache is adopted through the participant
 * release hook and kept whole as a spare for the next new thread (mimalloc's reclaim of abandoned
 * heaps), or drained and retired when the spares are full.
 *
 * Invariants:
 *  - caches[i] is null or the cache of the thread that holds participant id i (or held it: the
 *    release hook removes it before the id passes on); only the holder installs it.
 *  - A cache is used by one thread at a time: its owner (ownerId), the claimer of a stripe, the
 *    thread that adopts or retires it while no thread owns it, or trim() while it holds the claim
 *    of a cache whose owner is outside its operations (IdleCacheHandshake; trim() claims platform
 *    threads' caches under the Lifecycle's monitor, which adopt and retire hold too). A retired
 *    cache's ownerId is -1, so no lookup finds it again; its blocks were returned and its tag freed.
 *  - A tag is on freeTags only after the drain of its cache cleared every owner word carrying it.
 *  - uncachedNet + the caches' taken - returned - cached bytes = the small bytes in use.
 *
 * Linearization points: none of the allocator's operations linearize here; a lookup only finds
 * the cache whose operation linearizes (ThreadCache, SuperblockHeap).
 *
 * Progress: the lookups are wait-free (loads; a miss takes a participant id, lock-free, and may
 * reap terminated threads); a stripe claim is one CAS per stripe tried; adopt and retire run on
 * a thread that frees a participant id, under the Lifecycle's monitor (the facade takes it), never
 * on an allocation path; the tag pool takes its own monitor only when a cache is created or
 * retired.
 *
 * Memory ordering: byThreadId entries are plain; a racy read sees null, an older cache or a newer
 * one, and the owner-id check admits only the calling thread's own cache, whose fields it wrote
 * itself (or received through a spare hand-over). (1) the volatile compareAndSet of adopt that
 * puts a cache into spares, paired with (2), the volatile get-and-set of takeSpare that takes it
 * out: the new owner acquires the adopting thread's writes (which saw the dead thread's, see
 * takeSpare). caches[] set/getAndSet are volatile. The tag pool's monitor orders the clears of a
 * retired cache's owner words before the next owner of its tag reads them (OwnedSuperblocks).
 *
 * Reclamation and ABA: caches are heap objects, collected by the GC; a stale reference to a
 * retired cache is harmless (ownerId -1, never matches). Thread ids are never reused, so an owner
 * id cannot match a later thread. A tag is reused only after freeTag (see above).
 * }</pre>
 */
final class CacheRegistry {

    private static final int STRIPES = Integer.highestOneBit(
            Math.max(1, Runtime.getRuntime().availableProcessors()) * 4 - 1);
    private static final int BY_THREAD_ID = 4096;

    /** The allocator whose caches these are. */
    private final LimboAllocator allocator;
    /**
     * Platform threads' caches by participant id: found there (or through {@link #byThreadId}), and
     * adopted through the id when it is released. No {@link ThreadLocal}: its entries would keep
     * the allocator reachable from every thread that used it.
     */
    private final AtomicReferenceArray<ThreadCache> caches = new AtomicReferenceArray<>(Participants.CAPACITY);
    /** A direct-mapped cache of {@link #caches} by thread id; see {@link #known}. */
    final ThreadCache[] byThreadId = new ThreadCache[BY_THREAD_ID];
    private final ThreadCache[] stripes = new ThreadCache[STRIPES];
    /**
     * Caches of terminated threads, kept whole (not drained) for the next new thread: under thread
     * churn a new thread starts warm, and nobody walks the dead thread's lists (mimalloc's reclaim
     * of abandoned heaps). At most {@link #STRIPES}; beyond that a dead thread's cache is drained.
     */
    private final AtomicReferenceArray<ThreadCache> spares = new AtomicReferenceArray<>(STRIPES);
    /** Bytes allocated minus bytes freed outside any live cache (batch, direct, retired caches). */
    final AtomicLong uncachedNet = new AtomicLong();
    /** Calls of platform threads that held no participant id: {@link AllocatorStats#participantFallbacks()}. */
    final StripedCounter participantFallbacks = new StripedCounter();

    /** The registry of {@code allocator}'s caches, with its striped caches; the allocator's rooms exist already. */
    CacheRegistry(final LimboAllocator allocator) {
        this.allocator = allocator;
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new ThreadCache(allocator, this);
        }
    }

    /**
     * The calling thread's cache if {@code byThreadId} (this registry's {@link #byThreadId}, which the
     * facade holds too, so that its lookup loads no registry) knows it, else null: a load instead of
     * a {@link ThreadLocal} hash probe. An entry is used only if its owner id matches: only a thread
     * itself ever writes its own id into a cache, and thread ids are never reused, so a racy read of
     * any other value (an older owner's id, 0, or -1 once retired) just misses. Only platform
     * threads' caches are entered, so a hit needs no virtual-thread check. A retired cache's owner
     * id is -1, written by {@link #adopt} on the closing thread itself (program order), so its owner
     * cannot find it again.
     */
    static ThreadCache known(final ThreadCache[] byThreadId) {
        final long threadId = Thread.currentThread().threadId();
        final ThreadCache cache = byThreadId[(int) threadId & (BY_THREAD_ID - 1)];
        return cache != null && cache.ownerId == threadId ? cache : null;
    }

    /**
     * The calling platform thread's cache, or null if the thread holds no participant id and can get
     * none (every id is held by a live thread). The participant id decides when the fast lookup
     * misses.
     */
    ThreadCache localCache() {
        final ThreadCache known = known(byThreadId);
        if (known != null) {
            return known;
        }
        final int participant = Participants.tryCurrent();
        if (participant < 0) {
            return null;
        }
        ThreadCache cache = ownCache(participant);
        if (cache == null) {
            cache = newCache(participant);
        }
        byThreadId[(int) Thread.currentThread().threadId() & (BY_THREAD_ID - 1)] = cache;
        return cache;
    }

    /**
     * The cache of the calling thread, which holds {@code participant}, or null if it has none yet.
     * Only the holder of an id installs a cache under it, and the release hook ({@link #adopt})
     * removes it before the id can pass to another thread; the owner check guards the rest.
     */
    private ThreadCache ownCache(final int participant) {
        final ThreadCache cache = caches.get(participant);
        return cache != null && cache.ownerId == Thread.currentThread().threadId() ? cache : null;
    }

    private ThreadCache newCache(final int participant) {
        Participants.reapTerminated(); // adopt the caches of threads that died since (thread churn)
        final ThreadCache installed = ownCache(participant);
        if (installed != null) {
            return installed; // a release hook run above allocated through this allocator
        }
        ThreadCache cache = takeSpare();
        if (cache == null) {
            cache = new ThreadCache(allocator, this);
        }
        caches.set(participant, cache);
        return cache;
    }

    /** A terminated thread's cache, now the calling thread's; null if there is none. */
    private ThreadCache takeSpare() {
        for (int i = 0; i < spares.length(); i++) {
            // Volatile get-and-set: takes the cache exclusively, and acquires the field writes
            // that adopt's compareAndSet released. adopt saw the dead thread's writes as a drain
            // of the dead thread's cache always has: the id was reaped after isAlive() returned
            // false, or released by the Cleaner once the thread was unreachable.
            // (2) get-and-set; pairs with (1).
            final ThreadCache spare = spares.get(i) == null ? null : spares.getAndSet(i, null);
            if (spare != null) {
                spare.ownerId = Thread.currentThread().threadId();
                return spare;
            }
        }
        return null;
    }

    ThreadCache claimStripe() {
        final int start = (int) Thread.currentThread().threadId();
        for (int i = 0; i < STRIPES; i++) {
            final ThreadCache stripe = stripes[(start + i) & (STRIPES - 1)];
            if (stripe.tryClaim()) {
                return stripe;
            }
        }
        return null;
    }

    /**
     * Participants release hook. It runs while nobody uses the cache: the thread is dead, or it is
     * the closing thread itself. A dead thread's cache becomes a spare, kept whole for the next new
     * thread, while there is room; otherwise (and for a closing thread, whose next call finds the
     * cache retired and makes a new one) the cache is flushed and retired. The facade calls it
     * under the Lifecycle's monitor, and not once the allocator is closed.
     */
    void adopt(final int participant) {
        final ThreadCache cache = caches.getAndSet(participant, null);
        if (cache == null) {
            return;
        }
        if (cache.ownerId != Thread.currentThread().threadId()) { // the owner has terminated
            // The spare keeps its owned superblocks (OWNER_RETURN), and the next thread inherits
            // them: its blocks' remote frees still go home (no passive false sharing after a
            // hand-over). Meanwhile those frees wait on the remote lists; trim() retires the
            // spares, which gives the superblocks up.
            for (int i = 0; i < spares.length(); i++) {
                // (1) compareAndSet (volatile): releases this thread's writes to the cache to (2).
                if (spares.get(i) == null && spares.compareAndSet(i, null, cache)) {
                    return;
                }
            }
        }
        retire(cache);
    }

    /** Empties a cache that nobody will use again, keeping its count in the stats. */
    private void retire(final ThreadCache cache) {
        cache.drain();
        cache.retired = true;
        cache.ownerId = -1; // see known
        uncachedNet.addAndGet(cache.takenBytes - cache.returnedBytes);
        freeTag(cache.tag()); // after the drain cleared every owner word that carried it
    }

    // ---------------------------------------------------------------- cache tags (OWNED)

    /** Cache tags given back by retired caches, for reuse; guarded by itself. */
    private final int[] freeTags = new int[PageMap.MAX_CACHE];
    private int freeTagCount;
    private int nextTag = 1;

    /**
     * A tag for a new owning cache, or -1 if every tag is taken (the cache then owns nothing: its
     * blocks' frees go to remote lists and anchors). A tag is reused only after {@link #freeTag},
     * which runs once no owner word carries it; the monitor orders those clears before the new
     * owner's reads.
     */
    int takeTag() {
        synchronized (freeTags) {
            if (freeTagCount > 0) {
                return freeTags[--freeTagCount];
            }
            return nextTag <= PageMap.MAX_CACHE ? nextTag++ : -1;
        }
    }

    private void freeTag(final int tag) {
        if (tag > 0) {
            synchronized (freeTags) {
                freeTags[freeTagCount++] = tag;
            }
        }
    }

    // ---------------------------------------------------------------- walks over every cache

    /**
     * trim()'s part: drains the calling platform thread's cache and every striped cache that no
     * thread holds, adopts the caches of terminated threads, and retires the spares. Returns the
     * calling thread's cache, or null, for {@link #drainOwners}.
     */
    ThreadCache drainIdle() {
        final ThreadCache local = Thread.currentThread().isVirtual() ? null : localCache();
        if (local != null) {
            drainClaimed(local); // claimed, as another thread's trim() would claim it
        }
        for (final ThreadCache stripe : stripes) {
            drainClaimed(stripe); // a stripe in use is not idle: its next claimer keeps using it
        }
        Participants.reapTerminated();
        for (int i = 0; i < spares.length(); i++) {
            final ThreadCache spare = spares.getAndSet(i, null);
            if (spare != null) {
                retire(spare);
            }
        }
        return local;
    }

    /** Drains {@code cache} if nobody holds its claim. */
    private static void drainClaimed(final ThreadCache cache) {
        if (cache.tryClaim()) {
            try {
                cache.drain();
            } finally {
                cache.release();
            }
        }
    }

    /**
     * trim()'s part for the other platform threads' caches, under the Lifecycle's monitor (so that no
     * release hook adopts or retires one meanwhile): drains each whose owner is outside its
     * operations, by the handshake of {@link IdleCacheHandshake} (claim them all, one membarrier,
     * read each owner's mark), and asks the others to drain themselves at their next operation
     * ({@link ThreadCache#requestDrain}), as it asks them all where the handshake is off.
     */
    void drainOwners(final ThreadCache local) {
        final List<ThreadCache> claimed = new ArrayList<>();
        for (int i = 0; i < caches.length(); i++) {
            final ThreadCache cache = caches.get(i);
            if (cache == null || cache == local) {
                continue;
            }
            if (IdleCacheHandshake.ENABLED && cache.tryClaim()) { // (C1)
                claimed.add(cache);
            } else {
                cache.requestDrain(); // another trim() holds it, or the handshake is off
            }
        }
        if (claimed.isEmpty()) {
            return;
        }
        try {
            Native.membarrier(); // (M)
            for (final ThreadCache cache : claimed) {
                if (cache.ownerIdle()) { // (A4)
                    cache.drain();
                } else {
                    cache.requestDrain();
                }
            }
        } catch (final NativeCallException refused) { // registered at start-up, so not expected
            claimed.forEach(ThreadCache::requestDrain);
        } finally {
            claimed.forEach(ThreadCache::release); // (C2)
        }
    }

    /**
     * stats()'s part (racy reads): {@code {small bytes in use, cached bytes, bytes of large runs in
     * quarantines}}; the cached bytes include those runs, which are not in use.
     */
    long[] totals() {
        final long[] totals = {uncachedNet.get(), 0, 0};
        for (int i = 0; i < caches.length(); i++) {
            addCache(caches.get(i), totals);
        }
        for (int i = 0; i < spares.length(); i++) {
            addCache(spares.get(i), totals);
        }
        for (final ThreadCache c : stripes) {
            addCache(c, totals);
        }
        return totals;
    }

    /**
     * Adds the bytes in use through {@code c} to {@code totals[0]}, its cached bytes to {@code totals[1]},
     * and the bytes of large runs in its quarantine (cached, not in use) to {@code totals[2]}.
     */
    private static void addCache(final ThreadCache c, final long[] totals) {
        if (c != null) {
            final long inCache = c.cachedBytes();
            final long runs = c.quarantinedLargeBytes();
            totals[0] += c.takenBytes - c.returnedBytes - inCache - runs;
            totals[1] += inCache + runs;
            totals[2] += runs;
        }
    }

    /** close()'s part, under the Lifecycle's monitor: marks every cache unusable and forgets it. */
    void close() {
        for (int i = 0; i < caches.length(); i++) {
            abandonClosed(caches.getAndSet(i, null));
        }
        for (int i = 0; i < spares.length(); i++) {
            abandonClosed(spares.getAndSet(i, null));
        }
        for (final ThreadCache stripe : stripes) {
            abandonClosed(stripe);
        }
        Arrays.fill(byThreadId, null);
    }

    /** Marks a cache of a closing allocator unusable; its blocks go back with their superblocks. */
    private static void abandonClosed(final ThreadCache cache) {
        if (cache != null) {
            cache.retired = true;
            cache.ownerId = -1; // see known
        }
    }
}
