package dev.limbo.reclaim;

import dev.limbo.core.Participants;

/**
 * Schemes {@code debra} and {@code debra-af}: Brown's distributed epoch-based reclamation (Brown,
 * "Reclaiming memory for lock-free data structures: there has to be a better way", PODC 2015, §4).
 *
 * <pre>{@code
 * Implementation notes (the shared epoch machinery, ordering numbers and safety argument are in
 * EpochDomain)
 *
 * pin (outermost), DEBRA's leaveQstate: amortized free (debra-af), then read E (1); on a new epoch,
 * free the bags stamped at most E - 3 and restart the incremental scan (checked = 0, calls = 0;
 * also when flush() observed the new epoch); announce E (2), (3) and re-read E (1b), starting over
 * if it moved. Then, every STEP = 20 pins (the reference code's MIN_OPS_BEFORE_READ; the 2015
 * paper checks one thread on every operation), one scan step checks up to 20 threads (4), so one
 * per pin on average: while thread `checked` is quiescent or at E, move on to the next, and stop
 * at the first that is active in another epoch; once all n = Participants.highWater() threads were
 * checked and this thread made at least minCalls (default 100, the paper's MIN_CALLS) pins in this
 * epoch, advance E with an exact CAS (5). In asymmetric mode (EpochDomain (8)-(10)) the steps of
 * an epoch count only after a heavy barrier was issued in it: until then a step polls the
 * barrier-epoch word and, if need be, issues the barrier (rationed per domain); while it is
 * rationed the polls back off, doubling the pins between them up to 4096. A single countdown
 * decides when the next step runs, so the other pins pay one decrement.
 * unpin, enterQstate: release store of the quiescent announcement (6).
 * debra+ (DebraPlus) extends this class through three hooks: suspect() lets a scan step count a
 * thread that holds the epoch back as checked (once it neutralized it), urgent() lets a step issue
 * its epoch's heavy barrier without waiting for the ration, and the back-off cap of rationed steps
 * is a constructor argument (debra: 4096 pins).
 *
 * Differences from the paper: (a) the announcement word is e << 2 | fenced << 1 | active, so zero (never pinned)
 * is quiescent, and the epoch counts by one; (b) bags are freed by stamp (at most E - 3), which
 * frees what the paper's three rotations free, and all bags at once after a jump of 3 epochs;
 * (c) whole bags move, the partial head block included, since all of a bag is safe (§4.5 keeps it
 * only to keep pool bags' "only the head is partial" invariant, which our bags do not need);
 * (d) freeing happens before announcing, as the amortized-free artifact does, so a long free never
 * delays other threads' advance.
 *
 * Linearization points: EpochDomain's; an advance at its CAS (5), in the step that completes the
 * incremental pass. The pass is not atomic: each thread is seen quiescent or at E at its own
 * check, but every check follows this thread's read of E = e, which is all the safety argument in
 * EpochDomain needs (a thread checked quiescent that pins later announces e or more); if E moved
 * meanwhile, the CAS fails. The step that completes a pass counts one scan in stats().scans().
 *
 * Cost: O(1) per pin: two reads of E, one announcement, one fence (symmetric mode; none in
 * asymmetric mode), and every 20 pins up to 20 other threads' announcements; plus, asymmetric, about
 * one membarrier system call per epoch per domain, paid by the pin that issues it.
 * Progress: unpin, protect and retire are wait-free; pin is lock-free (it re-announces only when
 * another thread advanced E).
 * Garbage bound: unbounded while a thread stays pinned (DEBRA+ adds neutralization for that).
 * ABA: a record is reused only after its grace period.
 * }</pre>
 */
class Debra extends EpochDomain {

    /** Asymmetric mode: the longest wait, in pins, between two polls for a heavy barrier. */
    private final int longestPoll;

    Debra(final Builder b) {
        this(b, LONGEST_POLL);
    }

    /** A DEBRA domain whose rationed scan steps back off to at most {@code longestPoll} pins. */
    Debra(final Builder b, final int longestPoll) {
        super(b);
        this.longestPoll = longestPoll;
    }

    @Override
    Guard newGuard(final int id) {
        return new DebraGuard(this, id);
    }

    /** Pins between two scan steps (the reference code's MIN_OPS_BEFORE_READ). */
    static final int STEP = 20;
    /** Asymmetric mode: debra's longest wait, in pins, between two polls for a heavy barrier. */
    private static final int LONGEST_POLL = 4096;

    static class DebraGuard extends EpochGuard {

        private final Debra debra;
        /** Threads checked and pins made in the local epoch. */
        private int checked;
        private int calls;
        /** Pins until the next scan step, and how many pins it was set to. */
        private int countdown;
        private int scheduled;
        /** Whether steps in the local epoch may check announcements: see EpochDomain (8)-(10). */
        private boolean trusted;
        /** Asymmetric mode: pins between polls for a heavy barrier, doubled while it is rationed. */
        private int pollInterval;

        DebraGuard(final Debra domain, final int id) {
            super(domain, id);
            this.debra = domain;
        }

        @Override
        void epochChanged() {
            checked = 0;
            calls = 0;
            trusted = !debra.asymmetricFence;
            pollInterval = STEP;
            schedule(STEP);
        }

        private void schedule(final int pins) {
            countdown = pins;
            scheduled = pins;
        }

        @Override
        void enter() {
            freeSome();
            final long e = pinCurrentEpoch(); // (1), (2), (3), (1b)
            if (--countdown > 0) {
                return;
            }
            step(e);
        }

        /** One scan step, every STEP pins (or every pollInterval pins while waiting for a barrier). */
        private void step(final long e) {
            calls += scheduled;
            schedule(STEP);
            if (!trusted) {
                if (!debra.scansTrusted(e)) { // (9), or (8) and (10); false: rationed
                    if (!urgent()) {
                        pollInterval = Math.min(2 * pollInterval, debra.longestPoll);
                        schedule(pollInterval);
                        return;
                    }
                    debra.flushFence(e); // (8) and (10) unrationed, or (7)
                }
                trusted = true;
            }
            final int n = Participants.highWater();
            int next = checked;
            for (int budget = STEP; next < n && budget > 0; budget--) {
                final long a = debra.announcementOf(next); // (4)
                if (debra.holdsBack(a, e) && !suspect(next, a, e)) {
                    break; // active in an older epoch (or unfenced after a fallback): look again at the next step
                }
                next++;
            }
            if (next >= n && checked < n) {
                debra.scans.incrementAndGet(); // this epoch's pass has now read every thread's announcement
            }
            checked = next;
            if (next >= n && calls >= debra.minCalls) {
                debra.advance(this, e); // (5)
            }
        }

        /**
         * Scheme hook (debra+): whether this scan step must not wait for a rationed heavy barrier,
         * but issue one now. False: debra waits.
         */
        boolean urgent() {
            return false;
        }

        /**
         * Scheme hook (debra+): participant {@code id}, whose announcement {@code a} holds the epoch
         * back from advancing past {@code e}, may count as checked (it was neutralized). False:
         * debra waits for it.
         */
        boolean suspect(final int id, final long a, final long e) {
            return false;
        }
    }
}
