package dev.limbo.reclaim;

import dev.limbo.core.Participants;
import dev.limbo.reclaim.internal.BlockBag;

import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Schemes {@code rcu} and {@code rcu-af}: the RCU-style epoch reservations of the Token-EBR
 * artifact ({@code ibr_rcu}, from Wen et al.'s IBR benchmark; Token-EBR digest §3.8 and §4): a
 * thread reserves the global epoch when an operation begins and clears the reservation when it
 * ends; a record retired at epoch r is freed once every reservation is above r. The epoch is a
 * clock, advanced by allocations (every EPOCH_FREQ x n of them, EPOCH_FREQ = 150 as in the
 * artifact, n the threads using the domain), not by a grace-period scan.
 *
 * <pre>{@code
 * Implementation notes (the announcement array, heavy barrier and ordering numbers (1)-(12) are
 * EpochDomain's; this scheme adds (R1)-(R3))
 *
 * Algorithm. pin (outermost, startOp): amortized free (rcu-af), read E (1), reserve it: announce
 * e << 2 | ACTIVE with EpochDomain's (2), (3) (a getAndSet, or an opaque store covered by
 * scanners' heavy barriers). unpin (endOp): release store of the word without ACTIVE (6).
 * allocate: every EPOCH_FREQ x n allocations of a thread, advance E by one with a CAS (5) (a
 * failed CAS means another thread ticked); every departure and every flush ticks too. retire:
 * read E again (R1), after the caller's unlink, as the record's retire epoch r; the record goes to
 * bag r mod 3, whose stamp becomes r (a bag still holding records of an older epoch keeps them
 * under the newer stamp: they are freed later, never sooner). Every scanThreshold retires
 * (default 100; the artifact's empty_freq) the thread scans (R2): it reads E = e, makes the scan
 * trusted (EpochDomain (8)-(10), rationed; symmetric mode: a full fence), reads every word (4)
 * and computes m = the least reserved epoch of an ACTIVE word (and, after a fallback (12), of an
 * unfenced word); bags and orphans stamped below min(m, e) are freed. Every scanThreshold-th
 * pin scans too, before it reserves; if the thread's records wait at the current epoch, that scan
 * first ticks the clock once (not in the artifact, whose clock runs on allocations only: a thread
 * that stops allocating would otherwise keep its last bags until flush, and amortized free would
 * never start).
 *
 * Invariant: a thread's reservation is at most E at every point of its section, and at most the
 * retire epoch of every record unlinked after the section read a link to it.
 * Safety: let X be unlinked at u and retired at r (R1, after u). A thread T that can still use X
 * read a link to it before u, after its reservation e_T was read (1): e_T <= E at u <= r. A scan
 * that frees bags stamped below min(m, e) with e > r read E = e after E moved past r, so after u;
 * its barrier (8) (or, symmetric, T's fenced announcement and the scanner's fence) is the
 * store-buffering pair of EBR: either the scan sees T's reservation e_T <= r (no free) or T's read
 * of the link ran after u and missed X. A thread whose section ended released its reads with (6)
 * before a scan that sees it inactive. Departed threads' bags become an orphan stamped with E
 * read after their last retire (>= every retire epoch in it).
 * Why min(m, e) and not m alone: a bag stamped r = e may hold a record unlinked after the scan's
 * barrier, which the barrier does not order; r < e orders every unlink in the bag before the
 * scan's read of E (the tick from r followed the retire's read (R1) of r).
 *
 * Linearization points: pin at its announcement (2); unpin at (6); retire at (R1); a tick at its
 * CAS (5); a scan's frees at its reads (4).
 * Memory ordering: (R1) acquire load of E in retire, after the unlink (a CAS or release store,
 * program order). (R2) the scan: (1), then (9)/(8)/(10) or a full fence, then the acquire loads
 * (4). (R3) the allocation counter is thread-local; the user count is an AtomicInteger read
 * opaquely (a stale n only shifts the next tick).
 * Progress: every operation is wait-free (a tick is one CAS, never retried; a scan reads n words).
 * Garbage bound: none: a thread stalled in a section holds its reservation, and nothing retired
 * after it reserved is freed (Long.MAX_VALUE; the stalled-thread test).
 * ABA: a record is reused only once no reservation can reach it.
 * }</pre>
 */
final class RcuEpochReservation extends EpochDomain {

    /** Allocations per thread per epoch tick, times the number of threads (the artifact's epoch_freq). */
    static final int EPOCH_FREQ = 150;

    /** Threads with a guard here (n of the tick rule). */
    private final AtomicInteger users = new AtomicInteger();

    RcuEpochReservation(final Builder b) {
        super(b);
    }

    @Override
    Guard newGuard(final int id) {
        users.incrementAndGet();
        return new RcuGuard(this, id);
    }

    @Override
    boolean ebrShaped() {
        return false;
    }

    /** Allocations by one thread between two of its ticks: EPOCH_FREQ x the threads using the domain. */
    int tickInterval() {
        return EPOCH_FREQ * Math.max(1, users.getOpaque()); // (R3)
    }

    /**
     * The least epoch reserved by an active thread (4), or Long.MAX_VALUE; after a fallback (12),
     * unfenced words count as reservations too.
     */
    long minReservation() {
        long m = Long.MAX_VALUE;
        final boolean distrust = fellBack();
        final int n = Participants.highWater();
        for (int id = 0; id < n; id++) {
            final long a = announcementOf(id); // (4)
            if ((a & ACTIVE) != 0 || distrust && a != 0 && (a & FENCED) == 0) {
                m = Math.min(m, a >>> 2);
            }
        }
        return m;
    }

    @Override
    void flush(final Guard guard) {
        tick(globalEpoch());
        ((RcuGuard) guard).scan(true, false);
    }

    @Override
    void abandon(final Guard guard) {
        users.decrementAndGet();
        final RcuGuard g = (RcuGuard) guard;
        g.publish(0L); // (6): the departed thread reserves nothing
        final BlockBag all = new BlockBag(g.blocks);
        for (final BlockBag bag : g.bags) {
            bag.moveAllTo(all);
            bag.releaseBlocks();
        }
        final long e = globalEpoch(); // (1): at least every retire epoch in the bags
        if (!all.isEmpty()) {
            orphans.offer(new Orphan(e, all));
        }
        tick(e); // a departure is a tick: short-lived threads never reach EPOCH_FREQ x n allocations
        g.scan(false, false);
    }

    private static final class RcuGuard extends EpochGuard {

        private final RcuEpochReservation rcu;
        /** The retire epoch of each bag (the greatest of its records'). */
        private final long[] retireEpochs = {-1, -1, -1};
        private int allocations;
        private int retires;
        /** Pins until the next scan from a pin. */
        private int pins;

        RcuGuard(final RcuEpochReservation domain, final int id) {
            super(domain, id);
            this.rcu = domain;
            this.pins = domain.scanThreshold;
        }

        @Override
        void enter() {
            freeSome();
            if (--pins <= 0) {
                pins = rcu.scanThreshold;
                scan(false, true); // before reserving: this thread's own reservation holds back nothing
            }
            final long e = rcu.globalEpoch(); // (1)
            epoch = e;
            announce(e); // (2), (3): the reservation
        }

        @Override
        void allocated() {
            if (++allocations >= rcu.tickInterval()) {
                allocations = 0;
                rcu.tick(rcu.globalEpoch()); // (1), (5)
            }
        }

        @Override
        public void retire(final long ptr) {
            noteRetire(ptr);
            final long r = rcu.globalEpoch(); // (R1)
            final int i = (int) (r % 3);
            if (retireEpochs[i] < r) {
                retireEpochs[i] = r; // older records in the bag wait for r too: later, never sooner
            }
            bags[i].add(ptr);
            if (++retires >= rcu.scanThreshold) {
                retires = 0;
                scan(false, false);
            }
        }

        /** (R2): frees the bags and orphans retired below every reservation and below the E read here. */
        void scan(final boolean urgent, final boolean idleClock) {
            long e = rcu.globalEpoch(); // (1)
            if (idleClock && waitsFor(e)) {
                rcu.tick(e); // (5): records wait at the current epoch; the clock may be slow (no allocations)
                e = rcu.globalEpoch(); // (1)
            }
            if (urgent) {
                rcu.flushFence(e); // (8) or (7), not rationed
            } else if (!rcu.scansTrusted(e)) { // (9), or (8) and (10); false: rationed, try later
                return;
            } else if (!rcu.asymmetricFence) {
                VarHandle.fullFence(); // symmetric: the scanner's StoreLoad
            }
            final long safe = Math.min(e, rcu.minReservation()); // (4)
            rcu.scans.incrementAndGet();
            adaptFreesPerPin(); // amortized free: a new safe batch may arrive (EBR adapts once per epoch)
            for (int i = 0; i < 3; i++) {
                if (retireEpochs[i] < safe && !bags[i].isEmpty()) {
                    release(bags[i]);
                }
            }
            rcu.reclaimOrphans(this, safe - 1);
        }

        /** Whether a bag holds records retired at epoch {@code e} (or later): no scan that read E = e frees them. */
        private boolean waitsFor(final long e) {
            for (int i = 0; i < 3; i++) {
                if (retireEpochs[i] >= e && !bags[i].isEmpty()) {
                    return true;
                }
            }
            return false;
        }
    }
}
