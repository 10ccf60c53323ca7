package dev.limbo.reclaim;

import dev.limbo.core.Participants;
import dev.limbo.core.Words;

/**
 * Schemes {@code debra} and {@code debra-af}: Brown's distributed epoch-based reclamation (Brown,
 * "Reclaiming memory for lock-free data structures: there has to be a better way", PODC 2015, §4).
 *
 * <pre>{@code
 * Implementation notes (the shared epoch machinery, ordering numbers and safety argument are in
 * EpochDomain)
 *
 * pin (outermost), DEBRA's leaveQstate: amortized free (debra-af), then read E (1); on a new epoch,
 * free the bags stamped at most E - 3; announce E (2), fence (3) and re-read E (1b), starting over
 * if it moved; if the announced epoch differs from the one the incremental scan counts in (also
 * after a flush() observed a new epoch), restart the scan (checked = 0, calls = 0). Then check ONE other thread (4): if thread `checked` is quiescent or
 * at E, move on to the next. Once all n = Participants.highWater() threads were checked and this
 * thread made at least minCalls (default 100, the paper's MIN_CALLS) calls in this epoch, advance
 * E with an exact CAS (5). unpin, enterQstate: release store of the quiescent announcement (6).
 *
 * Differences from the paper: (a) the announcement word is e << 1 | active, so zero (never pinned)
 * is quiescent, and the epoch counts by one; (b) bags are freed by stamp (at most E - 3), which
 * frees what the paper's three rotations free, and all bags at once after a jump of 3 epochs;
 * (c) whole bags move, the partial head block included, since all of a bag is safe (§4.5 keeps it
 * only to keep pool bags' "only the head is partial" invariant, which our bags do not need);
 * (d) freeing happens before announcing, as the amortized-free artifact does, so a long free never
 * delays other threads' advance.
 *
 * Cost: O(1) worst case per pin: one read of E, one announcement, one fence, one other thread's
 * announcement. Progress: wait-free pin/unpin/protect/retire.
 * Garbage bound: unbounded while a thread stays pinned (DEBRA+ adds neutralization for that).
 * ABA: a record is reused only after its grace period.
 * }</pre>
 */
final class Debra extends EpochDomain {

    Debra(final Builder b) {
        super(b);
    }

    @Override
    Guard newGuard(final int id) {
        return new DebraGuard(this, id);
    }

    private static final class DebraGuard extends EpochGuard {

        private final Debra debra;
        private int checked;
        private int calls;
        /** The epoch that {@link #checked} and {@link #calls} count in (flush may move the local epoch). */
        private long scanEpoch = -1;

        DebraGuard(final Debra domain, final int id) {
            super(domain, id);
            this.debra = domain;
        }

        @Override
        void enter() {
            freeSome();
            final long e = pinCurrentEpoch(); // (1), (2), (3), (1b)
            if (e != scanEpoch) { // a new epoch, also one that flush() observed without pinning
                scanEpoch = e;
                checked = 0;
                calls = 0;
            }
            calls++;
            final int next = checked;
            if (next < Participants.highWater()) {
                final long a = Words.la(debra.slotTable.slot(next) + ANNOUNCE); // (4)
                if ((a & 1) == 0 || (a >>> 1) == e) {
                    checked = next + 1;
                }
            } else if (calls >= debra.minCalls) {
                debra.advance(this, e); // (5)
            }
        }
    }
}
