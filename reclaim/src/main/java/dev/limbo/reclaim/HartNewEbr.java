package dev.limbo.reclaim;

import dev.limbo.core.internal.Native;

import java.lang.invoke.VarHandle;

/**
 * Schemes {@code nebr} and {@code nebr-af}: Hart et al.'s "new" epoch-based reclamation (Hart,
 * McKenney, Demke Brown and Walpole, "Performance of memory reclamation for lockless
 * synchronization", JPDC 2007, §3.2; the Stamp-it report §3.5): EBR whose critical region spans
 * many operations, so that the announcement and its fence are paid once per region instead of once
 * per operation.
 *
 * <pre>{@code
 * Implementation notes (EBR's machinery, numbers (1)-(12), bags and orphans are EpochDomain's;
 * idle inference and (Q3) are QuiescentStateReclamation's)
 *
 * Algorithm. A thread's region is REGION = 100 consecutive outermost sections (operations). The
 * region's first pin announces as EBR's pin does: read E (1), free what is safe, announce (2) with
 * the StoreLoad (3) (a getAndSet, or in asymmetric mode an opaque store that scanners' heavy
 * barriers (8) cover) and re-read E (1b). The other pins of the region (emr's guards inside a
 * region_guard) read E (1) without any fence: if it moved, the thread frees its bags stamped at
 * most E - 3 and re-announces E with an opaque store (N1), keeping the region's fenced bit. Every
 * scanThreshold-th pin (default 100, the Stamp-it report's) scans all announcements (4) (trusted
 * as EBR's: EpochDomain (8)-(10)) and advances E from e with the exact CAS (5) if every thread is
 * quiescent, announces e, or is idle. Unpins inside a region write nothing; the region's last
 * unpin, quiescent(), offline() and flush() end the region with EBR's quiescent release store (6).
 *
 * Between two sections of a region the thread holds no reference but is announced active: this is
 * the price of the amortized fence (a stale announcement holds the epoch back, so regions make
 * epochs longer; the Stamp-it report §3.5 measures it). So that a thread that stops inside a
 * region (its last operation, then idle) does not hold the epoch back for good, scans infer idle
 * threads as qsbr does: a thread whose nesting word reads 0 after a heavy barrier issued in the
 * epoch is outside every section (QuiescentStateReclamation, "Idle inference", (Q3)).
 *
 * Invariant: while a thread is pinned at local epoch e, E <= e + 1. At the region's first pin as
 * in EBR. At a later pin the thread's word was active at an older epoch l (announced earlier in
 * the region), so scans cannot skip it except as idle; as for qsbr, its (C1) store precedes its
 * read of E, so either a scanner sees nesting >= 1 or the thread read the newer E. Hence no
 * fence is needed for (N1): the word goes from active to active, never through quiescent.
 * Safety: EpochDomain's stamp rule (freed once E >= stamp + 3) with this invariant, and the idle
 * argument of qsbr for threads counted as idle.
 *
 * Linearization points: the region's first pin at its confirmed announcement (2); a later pin at
 * its read of E (1) (and (N1) if E moved); the region's end at the release store (6); advances at
 * the CAS (5).
 * Memory ordering: (N1) opaque store of the re-announcement, a word active to active; its order
 * with the section's loads is (1)'s acquire. (1)-(12) as in EpochDomain, (Q3) as in qsbr. In
 * symmetric mode a scan inside a region is preceded by a full fence of its own, since the pin
 * that scans did not fence.
 * Progress: a region's first pin is lock-free (EBR's); the other pins, unpins, protect and retire
 * are wait-free; an advance is one CAS.
 * Garbage bound: none while a thread stays pinned (Long.MAX_VALUE; the stalled-thread test).
 * ABA: a record is reused only after its grace period.
 * }</pre>
 */
final class HartNewEbr extends EpochDomain {

    /** Outermost sections per region. */
    static final int REGION = 100;

    HartNewEbr(final Builder b) {
        super(b);
    }

    @Override
    Guard newGuard(final int id) {
        return new NebrGuard(this, id);
    }

    @Override
    boolean ebrShaped() {
        return false;
    }

    /** flush() infers idle threads: it needs the heavy barrier wherever pins do not fence. */
    @Override
    boolean flushBarrier() {
        return Native.MEMBARRIER && !fellBack();
    }

    @Override
    boolean holdsBack(final int id, final long a, final long e) {
        return holdsBack(a, e) && !idle(id, e); // (4), then (8) and (Q3)
    }

    @Override
    void flush(final Guard g) {
        ((NebrGuard) g).leaveRegion();
        super.flush(g);
    }

    @Override
    void quiescentState(final Guard g) {
        ((NebrGuard) g).leaveRegion();
    }

    @Override
    void wentOffline(final Guard g) {
        ((NebrGuard) g).leaveRegion();
    }

    private static final class NebrGuard extends EpochGuard {

        private final HartNewEbr nebr;
        private boolean inRegion;
        /** Outermost sections left in the region. */
        private int regionLeft;
        /** Pins since the last scan. */
        private int entries;

        NebrGuard(final HartNewEbr domain, final int id) {
            super(domain, id);
            this.nebr = domain;
        }

        @Override
        void enter() {
            freeSome();
            final long e;
            if (!inRegion) {
                e = pinCurrentEpoch(); // (1), (2), (3), (1b): the region's fence
                inRegion = true;
                regionLeft = REGION;
            } else {
                e = nebr.globalEpoch(); // (1)
                if (e != epoch) {
                    observe(e);
                    reannounce(e); // (N1)
                }
            }
            if (++entries >= nebr.scanThreshold) {
                entries = 0;
                if (!nebr.asymmetricFence) {
                    VarHandle.fullFence(); // this pin did not fence: the scan's own StoreLoad
                }
                if (nebr.scansTrusted(e) && nebr.everyoneAt(e)) { // (9) or (8), (10); (4)
                    nebr.advance(this, e); // (5)
                }
            }
        }

        @Override
        void exit() {
            if (--regionLeft <= 0) {
                leaveRegion();
            }
        }

        /** Ends the region: EBR's quiescent announcement (6). */
        void leaveRegion() {
            if (inRegion) {
                inRegion = false;
                super.exit(); // (6)
            }
        }
    }
}
