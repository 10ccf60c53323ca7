package dev.limbo.reclaim;

/**
 * Schemes {@code ebr} and {@code ebr-af}: Fraser's epoch-based reclamation (Fraser, "Practical
 * lock-freedom", 2004, §5.2.3; as described in the DEBRA paper §3 and the Stamp-it report §3.4),
 * with per-thread limbo bags instead of Fraser's shared ones.
 *
 * <pre>{@code
 * Implementation notes (the shared epoch machinery, ordering numbers and safety argument are in
 * EpochDomain)
 *
 * pin (outermost): amortized free (ebr-af), then read E (1); if it is new, free the bags stamped at
 * most E - 3; announce E (2), (3) and re-read E (1b), starting over if it moved. Every scanThreshold-th pin (default 100, the Stamp-it
 * report's) scans ALL threads' announcements (4) (in asymmetric mode only once a heavy barrier was
 * issued in this epoch, EpochDomain (8)-(10)), and if each is quiescent or at E, advances E
 * with an exact CAS (5). unpin: release store of the quiescent announcement (6).
 *
 * Linearization points: EpochDomain's; an advance at its CAS (5), after a scan (4) that found every
 * thread quiescent or at E (such a completed scan counts in stats().scans(); one that stops at a
 * thread in an older epoch does not).
 *
 * Cost: O(1) per pin plus an O(n) scan every 100 pins, and one full fence per pin (symmetric
 * mode) or about one membarrier per epoch per domain (asymmetric mode).
 * Progress: unpin, protect and retire are wait-free; pin is lock-free (it re-announces only when
 * another thread advanced E); freeing is bounded by the bag sizes.
 * Garbage bound: unbounded while a thread stays pinned (see the stalled-thread test).
 * ABA: a record is reused only after the grace period, so no pinned thread holds it.
 * }</pre>
 */
final class FraserEbr extends EpochDomain {

    FraserEbr(final Builder b) {
        super(b);
    }

    @Override
    Guard newGuard(final int id) {
        return new EbrGuard(this, id);
    }

    private static final class EbrGuard extends EpochGuard {

        private final FraserEbr ebr;
        private int entries;

        EbrGuard(final FraserEbr domain, final int id) {
            super(domain, id);
            this.ebr = domain;
        }

        @Override
        void enter() {
            freeSome();
            final long e = pinCurrentEpoch(); // (1), (2), (3), (1b)
            if (++entries >= ebr.scanThreshold) {
                entries = 0;
                if (ebr.scansTrusted(e) && ebr.everyoneAt(e)) { // (9) or (8), (10); then (4)
                    ebr.advance(this, e); // (5)
                }
            }
        }
    }
}
