package dev.limbo.reclaim;

import dev.limbo.core.Participants;
import dev.limbo.core.Words;
import dev.limbo.reclaim.internal.BlockBag;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Scheme {@code stampit}: Stamp-it (Pöter and Träff, "A new and five older Concurrent Memory
 * Reclamation Schemes in Comparison (Stamp-it)", §2.6; the SPAA'18 "Stamp-it: a more
 * thread-efficient, concurrent memory reclamation scheme in the C++ memory model"; digest
 * notes/stamp-it.md §3.6), a region scheme that decides reclamation without scanning threads.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm (§2.6). A region is a section (the outermost pin to the outermost close). Entering
 * pushes the thread's control block onto the stamp queue (StampQueue, its own notes), which gives
 * it a stamp from the global counter H; leaving removes it. Retire stamps the node with H
 * (highest()) and appends it to the thread's local retire list, which is therefore sorted by stamp.
 * A node is safe once its stamp is at most the queue's lowest stamp L (lowest()): every thread in a
 * region then took its stamp after the node's retire, hence after its unlink, and cannot reach it
 * (the report: "less or equal to this lowest stamp"; the digest's "below" holds for its other
 * stamp convention). Reclaiming a list frees from its front and stops at the first node that is not
 * safe: no node is looked at that cannot be freed.
 *  retire: stamp (Q9), append; if the local list holds more than TRY_RECLAIM (40) nodes, reclaim it.
 *  leave: remove from the queue; reclaim the local list; if more than MAX_REMAINING (20) nodes are
 *      left, push the whole list onto the global list as one chunk; if the remove said this thread
 *      held the lowest stamp (the "last" thread, which held reclamation back), reclaim the global
 *      list.
 *  global list: a lock-free stack of chunks, each a stamp-sorted sublist (G1 push by CAS, G2 steal
 *      by getAndSet(0)). Reclaiming it steals the stack, frees each chunk's safe prefix, then reads
 *      L again: while L moved past the first stamp of a surviving chunk, another pass (the report's
 *      cheap re-check, which lets the last thread reclaim reliably at the end of a run); then it
 *      pushes the survivors back in one CAS. A pass costs O(freed + chunks).
 * Thresholds: 40 and 20, the artifact's try_reclaim_threshold and max_remaining_retired_nodes
 * (the report gives no numbers).
 *
 * Lists: intrusive, in three header words per record (ReclaimDomain's header words): the stamp,
 * the next node of its list, the next chunk (valid in a chunk's first node). The local list is the
 * owner's alone (plain accesses); a chunk changes hands through the global stack's CAS (G1, a
 * release) and getAndSet (G2, an acquire), which order every plain header write before its reads.
 * The stack's only removal takes it whole, so its push has no ABA: a CAS that succeeds links the
 * chunk to whatever is on top.
 *
 * Control blocks (ours): on the heap, one 128-byte line per participant id in StampQueue's long[],
 * linked by index words with a version, not off-heap records and not objects. The blocks are
 * per-thread and live as long as the domain; index + version in one word gives a single-word CAS
 * its ABA protection (the report's tagged pointers need 2^18-aligned blocks; object links would need
 * a fresh link object per entry, an allocation on pin, or double-width CAS) and holds no reference
 * for the GC to trace; ordered accesses to heap array elements cost plain moves on x86.
 *
 * Protection: the region protects every record it reaches (no validation capability):
 * protect and protectIfEqual are Guard.sectionProtect (an acquire load of the word, (11)).
 *
 * Safety: a node retired with stamp r is freed only when r <= L. By StampQueue's invariant L, every
 * thread now in a region, or entering later, has a stamp >= L >= r, so its stamp's getAndAdd (Q2)
 * comes after the retire's getAndAdd(H, 0) (Q9) in H's total order (every getAndAdd before (Q9)
 * returned less than r). (Q9) is a volatile write, so the retirer's unlink happens-before every
 * read of those regions: none can reach the node. Threads that were in a region at the retire had
 * stamps < r and have left (their removals are released to the reclaimer by L's CAS (Q10) and its
 * acquire load (Q11)).
 * ABA: a node is freed only when no region can hold it, so a word a region reads cannot name a
 * reused record while that region runs; the queue's own ABA: StampQueue.
 *
 * Linearization points: pin: the push's link CAS (Q5); unpin: the remove's mark (Q8) (the region
 * ends; reclamation follows); protect: its acquire load; retire: the stamp RMW (Q9); the frees:
 * the load of L (Q11) they compared stamps with.
 *
 * Progress: pin and unpin are lock-free (StampQueue); retire is wait-free, plus a local reclaim;
 * a reclaim of the global list makes a pass per increase of L that frees something, each O(freed +
 * chunks), and pushes back with a CAS loop that fails only when another push or steal succeeded.
 *
 * Garbage bound: none. A thread stalled in its region keeps L at most its stamp, so no node
 * retired after it entered is freed (garbageBound(n) = Long.MAX_VALUE; the suite's stalled-thread
 * test shows the growth). Once it leaves, the bound is the thresholds': a thread outside its
 * region keeps at most MAX_REMAINING (20) nodes on its local list (more are reclaimed, or pushed to
 * the global list when it leaves); a thread in a region at most TRY_RECLAIM (40) plus what it
 * retires in that region and is not yet safe; the global list is emptied of every node stamped at most L by
 * each last thread out. So when every thread is out of its regions and one more region has ended
 * (any thread's pin and unpin, or flush), at most n * MAX_REMAINING nodes remain unreclaimed, on the
 * n threads' local lists (StampItTest shows it after a stall).
 *
 * Thread exit: the release hook removes a thread that died inside a region from the queue, reclaims
 * its local list, pushes what is left to the global list, and reclaims the global list, so that a
 * churn of short-lived threads leaves no garbage behind (the report's §4.4, and digest §6.4: the
 * last thread out finds the leftovers of exited threads). A thread that dies outside its regions
 * holds nothing in the queue.
 * }</pre>
 */
final class StampIt extends ReclaimDomain {

    /** The local list's size above which a retire reclaims it (the artifact's try_reclaim_threshold). */
    static final int TRY_RECLAIM = 40;
    /** The local list's size above which leaving pushes it to the global list (max_remaining_retired_nodes). */
    static final int MAX_REMAINING = 20;

    private static final int STAMP = 0;
    private static final int NEXT = 1;
    private static final int NEXT_CHUNK = 2;

    private static final VarHandle GLOBAL;

    static {
        try {
            GLOBAL = MethodHandles.lookup().findVarHandle(StampIt.class, "global", long.class).withInvokeExactBehavior();
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final StampQueue queue = new StampQueue(Participants.CAPACITY);
    /** The global list: the first node of the top chunk, or 0. */
    @SuppressWarnings("unused") // accessed through GLOBAL
    private volatile long global;

    StampIt(final Builder b) {
        super(b, 3);
    }

    @Override
    Guard newGuard(final int id) {
        return new StampGuard(this, id);
    }

    /** A region entry and exit with nothing read (L catches up if the queue was empty), then both reclaims. */
    @Override
    void flush(final Guard guard) {
        final StampGuard g = (StampGuard) guard;
        queue.push(g.block);
        queue.remove(g.block);
        g.reclaimLocal();
        g.reclaimGlobal();
    }

    @Override
    void abandon(final Guard guard) {
        final StampGuard g = (StampGuard) guard;
        g.leaveQueue();
        g.reclaimLocal();
        g.spill(0);
        g.reclaimGlobal();
        g.safe.releaseBlocks();
    }

    @Override
    void drainRetired(final Guard guard, final BlockBag target) {
        final StampGuard g = (StampGuard) guard;
        drain(g.first, target);
        g.first = 0;
        g.last = 0;
        g.count = 0;
    }

    @Override
    void drainShared(final BlockBag target) {
        for (long c = (long) GLOBAL.getAndSet(this, 0L); c != 0; ) { // (G2)
            final long next = Words.lp(header(c, NEXT_CHUNK));
            drain(c, target);
            c = next;
        }
    }

    /** Adds every node of the list that begins at {@code first} to {@code target}. */
    private void drain(final long first, final BlockBag target) {
        for (long p = first; p != 0; ) {
            final long next = Words.lp(header(p, NEXT));
            target.add(p);
            p = next;
        }
    }

    @Override
    long advances() {
        return 0;
    }

    @Override
    long retries() {
        return queue.retries();
    }

    /** None: a thread stalled in its region holds L at its stamp (see the notes). */
    @Override
    long garbageBound(final int n) {
        return Long.MAX_VALUE;
    }

    /** Pushes the chain of chunks {@code first} .. {@code last} onto the global list (G1). */
    void pushChunks(final long first, final long last) {
        final long nextChunk = header(last, NEXT_CHUNK);
        long top;
        do {
            top = (long) GLOBAL.getVolatile(this);
            Words.sp(nextChunk, top);
        } while (!(boolean) GLOBAL.compareAndSet(this, top, first)); // (G1)
    }

    /**
     * Takes the whole global list (G2); returns its top chunk's first node, or 0. An empty list
     * costs a load, not a write.
     */
    long stealChunks() {
        return (long) GLOBAL.getVolatile(this) == 0 ? 0 : (long) GLOBAL.getAndSet(this, 0L); // (G2)
    }

    /** A thread's control block and retire list. */
    static final class StampGuard extends Guard {

        private final StampIt stampIt;
        private final StampQueue queue;
        final int block;
        /** Whether the block is in the queue (pushed, not yet removed). */
        boolean inQueue;
        /** The local retire list, oldest (lowest stamp) first. */
        long first;
        long last;
        long count;
        final BlockBag safe;

        StampGuard(final StampIt domain, final int id) {
            super(domain, id);
            this.stampIt = domain;
            this.queue = domain.queue;
            this.block = StampQueue.blockOf(id);
            this.safe = new BlockBag(blocks);
        }

        @Override
        void enter() {
            queue.push(block);
            inQueue = true;
        }

        @Override
        void exit() {
            if (!inQueue) {
                return; // the entry failed before the push
            }
            inQueue = false;
            final boolean lowest = queue.remove(block);
            reclaimLocal();
            spill(MAX_REMAINING);
            if (lowest) {
                reclaimGlobal();
            }
        }

        /** Removes the block of a thread that departed inside its region. */
        void leaveQueue() {
            if (inQueue) {
                inQueue = false;
                queue.remove(block);
            }
        }

        @Override
        public long protect(final int slot, final long address) {
            return sectionProtect(slot, address); // (11), then the poll
        }

        @Override
        public boolean protectIfEqual(final int slot, final long address, final long expected) {
            return sectionProtectIfEqual(slot, address, expected); // (11), then the poll
        }

        @Override
        public void retire(final long ptr) {
            noteRetire(ptr);
            Words.sp(stampIt.header(ptr, STAMP), queue.highest()); // (Q9)
            Words.sp(stampIt.header(ptr, NEXT), 0L);
            if (last == 0) {
                first = ptr;
            } else {
                Words.sp(stampIt.header(last, NEXT), ptr);
            }
            last = ptr;
            if (++count > TRY_RECLAIM) {
                reclaimLocal();
            }
        }

        /** Frees the safe prefix of the local list. */
        void reclaimLocal() {
            first = takeSafe(first, queue.lowest()); // (Q11)
            count -= safe.size();
            if (first == 0) {
                last = 0;
            }
            release(safe);
        }

        /**
         * Moves the nodes of the sorted list that begins at {@code p} whose stamps are at most
         * {@code lowest} into {@link #safe}; returns the first node left, or 0.
         */
        private long takeSafe(final long p, final long lowest) {
            long q = p;
            while (q != 0 && Words.lp(stampIt.header(q, STAMP)) <= lowest) {
                final long next = Words.lp(stampIt.header(q, NEXT));
                safe.add(q);
                q = next;
            }
            return q;
        }

        /**
         * With more than {@code keep} nodes left (leaving: MAX_REMAINING; departing: 0), the local
         * list becomes a chunk of the global list.
         */
        void spill(final long keep) {
            if (count > keep) {
                Words.sp(stampIt.header(first, NEXT_CHUNK), 0L);
                stampIt.pushChunks(first, first);
                first = 0;
                last = 0;
                count = 0;
            }
        }

        /**
         * Frees the safe prefix of every chunk of the global list, again while L moves past a
         * surviving chunk's first stamp, and pushes the survivors back.
         */
        void reclaimGlobal() {
            long chunks = stampIt.stealChunks(); // (G2)
            long lowest = queue.lowest(); // (Q11)
            while (chunks != 0) {
                long keptFirst = 0;
                long keptLast = 0;
                long keptMin = Long.MAX_VALUE;
                for (long c = chunks; c != 0; ) {
                    final long nextChunk = Words.lp(stampIt.header(c, NEXT_CHUNK));
                    final long p = takeSafe(c, lowest);
                    if (p != 0) {
                        Words.sp(stampIt.header(p, NEXT_CHUNK), 0L);
                        if (keptLast == 0) {
                            keptFirst = p;
                        } else {
                            Words.sp(stampIt.header(keptLast, NEXT_CHUNK), p);
                        }
                        keptLast = p;
                        keptMin = Math.min(keptMin, Words.lp(stampIt.header(p, STAMP)));
                    }
                    c = nextChunk;
                }
                release(safe);
                chunks = keptFirst;
                if (chunks == 0) {
                    return;
                }
                final long again = queue.lowest(); // (Q11): the cheap re-check
                if (again < keptMin) {
                    stampIt.pushChunks(keptFirst, keptLast); // (G1)
                    return;
                }
                lowest = again;
            }
        }
    }
}
