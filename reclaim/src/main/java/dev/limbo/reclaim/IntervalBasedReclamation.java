package dev.limbo.reclaim;

import dev.limbo.core.Words;

/**
 * Schemes {@code ibr} and {@code ibr-af}: interval-based reclamation, the 2GE variant (Wen,
 * Izraelevitz, Cai, Beadle and Scott, "Interval-based memory reclamation", PPoPP 2018, §3.2 and
 * §4, "2GEIBR"). Records carry their birth and retire eras; a thread reserves the interval of eras
 * [lower, upper] in which it may have read a pointer; a retired record is freed once no
 * reservation overlaps its lifetime [birth, retire].
 *
 * <pre>{@code
 * Implementation notes (the clock, headers, retired list and scan, (E1) to (E4), are EraDomain's)
 *
 * State: per thread, the interval [lower, upper] in its guard (EraGuard), lower = 0 outside
 * sections. One interval per thread covers all its slots and nesting depths: slots only check
 * their index.
 *
 * pin (outermost, start_op): EraDomain's (E5), then e = E (E1); publish upper = e (I1),
 * then lower = e with a getAndSet (I2: store + full fence).
 * protect(slot, address): loop { p = acquire load of the word (I3); e = E (E1); if e <= upper
 * return p; raise upper to e with a getAndSet (I4: store + full fence) }.
 * protectIfEqual(slot, address, expected): the same loop, returning false as soon as the word is
 * not expected.
 * unpin (end_op): release store of lower = 0 (I5). retire, scan: EraDomain's (E3), (E4).
 *
 * Invariant: a record that a thread's load (I3) returned inside its section, while the record was
 * reachable from the structure's roots, has birth <= upper and retire >= lower for as long as the
 * section lasts. Proof: birth = E when it was handed out (E2), before it was published, before the
 * load, so birth <= E at the load <= e <= upper (E is read after the load, and the loop returns
 * only with e <= upper). It was reachable at the load, after the pin read lower, so its unlink
 * follows the pin and its retire era, read after the unlink (E3), is >= lower.
 * Safety: the reader's (I2)/(I4) publish + fence + load (I3) against the retirer's unlink + (E3)
 * fence + the scan's (E4) fence and acquire loads of lower and upper: the store-buffering pair of
 * EraDomain's notes. The scan reads lower before upper and every publish writes upper before lower,
 * so an interval read mixes at worst an old lower with a newer upper: a wider interval, never
 * a narrower one.
 * Capability PROTECTION_NEEDS_VALIDATION: declared. The proof needs the record reachable from the
 * roots at the load, after the pin: a record reached through a frozen link of an already unlinked
 * record may itself have been unlinked and retired before this thread pinned (retire < lower),
 * and then no reservation of this thread holds it back. Structures that validate reachability
 * after protecting (as for hp) never use such a record.
 *
 * Memory ordering: (I1) opaque store of upper, ordered before (I2) by it; (I2), (I4) getAndSet
 * (a volatile read-modify-write: store + full fence); (I3) acquire loads of links, pairing with
 * the release or CAS that published the record; (I5) release store, ordering the section's reads
 * before a scan that sees lower = 0; scans read lower, then upper, with acquire loads (E4).
 *
 * Linearization points: pin at (I2); protect at its last load (I3) (the one after which E <=
 * upper); protectIfEqual likewise, or at the load that saw another word; unpin at (I5).
 * Progress: pin, unpin and retire are wait-free; protect is lock-free (it retries only when the
 * era moved, i.e. another thread allocated its way to a tick); a scan is EraDomain's.
 * Garbage bound: EraDomain's. Beyond the records alive when a stall began, a stalled reservation
 * holds back the records born in its eras lower..upper: EPOCH_FREQ * n per era.
 * garbageBound(n) = R + n * EPOCH_FREQ * n (+ backlogLimit) where every stalled interval spans one
 * era; an interval that spans w eras (an operation that ran through w - 1 ticks and then
 * stalled) holds back up to w * EPOCH_FREQ * n records plus the structure's size: not a formula in
 * n, slots and thresholds, which is the price of IBR's constant-time protect.
 * ABA: EraDomain's.
 * Thread exit: departure clears the interval, scans once and leaves the rest as an orphan (EraDomain).
 * }</pre>
 */
final class IntervalBasedReclamation extends EraDomain {

    IntervalBasedReclamation(final Builder b) {
        super(b, false);
    }

    @Override
    Guard newGuard(final int id) {
        return new IbrGuard(this, id);
    }

    private static final class IbrGuard extends EraGuard {

        IbrGuard(final IntervalBasedReclamation domain, final int id) {
            super(domain, id);
        }

        @Override
        void enter() {
            entering(); // (E5)
            final long e = eras.era(); // (E1)
            publishInterval(e, e); // (I1), (I2)
        }

        @Override
        void exit() {
            clearInterval(); // (I5)
        }

        @Override
        public long protect(final int slot, final long address) {
            slotAddress(slot);
            while (true) {
                final long p = Words.la(address); // (I3)
                final long e = eras.era(); // (E1)
                if (e <= upperPlain()) {
                    if (polls) {
                        pollNow(); // (R3): confirms the word
                    }
                    return p;
                }
                raiseUpper(e); // (I4)
            }
        }

        @Override
        public boolean protectIfEqual(final int slot, final long address, final long expected) {
            slotAddress(slot);
            while (true) {
                final boolean equal = Words.la(address) == expected; // (I3)
                final long e = eras.era(); // (E1)
                if (!equal || e <= upperPlain()) {
                    if (polls) {
                        pollNow(); // (R3): confirms the word
                    }
                    return equal;
                }
                raiseUpper(e); // (I4)
            }
        }
    }
}
