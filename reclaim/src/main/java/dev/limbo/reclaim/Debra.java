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
 * after a flush() observed a new epoch), restart the scan (checked = 0, calls = 0). In asymmetric
 * mode (EpochDomain (8)-(10)) checks start only once a heavy barrier was issued in this epoch: the
 * 64th call polls the barrier-epoch word and, if need be, issues the barrier (at most one per
 * millisecond per domain); while barriers are rationed the polls back off to every 4096th call. Then check ONE other thread (4): if thread `checked` is quiescent or
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
 * Cost: O(1) worst case per pin: one read of E, one announcement, one fence (symmetric mode; none
 * in asymmetric mode), one other thread's announcement; plus, asymmetric, one membarrier per epoch
 * per domain. Progress: wait-free pin/unpin/protect/retire.
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

    /**
     * Asymmetric mode: a thread polls for a heavy barrier after 64 calls in a new epoch, then,
     * while barriers are rationed, after twice as many calls each time, up to every 4096 calls.
     */
    private static final int FIRST_POLL_MASK = 63;
    private static final int LAST_POLL_MASK = 4095;

    private static final class DebraGuard extends EpochGuard {

        private final Debra debra;
        /** Threads checked, calls made, in the local epoch. */
        private int checked;
        private int calls;
        /** Whether checks made in the local epoch count: see EpochDomain (8)-(10). */
        private boolean trusted;
        /** Asymmetric mode: poll for a heavy barrier when {@code calls & pollMask} is 0. */
        private int pollMask;

        DebraGuard(final Debra domain, final int id) {
            super(domain, id);
            this.debra = domain;
        }

        @Override
        void epochChanged() {
            checked = 0;
            calls = 0;
            trusted = !debra.asymmetric;
            pollMask = FIRST_POLL_MASK;
        }

        @Override
        void enter() {
            freeSome();
            final long e = pinCurrentEpoch(); // (1), (2), (3), (1b)
            calls++;
            if (!trusted) { // asymmetric: checks count only after a heavy barrier in this epoch
                if ((calls & pollMask) != 0) {
                    return;
                }
                if (!debra.scansTrusted(e)) { // (9) or (8), (10); false: rationed, poll less often
                    pollMask = Math.min(pollMask << 1 | 1, LAST_POLL_MASK);
                    return;
                }
                trusted = true;
            }
            final int next = checked;
            if (next < Participants.highWater()) {
                final long a = debra.announcementOf(next); // (4)
                if ((a & 1) == 0 || (a >>> 1) == e) {
                    checked = next + 1;
                }
            } else if (calls >= debra.minCalls) {
                debra.advance(this, e); // (5)
            }
        }
    }
}
