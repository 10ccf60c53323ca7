package dev.limbo.reclaim;

import dev.limbo.core.Words;

/**
 * Schemes {@code he} and {@code he-af}: hazard eras (Ramalhete and Correia, "Brief announcement:
 * Hazard eras - non-blocking memory reclamation", SPAA 2017, Algorithms 1 and 2). Hazard pointers
 * whose slots hold eras instead of pointers: a thread publishes the era in which it read a
 * pointer, and a retired record is freed once no published era lies within its lifetime
 * [birth, retire].
 *
 * <pre>{@code
 * Implementation notes (the clock, headers, retired list and scan, (E1) to (E4), are EraDomain's)
 *
 * State: per thread, K = slots() * maxNesting era words in its hazard row (hp's slot words: a
 * window of slots() per nesting depth); 0 = none.
 *
 * protect(slot, address) (get_protected): prev = the slot's era (the owner's plain load);
 * loop { p = acquire load of the word (H1); e = E (E1); if e == prev return p; publish e in the
 * slot with a getAndSet (H2: store + full fence); prev = e }. Publishing only when the era moved
 * keeps protect at two loads while the era stands still (hp publishes and fences every pointer).
 * The loop is shared with wfe, which gives up after MAX_ATTEMPTS; he's rounds have
 * Integer.MAX_VALUE attempts, and a round that ends without a stable era starts another.
 * protectIfEqual(slot, address, expected): the same loop, returning false as soon as the word is
 * not expected.
 * pin: EraDomain's (E5) only (amortized free, a scan every scanThreshold pins). unpin:
 * release-clear the slots used in the section (H3).
 * retire, scan: EraDomain's (E3), (E4) (each slot era e is the reservation [e, e]).
 *
 * Invariant: a record whose link the load (H1) returned while it was reachable from the
 * structure, with the slot holding e, has birth <= e <= retire while the slot holds e. Proof: e
 * was published before the load and E equals e again after it, so E = e throughout the load
 * (E never decreases). The record was handed out (birth = E then, E2) before it was linked,
 * before the load: birth <= e. It was unlinked after the load, and its retire era was read after
 * the unlink (E3): retire >= e.
 * Safety: publish (H2) + fence + load (H1) against unlink + (E3) fence + the scan's fence and slot
 * loads (E4): the store-buffering pair. A slot cleared by (H3) after the section's reads ends
 * that slot's protection.
 * Capability PROTECTION_NEEDS_VALIDATION: as for hp: a record read through a frozen link of an
 * unlinked record may have been retired before the era was published.
 *
 * Memory ordering: (H1) acquire loads of links (pair with the publishing release or CAS);
 * (H2) getAndSet (store + full fence, one xchg on x86); (H3) release stores of 0; the owner's
 * own slot reads are plain (only it writes them while it lives).
 *
 * Linearization points: protect at its last load (H1) (E = e = the published era around it);
 * protectIfEqual likewise, or at the load that saw another word; unpin at the slots' (H3).
 * Progress: protectIfEqual, pin, unpin, retire wait-free; protect lock-free (it retries only when
 * the era moved); a scan is EraDomain's.
 * Garbage bound: EraDomain's. A stalled thread's slot eras are K values within the eras of its
 * section; each holds back the records alive in its era: at most S + EPOCH_FREQ * n.
 * garbageBound(n) = R + n * EPOCH_FREQ * n (+ backlogLimit), where each stalled thread's eras span
 * one era; in general K * (S + EPOCH_FREQ * n) per stalled thread (S, the structure's size, is
 * not a formula in n, slots and thresholds).
 * ABA: EraDomain's. Thread exit: departure clears the slots, scans once, orphans the rest.
 * }</pre>
 */
class HazardEras extends EraDomain {

    HazardEras(final Builder b) {
        super(b, true);
    }

    @Override
    Guard newGuard(final int id) {
        return new HeGuard(this, id);
    }

    /** Protect's attempts before it gives up and asks for help: he never does. */
    int attempts() {
        return Integer.MAX_VALUE;
    }

    /** A guard of hazard eras; wait-free eras' guard adds its slow path. */
    static class HeGuard extends EraGuard {

        /** Protect's attempts before {@link #exhausted}: Integer.MAX_VALUE for he, MAX_ATTEMPTS for wfe. */
        private final int attempts;
        /** Bit w set: slot word w (window and slot) was published in this section. */
        private long used;

        HeGuard(final HazardEras domain, final int id) {
            super(domain, id);
            this.attempts = domain.attempts();
        }

        @Override
        final void enter() {
            entering(); // (E5)
        }

        @Override
        final void exit() {
            final long u = used;
            used = 0;
            clearSlots(u); // (H3)
        }

        /** The slot word of {@code slot} in the current window, marked as used. */
        final long useSlot(final int slot) {
            final long hazard = slotAddress(slot);
            used |= 1L << ((hazard - row) >>> 3);
            return hazard;
        }

        @Override
        public final long protect(final int slot, final long address) {
            return confirmed(settle(useSlot(slot), address));
        }

        /** Protect's loop on slot word {@code hazard}: at most {@link #attempts} attempts, then {@link #exhausted}. */
        final long settle(final long hazard, final long address) {
            long prev = Words.lp(hazard);
            for (int attempt = 0; attempt < attempts; attempt++) {
                final long p = Words.la(address); // (H1)
                final long e = eras.era(); // (E1)
                if (e == prev) {
                    return p;
                }
                Words.xchg(hazard, e); // (H2)
                prev = e;
            }
            return exhausted(hazard, address);
        }

        @Override
        public final boolean protectIfEqual(final int slot, final long address, final long expected) {
            final long hazard = useSlot(slot);
            long prev = Words.lp(hazard);
            for (int attempt = 0; attempt < attempts; attempt++) {
                final boolean equal = Words.la(address) == expected; // (H1)
                final long e = eras.era(); // (E1)
                if (!equal || e == prev) {
                    if (polls) {
                        pollNow(); // (R3): confirms the word
                    }
                    return equal;
                }
                Words.xchg(hazard, e); // (H2)
                prev = e;
            }
            return confirmed(exhausted(hazard, address)) == expected;
        }

        /**
         * The era moved at every one of {@link #attempts} attempts. he never asks for help (its
         * protect is lock-free): another round of Integer.MAX_VALUE attempts. wfe: its slow path.
         */
        long exhausted(final long hazard, final long address) {
            return settle(hazard, address);
        }

        /** Polls (a neutralizing domain, or restart injection) after the load it confirms; returns {@code word}. */
        final long confirmed(final long word) {
            if (polls) {
                pollNow(); // (R3): confirms the word
            }
            return word;
        }
    }
}
