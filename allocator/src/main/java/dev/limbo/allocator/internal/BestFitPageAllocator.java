package dev.limbo.allocator.internal;

import dev.limbo.core.OffHeapOutOfMemoryError;
import dev.limbo.core.Region;

import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The lock-free best-fit coalescing allocator of LRMalloc thesis chapter 7, over runs of
 * {@linkplain PageMap#PAGE pages} of the global region. It is the backing store of every
 * superblock and every large allocation, and the place where freed memory is coalesced and given
 * back to the OS.
 *
 * <p>Two structures (thesis §7.4): the <em>map</em>, a header word (run length) at the first page
 * and a footer word (run start) at the last page of every run, kept out of band in the
 * {@link PageMap}; and the <em>trees</em>, ordered sets of free runs keyed by (pages, start), here
 * {@link ConcurrentSkipListSet}s: lock-free, GC-reclaimed nodes (so the thesis' caveat that the
 * tree itself needs SMR does not arise), {@code ceiling} for best fit and an exact {@code remove}.
 * As jemalloc keeps dirty and clean pages apart, there are two trees: committed free runs (the
 * hysteresis reserve) and decommitted ones, never merged with each other; an allocation takes the
 * best fit among committed runs if one fits, and only then among decommitted runs, so that the
 * reserve is reused before new memory is committed.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm and sources: thesis §7.4, Listings 7.3-7.4 (with the typos the digest lists fixed:
 * the previous run's size is start - footer.start). Recursive coalescing (§7.4.4) is used, so a
 * pair of adjacent runs freed at once and inserted uncoalesced merges with the next free of a
 * neighbour. Departures: two trees by commit state (jemalloc's dirty and clean extents); a freed
 * run is retained or decommitted before it coalesces, and coalesces only within its tree; a run
 * grown from the region is coalesced with the decommitted free run that ends where it starts (the
 * free tail); allocate re-checks before it grows while a run is in flight (below).
 *
 * Invariants:
 *  - A run is free if and only if it is in one of the trees (the single authority). Ownership of a
 *    free run, for allocation or for merging, is taken only by removing it from its tree.
 *  - Every page of a run in the committed tree is COMMITTED and RETAINED (counted in
 *    retainedPages); no page of a run in the decommitted tree is COMMITTED.
 *  - The header and footer of a run in a tree are correct; words of runs not in a tree may be
 *    stale at any time.
 *  - Page flags (COMMITTED, DIRTY, RETAINED) are touched only by the run's current owner.
 *  - inFlight counts the operations that hold a run out of the trees which they will insert: a
 *    split's remainder, a free (with the neighbours it merged), a grow. It is a hint for allocate's
 *    re-check; nothing else depends on it.
 * Non-invariants: two adjacent free runs of one tree may both be in it (missed coalescing,
 * §7.4.4); adjacent runs of the two trees stay apart by design.
 *
 * Linearization points: allocate - the successful remove (2) of the chosen run (a run grown from
 * the region is inserted (3) first and taken like any other); free - the insertion (3) of the
 * (merged) run.
 *
 * Progress: lock-free (skip-list operations are lock-free; a retry of allocate follows another
 * thread's successful removal or this thread's grow, and its re-check spins at most RECHECKS
 * times for runs in flight before it grows, so it never waits for another thread unboundedly).
 * Growing calls Region.claim (a CAS loop) and PageMap.charge (a monitor, taken once per grow and
 * held for at most one counter update); commit/decommit are bookkeeping plus madvise, a system call.
 *
 * Memory ordering (numbers local to this file; PageMap's are cited as "PageMap n"):
 *  (1) tree.ceiling, and trim's iteration: volatile reads of the skip list. They may return a run
 *      another thread is removing; (2) validates it.
 *  (2) tree.remove of an exact (pages, start) run: the skip list's CAS that deletes the node, which
 *      one thread at most wins. Success acquires the (3) that inserted the run, and with it the
 *      run's map words (PageMap 4, 6) and page flags.
 *  (3) tree.add: the skip list's insertion CAS (volatile, so release). It publishes the map words
 *      (PageMap 4, 6) and flags written before it; pairs with (1) and (2).
 *  (4) get-and-add of the page counters (free, committed, retained): atomic bookkeeping, read by
 *      (5); no other access depends on their order.
 *  (5) volatile loads of the counters: statistics, and the hysteresis check of free
 *      (benign race: two concurrent frees may both see room and retain, so the reserve can exceed
 *      retainBytes by one run per racing free).
 *  (6) CAS of the committed peak to a larger value, after the (4) that committed; a statistic
 *      read by (5). Retried only while another commit raised the peak but not past ours.
 *  (6b) volatile store of the peak by resetPeak: a statistic, like (6).
 *  (7) get-and-add of inFlight before a run leaves the trees for a split, a free or a grow, and
 *      after its insertion (3); (7b) volatile load of it by an allocate that found no run. A hint:
 *      if (7b) misses a run in flight, allocate grows as it did without the re-check (more address
 *      space and a run that may stay unused, never an overlap); if it sees one that is too small,
 *      it grows after the re-checks.
 *  The map words are read opaquely (PageMap 3, 5) and trusted only after (2) succeeds; region
 *  claim, commit and decommit order themselves (Region).
 *
 * Reclamation and ABA: tree nodes are Java objects reclaimed by the GC. A run key names an extent,
 * not an identity: if a neighbour is allocated and re-formed into an identical (pages, start) free
 * run between our read and our remove, taking it is still correct, since it is free and adjacent.
 * }</pre>
 *
 * <p>Hysteresis: freed runs stay committed while the committed-but-free total is at most
 * {@code retainBytes}; beyond it a freed run is decommitted ({@code madvise(MADV_DONTNEED)})
 * before insertion. {@link #trim()} decommits every free run.
 */
public final class BestFitPageAllocator {

    /** Page flag: the page is charged against the region's commit limit (and may be backed). */
    static final long COMMITTED = 1;
    /** Page flag: the page may hold non-zero bytes. Clean pages read as zeros. */
    static final long DIRTY = 2;
    /** Page flag: a committed page of a free run, counted in {@link #retainedBytes()}. */
    static final long RETAINED = 4;

    private static final BestFitPageAllocator GLOBAL = new BestFitPageAllocator(
            Long.getLong("limbo.alloc.retainBytes", 64L << 20), 64);

    private final Region region = Region.global();
    /** Free runs whose pages are all committed (retained). */
    private final ConcurrentSkipListSet<Run> committed = new ConcurrentSkipListSet<>();
    /** Free runs whose pages are all decommitted. */
    private final ConcurrentSkipListSet<Run> decommitted = new ConcurrentSkipListSet<>();
    /** Operations holding a run out of the trees that they will insert; see the notes. */
    private final AtomicLong inFlight = new AtomicLong();
    private final long retainBytes;
    private final long growPages;
    private final AtomicLong committedPages = new AtomicLong();
    private final AtomicLong retainedPages = new AtomicLong();
    private final AtomicLong freePages = new AtomicLong();
    private final AtomicLong peakPages = new AtomicLong();
    /**
     * How many times an allocate that finds no run looks again, while runs are in flight, before it
     * grows: a split or a merge holds its run out of the trees for a few skip-list operations.
     */
    private static final int RECHECKS = 64;

    /**
     * @param retainBytes free bytes kept committed before freed runs are decommitted
     * @param growPages   pages claimed from the region at once when no free run fits
     */
    public BestFitPageAllocator(final long retainBytes, final long growPages) {
        this.retainBytes = retainBytes;
        this.growPages = growPages;
    }

    /** The allocator every {@code LimboAllocator} draws pages from. */
    public static BestFitPageAllocator global() {
        return GLOBAL;
    }

    /** A free run of {@code pages} pages starting at page {@code start}; ordered by size, then address. */
    record Run(long pages, long start) implements Comparable<Run> {
        @Override
        public int compareTo(final Run o) {
            final int c = Long.compare(pages, o.pages);
            return c != 0 ? c : Long.compare(start, o.start);
        }
    }

    /**
     * Allocates a committed run of {@code pages} pages.
     *
     * @return the first page; {@link #isClean} tells whether the run's pages are all zero
     * @throws OffHeapOutOfMemoryError if the region or the commit limit is exhausted
     */
    public long allocate(final long pages) {
        if (pages <= 0 || pages > PageMap.PAGES) {
            throw new IllegalArgumentException("page run length out of range: " + pages);
        }
        final Run key = new Run(pages, 0);
        int rechecks = 0;
        for (;;) {
            // (1) skip-list reads; the run may be taken meanwhile, which (2) tells. Committed first.
            ConcurrentSkipListSet<Run> tree = committed;
            Run best = committed.ceiling(key);
            if (best == null) {
                tree = decommitted;
                best = decommitted.ceiling(key);
            }
            if (best == null) {
                // (7b) volatile load: a run out of the trees for a moment (a split's remainder, a
                // free, another grow) may fit; look again before claiming new address space.
                if (inFlight.get() > 0 && rechecks++ < RECHECKS) {
                    Thread.onSpinWait(); // not yield: a virtual thread would let others pile up here
                    continue;
                }
                rechecks = 0;
                grow(pages);
                continue;
            }
            final boolean split = best.pages > pages;
            if (split) {
                // (7) the remainder will be out of the trees until its insertion.
                inFlight.incrementAndGet();
            }
            // (2) remove CAS: linearization point; acquires the run's map words and flags.
            if (!tree.remove(best)) {
                if (split) {
                    inFlight.decrementAndGet();
                }
                continue; // another thread took it
            }
            // (4) counter update.
            freePages.addAndGet(-best.pages);
            if (split) {
                insert(tree, best.start + pages, best.pages - pages); // its pages keep their state
                inFlight.decrementAndGet();
            }
            setRun(best.start, pages);
            try {
                commit(best.start, pages);
            } catch (final OffHeapOutOfMemoryError e) {
                // The run is out of the trees: put it back, or it is lost. commit gave up before
                // committing anything (a run from the committed tree needs no commit).
                inFlight.incrementAndGet();
                release(decommitted, best.start, pages);
                throw e;
            }
            return best.start;
        }
    }

    /** Whether every page of the run reads as zeros (never written since claimed or decommitted). */
    public boolean isClean(final long start, final long pages) {
        for (long p = start; p < start + pages; p++) {
            if ((PageMap.flags(p) & DIRTY) != 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Frees a run this caller owns (allocated by {@link #allocate}); its pages are marked dirty, and
     * kept committed while the retained total stays within {@code retainBytes}, else decommitted.
     */
    public void free(final long start, final long pages) {
        // (7) the run is in flight until release inserts it.
        inFlight.incrementAndGet();
        // (5) counter load; benign race (see the notes).
        if ((retainedPages.get() + pages) * PageMap.PAGE > retainBytes) {
            decommit(start, pages);
            release(decommitted, start, pages);
            return;
        }
        for (long p = start; p < start + pages; p++) {
            PageMap.setFlags(p, PageMap.flags(p) | DIRTY | RETAINED);
        }
        // (4) counter update.
        retainedPages.addAndGet(pages);
        release(committed, start, pages);
    }

    /**
     * Coalesces a run this caller owns, in the state of {@code tree}, with its free neighbours in
     * {@code tree} and inserts it there; ends the in-flight count (7) its caller started.
     */
    private void release(final ConcurrentSkipListSet<Run> tree, final long start, final long pages) {
        long s = start;
        long n = pages;
        boolean merged;
        do {
            merged = false;
            // Backward: the footer of the page before us names the start of the run ending there.
            final long prevStart = s > 0 ? PageMap.footer(s - 1) : 0;
            // (2) remove CAS of the exact neighbour run: the merge is ours only if it succeeds.
            if (prevStart > 0 && prevStart < s && tree.remove(new Run(s - prevStart, prevStart))) {
                // (4) counter update.
                freePages.addAndGet(prevStart - s);
                n += s - prevStart;
                s = prevStart;
                merged = true;
            }
            // Forward: the header of the page after us is the length of the run starting there.
            final long next = s + n;
            if (next < PageMap.PAGES) {
                final long nextPages = PageMap.header(next);
                // (2) remove CAS of the exact neighbour run, as above.
                if (nextPages > 0 && nextPages <= PageMap.PAGES - next && tree.remove(new Run(nextPages, next))) {
                    // (4) counter update.
                    freePages.addAndGet(-nextPages);
                    n += nextPages;
                    merged = true;
                }
            }
        } while (merged);
        insert(tree, s, n);
        // (7) inserted: no longer in flight.
        inFlight.decrementAndGet();
    }

    /** Decommits every free run now, merging it with its decommitted neighbours; returns the bytes given back. */
    public long trim() {
        long released = 0;
        // (1) weakly consistent iteration of the skip list.
        for (final Run run : committed) {
            // (7) in flight from before its removal until release inserts it.
            inFlight.incrementAndGet();
            // (2) remove CAS: the run is ours to decommit only if it succeeds.
            if (committed.remove(run)) {
                // (4) counter update.
                freePages.addAndGet(-run.pages);
                released += decommit(run.start, run.pages);
                release(decommitted, run.start, run.pages);
            } else {
                inFlight.decrementAndGet();
            }
        }
        return released * PageMap.PAGE;
    }

    /** Bytes of pages currently committed (in use or retained). */
    public long committedBytes() {
        // (5) counter load.
        return committedPages.get() * PageMap.PAGE;
    }

    /** The most bytes of pages committed at once so far. */
    public long peakCommittedBytes() {
        // (5) counter load.
        return peakPages.get() * PageMap.PAGE;
    }

    /**
     * Starts a new peak: {@link #peakCommittedBytes()} becomes the bytes committed now, and follows
     * later commits; for a measurement over an interval (a benchmark iteration, a test).
     */
    public void resetPeak() {
        // (5) counter load, (6b) volatile store of the peak; a commit racing with it raises the peak
        // by its own CAS (6) if it committed past the value stored.
        peakPages.set(committedPages.get());
    }

    /** Bytes in free runs. */
    public long freeBytes() {
        // (5) counter load.
        return freePages.get() * PageMap.PAGE;
    }

    /** Bytes in free runs that are still committed (the hysteresis reserve). */
    public long retainedBytes() {
        // (5) counter load.
        return retainedPages.get() * PageMap.PAGE;
    }

    /** The number of free runs (a measure of fragmentation). */
    public int freeRuns() {
        return committed.size() + decommitted.size();
    }

    private void grow(final long pages) {
        // (7) the claimed run is in flight until release inserts it; others re-check meanwhile.
        inFlight.incrementAndGet();
        long claim = Math.max(pages, growPages);
        long offset;
        try {
            try {
                offset = region.claim(claim * PageMap.PAGE, PageMap.PAGE);
            } catch (final OffHeapOutOfMemoryError e) {
                if (claim == pages) {
                    throw e;
                }
                claim = pages;
                offset = region.claim(pages * PageMap.PAGE, PageMap.PAGE);
            }
        } catch (final RuntimeException | OffHeapOutOfMemoryError e) {
            inFlight.decrementAndGet();
            throw e;
        }
        final long start = offset >>> PageMap.PAGE_SHIFT;
        try {
            PageMap.charge(start + claim); // the page map's entries of the new pages
        } finally {
            // Inserted even if the charge failed, or the address space would be lost: the entries
            // are then used uncharged (at most one charge step of the table) until a later grow's
            // charge, which starts where the last successful one ended, covers them. Fresh pages
            // (flags 0: decommitted, clean) merge with the decommitted free run ending at start.
            release(decommitted, start, claim);
        }
    }

    private void insert(final ConcurrentSkipListSet<Run> tree, final long start, final long pages) {
        setRun(start, pages);
        // (4) counter update.
        freePages.addAndGet(pages);
        // (3) insertion CAS: linearization point of free; publishes the map words and flags.
        tree.add(new Run(pages, start));
    }

    private static void setRun(final long start, final long pages) {
        PageMap.setHeader(start, pages);
        PageMap.setFooter(start + pages - 1, start);
    }

    /** Commits the uncommitted pages of a run we own, in maximal contiguous ranges. */
    private void commit(final long start, final long pages) {
        long p = start;
        final long end = start + pages;
        while (p < end) {
            final long flags = PageMap.flags(p);
            if ((flags & COMMITTED) != 0) {
                if ((flags & RETAINED) != 0) {
                    PageMap.setFlags(p, flags & ~RETAINED);
                    // (4) counter update.
                    retainedPages.decrementAndGet();
                }
                p++;
                continue;
            }
            long q = p;
            while (q < end && (PageMap.flags(q) & COMMITTED) == 0) {
                q++;
            }
            try {
                region.commit(p << PageMap.PAGE_SHIFT, (q - p) << PageMap.PAGE_SHIFT);
            } catch (final OffHeapOutOfMemoryError e) {
                trim();
                region.commit(p << PageMap.PAGE_SHIFT, (q - p) << PageMap.PAGE_SHIFT);
            }
            for (long r = p; r < q; r++) {
                PageMap.setFlags(r, PageMap.flags(r) | COMMITTED);
            }
            // (4) counter update.
            final long committed = committedPages.addAndGet(q - p);
            // (5) counter load, (6) CAS: raise the peak to what this commit made.
            for (long peak = peakPages.get(); committed > peak; peak = peakPages.get()) {
                if (peakPages.compareAndSet(peak, committed)) {
                    break;
                }
            }
            p = q;
        }
    }

    /** Decommits the committed pages of a run we own; returns how many pages it decommitted. */
    private long decommit(final long start, final long pages) {
        long released = 0;
        long p = start;
        final long end = start + pages;
        while (p < end) {
            if ((PageMap.flags(p) & COMMITTED) == 0) {
                p++;
                continue;
            }
            long q = p;
            long wasRetained = 0;
            while (q < end && (PageMap.flags(q) & COMMITTED) != 0) {
                if ((PageMap.flags(q) & RETAINED) != 0) {
                    wasRetained++;
                }
                PageMap.setFlags(q, 0);
                q++;
            }
            region.decommit(p << PageMap.PAGE_SHIFT, (q - p) << PageMap.PAGE_SHIFT);
            // (4) counter updates.
            committedPages.addAndGet(p - q);
            retainedPages.addAndGet(-wasRetained);
            released += q - p;
            p = q;
        }
        return released;
    }

}
