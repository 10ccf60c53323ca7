package dev.limbo.reclaim;

import dev.limbo.allocator.internal.EventGate;
import dev.limbo.core.Participants;
import dev.limbo.reclaim.internal.BlockBag;
import dev.limbo.reclaim.internal.BlockLayout;
import dev.limbo.reclaim.internal.NeutralizationEvent;

/**
 * Schemes {@code debra+} and {@code debra+-af}: DEBRA with neutralization (Brown, "Reclaiming
 * memory for lock-free data structures: there has to be a better way", PODC 2015, §5), in the
 * cooperative form of the digest's §5.9 Option A: a reclaimer marks its victim through the SPI's
 * mark (Guard (R2)), and the victim learns of it at its next poll, which throws {@link Restart}.
 *
 * <pre>{@code
 * Implementation notes (DEBRA's part is in Debra, the epochs, bags and stamps in EpochDomain; the
 * victim's protocol, (R1)-(R5), in Guard; numbers (P1)-(P6) are this class's)
 *
 * (P1) Suspects (§5.5). In a scan step (Debra), a thread found holding the epoch back (active in an
 *  older epoch, or, after a fence fallback, an unfenced word) while this thread's current limbo bag
 *  holds more than c records (Builder.suspectThreshold, default 4 blocks = 1024 records, the
 *  reference code's threshold) is neutralized, ReclaimDomain.neutralize(id) (R2), counted as
 *  checked, counted in stats().neutralizations() and recorded as a JFR dev.limbo.Neutralization
 *  event. A step whose bag is over c is also urgent: in asymmetric mode it issues its epoch's
 *  heavy barrier at once instead of waiting for the domain's ration, and rationed steps back off
 *  to at most STEP pins (debra: 4096), so that the epoch's length in pins stays bounded (P6).
 *  The paper signals each suspect once per scan, as here: another scanner whose bag is over c
 *  neutralizes a thread that is still behind again (the mark is idempotent).
 *
 * (P2) Why a neutralized thread may count as checked. After (R2), every read phase of the victim
 *  that began before the mark ends at its next poll with Restart, and a poll confirms every read
 *  before it (Guard: acquire fence, then the volatile load (R3) of the mark), so no result of a
 *  record freed after the mark is used. A victim in a write phase (beginWrite returned before its
 *  poll saw the mark) touches only records it reserved (R1) before its fence (R4); the
 *  store-buffering pair (R1)(R4)(R3) / (R2) then the frees' reservation loads (R5), which follow
 *  the mark through the advance CAS (5) and the freeing thread's acquire of E (1), guarantees that
 *  the reservations are seen by every screening (P4) after the neutralization, or that the victim
 *  saw the mark and restarted before writing. The victim's mark stays set through its write phase;
 *  its first poll after endWrite restarts.
 *
 * (P3) The stamp problem and the retire rule. EpochDomain frees a bag stamped s once E >= s + 3,
 *  which is sound in DEBRA because a thread pinned at local epoch e keeps E <= e + 1, so every
 *  unlink it makes happens while E <= e + 1 = s + 1. A neutralized thread no longer holds E back:
 *  in its write phase, or after endWrite before its next poll, it may unlink and retire while E is
 *  far past its local e, and a retire stamped e would be freed by its next pin although threads
 *  pinned at the current epoch may still reach the record. Rule: retire reads E (an acquire load
 *  (1), after the caller's unlink) and, if E_r > e + 1, raises the current bag's stamp to E_r - 1
 *  (EpochGuard.raiseStamp; stamps only grow). Proof: the unlink happened at E_u <= E_r, so every
 *  record of the bag was unlinked while E <= stamp + 1, as the stamp rule needs: when E >= stamp
 *  + 3 >= E_u + 2, the advance from E_u + 1 validated every thread after the unlink (seen
 *  quiescent or at E_u + 1, which it announced after the unlink, or neutralized after reading
 *  E_u + 1, (P2)). Raising never breaks the bag index invariant: bag (e mod 3) receives the
 *  retires of local epoch e; a raised stamp S = E_r - 1 is below every epoch the thread observes
 *  later (E only grows, and it read E_r), so when the bag becomes current again its stamp is set
 *  to that larger epoch and the records it still holds wait for it (conservative). A raised bag
 *  holds at most one epoch's retires plus the stale operation's m.
 *
 * (P4) Screening reserved records (§5.4, §5.6 isRProtected). A bag that became safe by its stamp
 *  joins this thread's pile (release). If no thread is marked now (ReclaimDomain (R6), a count
 *  read after the acquire (1) of the E that made the bag safe), the pile is freed at once, as in
 *  debra: every thread that a neutralizer counted as checked has since restarted or unpinned, so
 *  it no longer uses what it reached before (a restart inside an enclosing write phase stays
 *  counted until that phase ends). Otherwise, when the pile holds at least
 *  T = max(B, 2 n k) records (B = 256 per block, n = Participants.highWater(), k = slotWords, the
 *  reservations per thread), or on flush and on departure, the thread collects every published
 *  reservation once ((R5), acquire loads, ReclaimDomain.collectReservations; ReservationScreen,
 *  shared with nbr), sorts them, and
 *  walks the pile: a record [p, p + recordBytes) that contains a reservation (reserve() covers any
 *  address inside a record) stays in the pile; the others go on to the pool, or, debra+-af, to
 *  the amortized free list (Guard.dispose). At most n k records stay, so a screening frees at
 *  least T - n k >= T / 2 of them: O(n k log(n k)) work per T / 2 records, O(log(n k)) amortized
 *  per record (O(1) for a fixed n k, as the paper's hash set). With no reservation published the
 *  pile moves whole, O(1). A record kept is screened again at the next screening. Records that
 *  passed a screening stay safe in the amortized list: a thread that reserves one later was
 *  neutralized before the screening read its reservation words, and its beginWrite, whose fence
 *  follows the reservation, sees the mark (P2) and restarts.
 *
 * (P5) The victim (§5.3's recovery). Guard.restart clears the mark with a getAndSet (a full fence),
 *  then calls restarting(), which re-announces the current epoch (EpochGuard.pinCurrentEpoch: (1),
 *  (2), (3), (1b)) before the read phase starts over: the neutralizer counted the thread as
 *  quiescent, and only a fresh announcement protects the new read phase. The new local epoch frees
 *  what became safe by stamp into the pile (a restart does pool work, as a pin does; debra+-af
 *  only moves it to the amortized list, unless its backlog limit is exceeded). Nested sections:
 *  the announcement is the thread's, so one re-announcement covers every depth, and the enclosing
 *  depths restart at their next polls (Guard's pending restarts). Unpin stores the quiescent word
 *  as in debra; a mark left over from a write phase is cleared by the next outermost pin before it
 *  announces. Departure: the departed thread's reservations are cleared first (ReclaimDomain),
 *  its bags become an orphan (EpochDomain), and its pile is screened; what stays reserved becomes
 *  an orphan that is safe by stamp at once and screened again by whoever adopts it. A read-only
 *  operation confirms its answer with a poll (Guard's rule 3), so it never returns a value read
 *  from a record freed after the mark.
 *
 * (P6) Garbage bound, per thread, for operations that retire at most one record each (m = 1, the
 *  scheme suite's stalled-thread test; each term scales with m): an epoch lasts at most
 *  L = max(minCalls, c + 2) + STEP * ceil(n / STEP) of this thread's pins: after c + 2 pins its
 *  bag is over c, the next step (at most STEP - 1 pins later) is urgent and neutralizes whoever
 *  holds the epoch back, a pass over n threads takes ceil(n / STEP) steps, and minCalls pins are
 *  needed. Its three bags hold at most three epochs' retires, plus a raised bag's (P3) one more
 *  epoch and m; the pile holds less than T = max(B, 2 n k); debra+-af adds the amortized backlog,
 *  at most backlogLimit. garbageBound(n) = 4 L + T (+ backlogLimit): O(c + n + n k), so
 *  O(n (c + n k)) over all threads, the paper's O(n (n m + c)). Defaults (c = 1024, minCalls 100,
 *  STEP 20, k = 16, n <= 8): 4 * 1046 + 256 = 4440 records (5464 for debra+-af).
 *
 * Linearization points: debra's; a neutralization at the victim's mark store (R2), after which
 *  the scanner treats the victim as quiescent.
 * Progress: pin, unpin and retire as in debra; the scan step does at most STEP neutralizations.
 *  An advance no longer waits for a stalled thread once the scanner's bag is over c: reclamation
 *  is non-blocking (the paper's fault tolerance). A victim's read phase may restart repeatedly
 *  while it is slower than the epoch (livelock only if every read phase outlasts c retires of a
 *  scanner; the paper's caveat).
 * Memory ordering: EpochDomain's (1)-(12), Guard's (R1)-(R5); this class adds the acquire load (1)
 *  of E in retire (P3), ordered after the caller's unlink CAS, and the screening's (R5) loads,
 *  which follow the freeing thread's acquire load (1) of the E that made the bag safe.
 * Reclamation safety and ABA: a record is handed to the pool only when E >= stamp + 3 (P3) and no
 *  reservation names it (P4), so a thread still using it either was validated after its unlink,
 *  or restarts before its next use of what it read (P2), or reserved it; a pointer is reused only
 *  after that, so a write phase's CAS never meets a recycled record that it reserved.
 * }</pre>
 */
