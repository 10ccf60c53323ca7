package dev.limbo.reclaim;

import dev.limbo.allocator.internal.EventGate;
import dev.limbo.core.Layouts;
import dev.limbo.core.Participants;
import dev.limbo.core.Words;
import dev.limbo.core.internal.Native;
import dev.limbo.reclaim.internal.BlockBag;
import dev.limbo.reclaim.internal.EpochAdvanceEvent;
import dev.limbo.reclaim.internal.FenceFallbackEvent;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the epoch schemes ({@link FraserEbr}, {@link Debra}; and, with hooks of their own,
 * {@link QuiescentStateReclamation}, {@link HartNewEbr} and {@link RcuEpochReservation}) share:
 * the global epoch, the announcement encoding, three limbo bags per thread, the full scan, flush
 * and thread exit. The notes below are those of the EBR-shaped schemes (ebr, debra); qsbr and
 * nebr keep their announcement between sections and add idle inference (their notes), rcu
 * reuses only the announcements, the heavy barrier and the epoch counter (its notes).
 *
 * <pre>{@code
 * Implementation notes (shared part)
 *
 * State: a global epoch E (a heap field of the domain, advanced by +1 with a CAS that expects
 * exactly the epoch the advancer validated) and, per thread, an announcement word
 * A = e << 2 | fenced << 1 | active, written only by its owner (or, once it departed, by the
 * domain), in a heap array with one 128-byte line per participant id. A zero word (a thread that
 * never pinned, or left) is quiescent. The fenced bit says the word was written in symmetric mode
 * (see (12)).
 *
 * Limbo bags: each thread has three bags; bag (e mod 3) receives what the thread retires while it
 * is pinned at its local epoch e, and each bag carries the local epoch it was filled in (its stamp).
 *
 * Invariant and safety: a record retired while its thread was pinned at local epoch e is freed
 * only once the global epoch is at least e + 3. While that thread is pinned at e the epoch cannot
 * pass e + 1 (an advance from e + 1 needs every active thread at e + 1), so the unlink happened
 * while E <= e + 1. The advance from e + 2 to e + 3 validated every thread as quiescent or
 * announcing e + 2, each observed after E reached e + 2, so after the unlink: a thread that was
 * quiescent then, or that announced e + 2 (reading E after the unlink), began its current section
 * after the unlink and cannot reach the record. (DEBRA §4.4's three rotations; the rule by stamps
 * also frees all bags at once when a thread observes a jump of 3 or more epochs.) The stamp rule
 * makes bag (e mod 3) empty whenever a thread moves to epoch e: its stamp is congruent to e and
 * below it, hence at most e - 3 (except a bag whose stamp a debra+ retire raised, DebraPlus (P3): it
 * may still hold records when it becomes current again, and they take the new, larger stamp).
 *
 * Garbage bound: none while a thread stays pinned (the epoch stops at its epoch + 1); the stalled-
 * thread test shows unreclaimed nodes growing without bound, as expected of EBR and DEBRA
 * (garbageBound(n) is Long.MAX_VALUE). debra+ neutralizes the stalled thread instead and declares
 * a finite bound (DebraPlus (P6)).
 *
 * Linearization points (the subclasses add only when they advance):
 *  pin (outermost): the last announcement (2) of pinCurrentEpoch, the one its re-read (1b)
 *      confirms: from then on E stays at most e + 1 and every record the section reaches stays
 *      allocated until the unpin. A nested pin only counts (no shared effect).
 *  unpin (outermost close): the release store (6) of the quiescent announcement.
 *  protect / protectIfEqual: the acquire load (11) of the word; the protection itself is the
 *      section's, from the pin's point to the unpin's.
 *  retire: the add to bag (e mod 3), a thread-local step; the caller's unlink, which precedes it,
 *      is what other threads observe.
 *  advance: the successful CAS (5) from the validated e; flush: each of its advances at its (5),
 *      then thread-local frees.
 *  thread exit (departed): the release store (6) of 0 that clears the announcement.
 *
 * Progress: pin is lock-free: pinCurrentEpoch repeats (1)-(1b) only after another thread's
 * advance (5) succeeded, and the scan steps are bounded (ebr: n announcements; debra: 20). Unpin,
 * protect, protectIfEqual and retire are wait-free (retire may take an empty block from the
 * thread's BlockSource, i.e. allocate). An advance is a single CAS, never retried. Frees of safe
 * bags, in observe() and flush(), run at the pool's and the allocator's progress. In asymmetric
 * mode the heavy barrier (8) is a system call that returns once every CPU running the process
 * has executed a barrier: it waits on the kernel, not on other threads' progress. Thread exit runs
 * in a synchronized release hook (blocking, off the operation paths).
 *
 * Memory ordering (numbers shared by the subclasses):
 *  (1) acquire load of E when pinning; pairs with the advance CAS (5). (1b) E is read again after
 *      (3), and the thread re-announces if it moved: E may advance any number of times between
 *      (1) and (2) while the thread still looks quiescent, and only a re-validated announcement
 *      gives the invariant below (E <= e + 1 while pinned at e). (1b) is an opaque load: (3)
 *      already keeps it after (2), and (1) acquired the value it compares with; when E moved, it
 *      is read again with (1) before the thread observes the new epoch.
 *  (2) store of the announcement A = e << 2 | active (| fenced, in symmetric mode), and
 *  (3) StoreLoad between the announcement and every pointer the section reads, in one of two ways:
 *      symmetric: (2) and (3) are one volatile getAndSet (x86: xchg, implicitly locked, a full
 *      barrier; about 6.5 ns here against 10 ns for a store plus VarHandle.fullFence). With (4)
 *      preceded by a fence on the scanning side (the scanner's own (3), or (7)), this is the
 *      store-buffering pair: either the scanner sees the announcement, or the reader sees the
 *      unlink that preceded the scan. Release/acquire alone would allow both to miss (the jcstress
 *      EpochAnnounceVsAdvanceTest shows it).
 *      asymmetric (the default where membarrier exists): (2) is an opaque store and (3) is only
 *      program order: a VarHandle.acquireFence() after the store, which emits no instruction on
 *      x86 (a load barrier on AArch64) but is a barrier to HotSpot's compilers, so neither (1b)
 *      nor any load of the section is scheduled before the store. The Java memory model itself
 *      promises no store-to-load order here; this mode relies on HotSpot, and
 *      -Dlimbo.reclaim.asymmetricFence=false restores the fence. The hardware may still hold the
 *      store in its store buffer: the scanner's side carries the whole fence, (8).
 *  (8) asymmetric only: a heavy barrier, membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), issued after
 *      the scanner read E = e and before any announcement read (4) that may let it advance from e
 *      (and before flush's scan, in place of (7)). When it returns, every thread of the process
 *      that was running executed a full barrier, and the others pass a context switch (a full
 *      barrier) before running again. So for a reader R: if R's announcement (2) was executed
 *      before R's barrier, it is visible to every later (4); if not, then neither were the loads
 *      that follow it in program order, and they execute after R's barrier, when the unlink (which
 *      precedes E = e, which precedes (8)) is visible to them. Either way the store-buffering
 *      outcome is excluded, as with the symmetric fence (jcstress EpochAnnounceVsAdvanceTest
 *      .Asymmetric; without (8) it is BrokenNoAnnounceFence). The same argument covers (1b).
 *      One barrier serves every thread of the domain in epoch e: after it, (10) release-stores e
 *      into the barrier-epoch word, and a scanner that acquire-loads e there (9) may trust its
 *      scans in e. A stale, smaller value only costs another barrier. Barriers on pins are
 *      rationed to about one per heavyBarrierInterval (default 1 ms) per domain (a racy hint: two
 *      scanners may both issue one; flush() is not rationed): a membarrier costs ~0.3 us with
 *      the other CPUs idle and ~20 us when it must interrupt running threads, on this project's
 *      2-vCPU VM.
 *  (4) acquire loads of other threads' announcements while scanning.
 *  (5) CAS E: e -> e + 1, expecting the validated e exactly, so a stale scanner cannot skip an
 *      epoch (a failed CAS means someone else advanced).
 *  (6) release store of A = e << 2 (| fenced) when leaving: every read of the section happens-before a
 *      scanner that sees the thread quiescent.
 *  (7) symmetric mode: a full fence before flush's scan, which runs outside a section.
 *  (11) protect's and protectIfEqual's acquire load of the word at the address; pairs with the
 *      release store or CAS that published the node, so its initialization is visible.
 *
 *  (12) fallback: a heavy barrier (8) that fails at run time (the kernel refuses membarrier) sets
 *      the volatile fallback flag, counts it (stats().fenceFallbacks()) and emits a JFR
 *      dev.limbo.FenceFallback event. Every later pin reads the flag before announcing and then
 *      fences as in symmetric mode; the unpin of such a section marks its quiescent word fenced
 *      too (the guard remembers how its section announced, so an unpin reads no flag). A word
 *      written before the flag was seen (an announcement, or the unpin of a section that
 *      announced before it) may be still in its writer's store buffer, which no scan can trust
 *      without the barrier that failed: while the flag is set, a scan treats a non-zero word
 *      without the fenced bit as holding the epoch back, like an active thread in an older epoch,
 *      until its owner pins again (or departs, which zeroes it). Scans then fence for themselves,
 *      as in symmetric mode. So after a failure the epoch still advances, once every thread that
 *      used the domain has pinned again; a thread idle since before the failure holds
 *      reclamation back until then.
 *
 * Thread exit: a departed thread's bags become one orphan stamped with the global epoch E_h read
 * after its last retire; it is freed when E >= E_h + 2 (the two advances after E_h validate every
 * thread after the thread's last unlink), by the advancing thread or by a later departure. Each
 * departure counts as a scan: the release hook tries one advance on the departed thread's behalf
 * (rationed like a pin's in asymmetric mode) and frees every orphan that is safe by then, so that
 * threads too short-lived to reach a scan step of their own still move the epoch.
 * }</pre>
 */
abstract class EpochDomain extends ReclaimDomain {

    /** Announcements: one word per participant id, at (id + 1) * STRIDE, a 128-byte line each. */
    private static final VarHandle ANNOUNCEMENTS =
            MethodHandles.arrayElementVarHandle(long[].class).withInvokeExactBehavior();
    private static final int STRIDE = (int) (Layouts.PADDED / Long.BYTES);
    /** Announcement bits: the thread is in a section; the word was written fenced (12). */
    static final long ACTIVE = 1;
    static final long FENCED = 2;

    private static final VarHandle EPOCH;
    private static final VarHandle BARRIER_EPOCH;
    private static final VarHandle FALLBACK;

    static {
        try {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            EPOCH = lookup.findVarHandle(EpochDomain.class, "epoch", long.class).withInvokeExactBehavior();
            BARRIER_EPOCH = lookup.findVarHandle(EpochDomain.class, "barrierEpoch", long.class)
                    .withInvokeExactBehavior();
            FALLBACK = lookup.findVarHandle(EpochDomain.class, "fallback", boolean.class).withInvokeExactBehavior();
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * The global epoch E. A heap field, like the announcements: ordered accesses to the heap
     * compile to plain moves, while each ordered access to the region is bracketed by CPU-order
     * barriers that keep the compiler from reusing any loaded value across it; a pin pays about
     * 3 ns for each such access (ReclaimGuardPtr). The domain's other fields are written rarely, so
     * E needs no padding.
     */
    @SuppressWarnings("unused") // accessed through EPOCH
    private volatile long epoch = 1; // from 1: a zero announcement word always means "never pinned, or departed"
    /** Asymmetric mode: the epoch the last heavy barrier covers (8)-(10); -1 before the first. */
    @SuppressWarnings("unused") // accessed through BARRIER_EPOCH
    private volatile long barrierEpoch = -1;
    /**
     * The announcement words, on the heap: ordered stores to heap array elements compile to plain
     * moves, while ordered stores to the region are bracketed by CPU-order barriers that cost a pin
     * about 3 ns (ReclaimGuardPtr); the hazard slots of HP stay in the region.
     */
    private final long[] announcements = new long[(Participants.CAPACITY + 1) * STRIDE];
    private final AtomicLong advances = new AtomicLong();
    /** When the last heavy barrier was issued; a racy rationing hint, not a safety condition. */
    private long lastBarrierNanos;
    /** (12): set when a heavy barrier failed; from then on every pin fences. */
    private volatile boolean fallback;
    private final AtomicLong fenceFallbacks = new AtomicLong();
    /** The heavy barrier (8); replaceable by tests in this package, to make it fail. */
    Runnable heavyBarrierCall = Native::membarrier;

    EpochDomain(final Builder b) {
        super(b);
        this.lastBarrierNanos = System.nanoTime() - heavyBarrierIntervalNanos;
    }

    /**
     * Whether a scanner that read E = {@code e} may trust the announcements it reads from now on:
     * always in symmetric mode (its own announcement fence (3) precedes them); in asymmetric mode
     * once a heavy barrier (8) completed after E reached {@code e}, issuing one unless another was
     * issued less than the builder's heavy barrier interval ago (then false: try again later).
     */
    boolean scansTrusted(final long e) {
        if (!asymmetricFence || (long) BARRIER_EPOCH.getAcquire(this) == e) { // (9)
            return true;
        }
        if (fallback) {
            VarHandle.fullFence(); // (12): scans fence for themselves, as in symmetric mode
            return true;
        }
        final long now = System.nanoTime();
        if (now - lastBarrierNanos < heavyBarrierIntervalNanos) {
            return false;
        }
        lastBarrierNanos = now;
        return heavyBarrier(e);
    }

    /**
     * (8) then (10): the heavy barrier, published as covering epoch {@code e}; if it fails, the
     * domain falls back to fenced pins (12) and the caller's scan fences for itself. Always true:
     * either way the scan that follows may trust what it reads.
     */
    private boolean heavyBarrier(final long e) {
        try {
            heavyBarrierCall.run(); // (8)
        } catch (final RuntimeException refused) {
            if (!fallback) {
                fallback = true; // (12)
                fenceFallbacks.incrementAndGet();
                if (EventGate.JFR) {
                    FenceFallbackEvent.emit(scheme.id(), String.valueOf(refused.getMessage()));
                }
            }
            VarHandle.fullFence();
            return true;
        }
        BARRIER_EPOCH.setRelease(this, e); // (10) pairs with (9)
        return true;
    }

    /** Whether a heavy barrier failed at run time (12). */
    final boolean fellBack() {
        return fallback;
    }

    /**
     * Whether the scheme is EBR-shaped (ebr, debra): each outermost pin announces a validated
     * epoch, each outermost unpin announces quiescence, and the epoch advances only past threads
     * quiescent or current. The tests of that shape (ReclaimTestSupport#epochSchemes) apply to it;
     * qsbr, nebr and rcu keep announcements across sections or advance otherwise.
     */
    boolean ebrShaped() {
        return true;
    }

    /**
     * Idle inference (qsbr, nebr; see Qsbr's notes): whether the nesting words that a scanner
     * reads from now on show every section begun before E reached {@code e}: where the kernel
     * lacks membarrier, every pin fences (ReclaimDomain's (C2)) and the scanner fences here;
     * otherwise once a heavy barrier (8) completed after E reached {@code e} (rationed as in
     * {@link #scansTrusted}). False after a failed barrier (12): nothing is inferred then.
     */
    final boolean nestingVisible(final long e) {
        if (!Native.MEMBARRIER) {
            VarHandle.fullFence(); // pairs with the pins' (C2) full fence
            return true;
        }
        if ((long) BARRIER_EPOCH.getAcquire(this) == e) { // (9)
            return true;
        }
        if (fallback) {
            return false;
        }
        final long now = System.nanoTime();
        if (now - lastBarrierNanos < heavyBarrierIntervalNanos) {
            return false;
        }
        lastBarrierNanos = now;
        heavyBarrier(e); // (8), (10)
        return !fallback;
    }

    /**
     * Idle inference: whether participant {@code id}'s thread is outside every section (its
     * nesting, read with (C6)'s acquire, is 0, or it departed), trusted only if
     * {@link #nestingVisible} for the epoch {@code e} the scanner read.
     */
    final boolean idle(final int id, final long e) {
        if (!nestingVisible(e)) {
            return false;
        }
        final Guard g = guardOf(id);
        return g == null || (int) Guard.NESTING.getAcquire(g) == 0; // (C6)
    }

    /** Whether flush() issues a heavy barrier (8) before its scan, instead of a fence (7). */
    boolean flushBarrier() {
        return asymmetricFence && !fallback;
    }

    /** Heavy barriers that failed and made the domain fall back to fenced pins (12): 0 or 1. */
    @Override
    final long fenceFallbacks() {
        return fenceFallbacks.get();
    }

    /**
     * Whether announcement {@code a} of participant {@code id} holds the epoch back from advancing
     * past {@code e}, for a full scan ({@link #everyoneAt}); by default {@link #holdsBack(long, long)}.
     */
    boolean holdsBack(final int id, final long a, final long e) {
        return holdsBack(a, e);
    }

    /**
     * Whether announcement {@code a} holds the epoch back from advancing past {@code e}: its
     * thread is active in another epoch, or (12) the word was written unfenced before a fallback.
     */
    final boolean holdsBack(final long a, final long e) {
        return (a & ACTIVE) != 0 && (a >>> 2) != e || a != 0 && (a & FENCED) == 0 && fallback;
    }

    @Override
    final long advances() {
        return advances.get();
    }

    /** None: a thread pinned at e holds E at e + 1 or below, so nothing retired since is freed. */
    @Override
    long garbageBound(final int n) {
        return Long.MAX_VALUE;
    }

    /** The global epoch E (1). */
    final long globalEpoch() {
        return (long) EPOCH.getAcquire(this); // (1)
    }

    /** The announcement of participant {@code id} (4). */
    final long announcementOf(final int id) {
        return (long) ANNOUNCEMENTS.getAcquire(announcements, announcementIndex(id)); // (4)
    }

    /** Where participant {@code id}'s word is in {@link #announcements}: one 128-byte line each, after a leading one. */
    private static int announcementIndex(final int id) {
        return (id + 1) * STRIDE;
    }

    /**
     * Whether every thread is quiescent or announces {@code e} (a full scan; (4)). It stops at the
     * first thread that is not, and counts as a scan only when it read every announcement.
     */
    final boolean everyoneAt(final long e) {
        final int n = Participants.highWater();
        for (int id = 0; id < n; id++) {
            if (holdsBack(id, announcementOf(id), e)) { // (4)
                return false;
            }
        }
        scans.incrementAndGet();
        return true;
    }

    /** Advances the epoch from {@code e} (5); on success frees the orphans that became safe. */
    final boolean advance(final EpochGuard g, final long e) {
        if (!(boolean) EPOCH.compareAndSet(this, e, e + 1)) { // (5)
            return false;
        }
        advances.incrementAndGet();
        if (EventGate.JFR) {
            EpochAdvanceEvent.emit(scheme.id(), e + 1);
        }
        reclaimOrphans(g, e + 1 - 2);
        return true;
    }

    /**
     * Advances the epoch from {@code e} (5) without validating anyone (rcu, whose epoch is a clock):
     * counts and records the advance only.
     */
    final boolean tick(final long e) {
        if (!(boolean) EPOCH.compareAndSet(this, e, e + 1)) { // (5)
            return false;
        }
        advances.incrementAndGet();
        if (EventGate.JFR) {
            EpochAdvanceEvent.emit(scheme.id(), e + 1);
        }
        return true;
    }

    /** flush()'s ordering before a scan that read E = {@code e}: a heavy barrier (8), or a fence (7). */
    final void flushFence(final long e) {
        if (flushBarrier()) {
            heavyBarrier(e); // (8), or (12)
        } else {
            Words.fullFence(); // (7)
        }
    }

    @Override
    void flush(final Guard guard) {
        final EpochGuard g = (EpochGuard) guard;
        for (int round = 0; round < 3; round++) {
            final long e = globalEpoch(); // (1)
            g.observe(e);
            if (flushBarrier()) {
                heavyBarrier(e); // (8), or (12)
            } else {
                Words.fullFence(); // (7)
            }
            if (!everyoneAt(e) || !advance(g, e)) {
                break;
            }
        }
        final long e = globalEpoch();
        g.observe(e);
        reclaimOrphans(g, e - 2);
    }

    @Override
    void abandon(final Guard guard) {
        final EpochGuard g = (EpochGuard) guard;
        ANNOUNCEMENTS.setRelease(announcements, g.announcement, 0L); // (6): the departed thread is quiescent
        final BlockBag all = new BlockBag(g.blocks);
        for (final BlockBag bag : g.bags) {
            bag.moveAllTo(all);
            bag.releaseBlocks();
        }
        final long e = globalEpoch(); // (1)
        if (!all.isEmpty()) {
            orphans.offer(new Orphan(e, all));
        }
        // A departure is a scan too: threads too short-lived to reach a scan step of their own
        // (thread churn) must still move the epoch, or nothing they retired is ever freed.
        if (!(scansTrusted(e) && everyoneAt(e) && advance(g, e))) { // (9) or (8), (10); (4); (5)
            reclaimOrphans(g, e - 2);
        }
    }

    @Override
    void drainRetired(final Guard guard, final BlockBag target) {
        for (final BlockBag bag : ((EpochGuard) guard).bags) {
            bag.moveAllTo(target);
            bag.releaseBlocks();
        }
    }

    /** A thread's state in an epoch scheme. */
    abstract static class EpochGuard extends Guard {

        final BlockBag[] bags = new BlockBag[3];
        private final long[] stamps = {-3, -3, -3};
        /** The local epoch: the last global epoch this thread observed. */
        long epoch = -1;
        private final EpochDomain epochs;
        /** The domain's mode and announcement array, copied so that a pin needs no load through {@link #epochs}. */
        private final boolean asymmetric;
        private final long[] announcements;
        /** The index of this thread's word in {@link #announcements}. */
        final int announcement;
        /**
         * Whether this section announced fenced (symmetric mode, or after a fallback (12)); the
         * unpin marks its quiescent word the same way, without reading the flag again.
         */
        private boolean fenced;

        EpochGuard(final EpochDomain domain, final int id) {
            super(domain, id);
            this.epochs = domain;
            this.asymmetric = domain.asymmetricFence;
            this.announcements = domain.announcements;
            this.announcement = announcementIndex(id);
            for (int i = 0; i < 3; i++) {
                bags[i] = new BlockBag(blocks);
            }
        }

        /**
         * Moves to global epoch {@code e} if it is new: frees every bag stamped at most e - 3, then
         * tells the scheme ({@link #epochChanged}). Called before announcing, so freeing never
         * delays an advance (except on pinCurrentEpoch's retry, where the stale announcement is
         * still up: it holds the epoch back, which is safe).
         */
        final void observe(final long e) {
            if (e == epoch) {
                return;
            }
            adaptFreesPerPin();
            for (int i = 0; i < 3; i++) {
                if (stamps[i] <= e - 3) {
                    release(bags[i]);
                }
            }
            epoch = e;
            stamps[(int) (e % 3)] = e; // at least the old stamp: a raised one is below the E it was raised from
            epochChanged();
        }

        /**
         * Raises the stamp of the current bag (local epoch mod 3) to at least {@code stamp}: a
         * record retired there is then freed only once E >= stamp + 3. Stamps only grow, so the
         * rule stays sound for the records already in the bag (debra+'s retire after a
         * neutralization; see DebraPlus).
         */
        final void raiseStamp(final long stamp) {
            final int i = (int) (epoch % 3);
            if (stamps[i] < stamp) {
                stamps[i] = stamp;
            }
        }

        /** The current limbo bag: the one that receives this thread's retires in its local epoch. */
        final BlockBag currentBag() {
            return bags[(int) (epoch % 3)];
        }

        /** The local epoch changed (on a pin, or in flush): per-epoch scheme state starts over. */
        void epochChanged() {
        }

        /** Announces local epoch {@code e}: (2) and (3), by the domain's mode. */
        final void announce(final long e) {
            fenced = !asymmetric || (boolean) FALLBACK.getOpaque(epochs); // (12)
            if (!fenced) {
                ANNOUNCEMENTS.setOpaque(announcements, announcement, e << 2 | ACTIVE); // (2)
                VarHandle.acquireFence(); // (3): program order only; (8) does the rest
            } else {
                // (2), (3); the exact invocation needs the returned previous word, which is not used
                final long previous = (long) ANNOUNCEMENTS.getAndSet(announcements, announcement,
                        e << 2 | FENCED | ACTIVE);
            }
        }

        /**
         * Outermost pin: reads E (1), frees what became safe, announces E (2), (3), and re-reads E
         * after the fence (1b); if E moved, the announcement may be stale (E can advance any
         * number of times while this thread is quiescent between (1) and (2), and a stale stamp
         * would let the stamp rule free this section's retires at once), so it starts over.
         * Returns the announced epoch e, with the invariant that E stays at most e + 1 until the
         * section ends. Lock-free: it retries only after another thread advanced E.
         */
        final long pinCurrentEpoch() {
            long e = epochs.globalEpoch(); // (1)
            while (true) {
                observe(e);
                announce(e); // (2), (3)
                if ((long) EPOCH.getOpaque(epochs) == e) { // (1b)
                    return e;
                }
                e = epochs.globalEpoch(); // (1): E moved; acquire the new value before observing it
            }
        }

        /** Publishes announcement word {@code a} with a release store (6): for schemes that announce between sections. */
        final void publish(final long a) {
            ANNOUNCEMENTS.setRelease(announcements, announcement, a); // (6)
        }

        /**
         * Publishes announcement word {@code a} with a volatile getAndSet (a full fence): a thread
         * coming back into view (first pin, online) must be seen by scans before its reads.
         */
        final void publishFenced(final long a) {
            final long previous = (long) ANNOUNCEMENTS.getAndSet(announcements, announcement, a);
        }

        /**
         * Re-announces local epoch {@code e} while the thread stays active (nebr): an opaque store, with the
         * fenced bit of the section's first announcement.
         */
        final void reannounce(final long e) {
            ANNOUNCEMENTS.setOpaque(announcements, announcement, e << 2 | (fenced ? FENCED : 0) | ACTIVE);
        }

        /** Reads the global epoch E with an opaque load ((1b)). */
        final long epochOpaque() {
            return (long) EPOCH.getOpaque(epochs);
        }

        @Override
        void exit() {
            ANNOUNCEMENTS.setRelease(announcements, announcement, epoch << 2 | (fenced ? FENCED : 0)); // (6), (12)
        }

        @Override
        public final long protect(final int slot, final long address) {
            return sectionProtect(slot, address); // (11), then the poll
        }

        @Override
        public final boolean protectIfEqual(final int slot, final long address, final long expected) {
            return sectionProtectIfEqual(slot, address, expected); // (11), then the poll
        }

        @Override
        public void retire(final long ptr) {
            noteRetire(ptr);
            bags[(int) (epoch % 3)].add(ptr);
        }
    }
}