final class DebraPlus extends Debra {

    DebraPlus(final Builder b) {
        super(b, STEP);
    }

    @Override
    Guard newGuard(final int id) {
        return new DebraPlusGuard(this, id);
    }

    /** (P6): 4 L + T, plus the amortized backlog for debra+-af. */
    @Override
    long garbageBound(final int n) {
        final long epochPins = Math.max(minCalls, suspectThreshold + 2L) + (long) STEP * ((n + STEP - 1) / STEP);
        return 4 * epochPins + screeningThreshold(n) + (amortized ? backlogLimit : 0);
    }

    /** (P4): the pile size T = max(B, 2 n k) at which a thread screens it. */
    long screeningThreshold(final int n) {
        return Math.max(BlockLayout.CAPACITY, 2L * n * slotWords);
    }

    @Override
    void flush(final Guard guard) {
        super.flush(guard);
        ((DebraPlusGuard) guard).screen(true);
    }

    @Override
    void abandon(final Guard guard) {
        super.abandon(guard);
        final DebraPlusGuard g = (DebraPlusGuard) guard;
        g.screen(true);
        if (!g.pile.isEmpty()) {
            orphans.offer(new Orphan(Long.MIN_VALUE, takeAll(g, g.pile))); // safe by stamp: screened by its adopter
        }
        g.releaseScreeningBlocks();
    }

    @Override
    void drainRetired(final Guard guard, final BlockBag target) {
        super.drainRetired(guard, target);
        final DebraPlusGuard g = (DebraPlusGuard) guard;
        g.pile.moveAllTo(target);
        g.releaseScreeningBlocks();
    }

    /** (P1): counts and records a neutralization by participant {@code neutralizer}. */
    private void neutralized(final int neutralizer, final int victim, final long victimEpoch, final long bag) {
        if (EventGate.JFR) {
            NeutralizationEvent.emit(scheme.id(), neutralizer, victim, victimEpoch, bag);
        }
    }

    private static final class DebraPlusGuard extends DebraGuard {

        private final DebraPlus plus;
        /** (P4): records safe by stamp, waiting for a screening against the reservations. */
        final BlockBag pile;
        /** (P4): the screening against the reservations. */
        private final ReservationScreen screen;

        DebraPlusGuard(final DebraPlus domain, final int id) {
            super(domain, id);
            this.plus = domain;
            this.pile = new BlockBag(blocks);
            this.screen = new ReservationScreen(domain, blocks);
        }

        @Override
        boolean urgent() {
            return currentBag().size() > plus.suspectThreshold; // (P1)
        }

        @Override
        boolean suspect(final int id, final long a, final long e) {
            final long bag = currentBag().size();
            if (bag <= plus.suspectThreshold || !plus.neutralize(id)) { // (R2)
                return false;
            }
            plus.neutralized(this.id, id, a >>> 2, bag); // (P1)
            return true;
        }

        /** (P3): a retire after a neutralization stamps its bag at least E - 1. */
        @Override
        public void retire(final long ptr) {
            final long now = plus.globalEpoch(); // (1), after the caller's unlink
            if (now > epoch + 1) {
                raiseStamp(now - 1);
            }
            super.retire(ptr);
        }

        /** (P5): the neutralizer counted this thread as quiescent; announce again before reading. */
        @Override
        void restarting() {
            pinCurrentEpoch(); // (1), (2), (3), (1b)
        }

        /** (P4): safe records join the pile, which is screened once it holds T records. */
        @Override
        void release(final BlockBag safe) {
            safe.moveAllTo(pile);
            screen(false);
        }

        /**
         * (P4): if the pile holds at least T records (or {@code all}), hands every record of it that
         * no reservation names to {@link #dispose}; the reserved ones stay.
         */
        void screen(final boolean all) {
            if (pile.isEmpty()) {
                return;
            }
            if (!plus.anyMarked()) { // (R6): no thread between a neutralization and its restart
                dispose(pile);
                return;
            }
            final int n = Participants.highWater();
            if (!all && pile.size() < plus.screeningThreshold(n)) {
                return;
            }
            if (screen.collect(n) == 0) { // (R5)
                dispose(pile);
                return;
            }
            dispose(screen.split(pile));
        }

        /** Recycles the screening bags' blocks (departure, teardown); the pile must be empty. */
        void releaseScreeningBlocks() {
            pile.releaseBlocks();
            screen.releaseBlocks();
        }
    }
}
