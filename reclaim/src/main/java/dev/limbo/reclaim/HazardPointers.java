package dev.limbo.reclaim;

import dev.limbo.allocator.internal.EventGate;
import dev.limbo.core.Participants;
import dev.limbo.core.Words;
import dev.limbo.reclaim.internal.BlockBag;
import dev.limbo.reclaim.internal.HazardScanEvent;

import java.util.Arrays;

/**
 * Schemes {@code hp} and {@code hp-af}: Michael's hazard pointers (Michael, "Hazard pointers: safe memory reclamation
 * for lock-free objects", IEEE TPDS 15(6), 2004, §3; the Stamp-it report §3.2 for the
 * protect/validate loop and the threshold).
 *
 * <pre>{@code
 * Implementation notes
 *
 * State: per thread, K = slots() * maxNesting single-writer hazard words in its 128-byte-padded row
 * (a window of slots() words per nesting depth, so nested sections never share a slot), and a
 * private list of retired records. R = 2 * slots() * n + B (the report's A = 2,
 * B = scanThreshold = 100), n = Participants.highWater().
 *
 * protect(slot, address): p = load(address) (1); loop { publish p without mark bits in the slot
 * (2); full fence (3); q = load(address) (1); if q equals p without marks, return q; p = q }.
 * protectIfEqual(slot, address, expected): publish (2), fence (3), return load(address) == expected.
 * unpin: release-clear (6) the slots used in the section.
 * retire: append to the private list; when it holds R records more than after the last scan, scan.
 * scan: adopt orphaned lists; full fence (4); acquire-load (5) every thread's slots into an array;
 * sort; free each retired record that is not in it (binary search), keep the rest.
 *
 * Invariant: a record published in a slot before it was unlinked, and still published, is never
 * freed. Safety: the publish (2) + fence (3) + re-validation (1) on one side and unlink + fence (4)
 * + slot load (5) on the other are the store-buffering pair: if the validation saw the record still
 * linked, the scan, which follows the unlink, sees the slot. (The jcstress HazardPublishVsScanTest
 * shows the race without the publish fence (3); without the scan fence (4) only when the unlink is
 * a plain release store, since on x86 an unlinking CAS is itself a full fence.)
 *
 * Memory ordering: (1) acquire loads of shared pointers; pair with the release/CAS that published
 * the node. (2) store of the hazard and (3) full fence, as one volatile getAndSet (x86 xchg: a
 * locked instruction is a full barrier, and cheaper here than a store plus VarHandle.fullFence).
 * (4) full fence at the start of a scan,
 * (5) acquire loads of the slots. (6) release store of 0 when a section ends: the section's reads
 * happen-before a scan that sees the slot cleared.
 *
 * Linearization points:
 *  protect: the validating load (1) that returns q equal (marks aside) to the published p: the
 *      hazard (2), (3) was visible before it, and the record was still reachable from address, so
 *      no scan that starts after its unlink can miss the hazard.
 *  protectIfEqual: its load (1) after the publish, when it returns true (when false, the slot
 *      still names expected until reused, which only delays its reclamation).
 *  unpin (outermost close): each used slot's release store of 0 (6) ends that slot's protection;
 *      the section has ended at the last one. Pin has no shared effect (a nesting count).
 *  retire: the add to the private list (thread-local; the caller's unlink precedes it).
 *  scan (at R retires, or flush): the fence (4); a record on the thread's list then (its own
 *      retires and the adopted orphans) is freed iff no slot named it at that slot's load (5).
 *
 * Progress: protect is lock-free (it retries only when the pointer changed); protectIfEqual,
 * pin and unpin (at most K stores) are wait-free; retire is wait-free with an O(R log H) scan
 * amortized over R retires, H = K * n; a scan (also flush) is wait-free up to the pool's and the
 * allocator's progress for the records it frees. Thread exit runs in a synchronized release hook.
 * Garbage bound: after a scan a thread keeps at most H records (the protected ones), so it holds
 * at most H + R retired records at any time, even while other threads stall: n * (H + R) in all
 * (garbageBound(n) = H + R per thread; hp-af adds its amortized backlog, at most backlogLimit).
 * Amortized free (hp-af; the Token-EBR digest §3.8's hook for hp): the records a scan finds safe go
 * through Guard.release, then dispose, to the freeable list, freed a few per pin by enter()
 * (freeSome) before the section publishes anything; the records that stay protected stay in the
 * retired list. Each scan is a new safe batch for the adaptive frees per pin.
 * ABA: a record stays allocated while a hazard names it, so a validated pointer cannot be a reused
 * record; protectIfEqual compares the full word, marks included.
 * Thread exit: the release hook clears the departed thread's slots and scans once on its behalf,
 * adopting every orphan; what a hazard still names becomes an orphan, adopted by the next scan of
 * any thread or departure. So orphans hold at most H records after each departure, however many
 * threads come and go without ever reaching R retires (thread churn).
 * }</pre>
 */
final class HazardPointers extends ReclaimDomain {

    HazardPointers(final Builder b) {
        super(b);
    }

    @Override
    Guard newGuard(final int id) {
        return new HpGuard(this, id);
    }

    @Override
    void flush(final Guard g) {
        ((HpGuard) g).scan();
    }

    /** Scans once for the departed thread (adopting every orphan): only protected records stay orphaned. */
    @Override
    void abandon(final Guard guard) {
        final HpGuard g = (HpGuard) guard;
        g.scan();
        if (!g.retiredList.isEmpty()) {
            orphans.offer(new Orphan(0, takeAll(g, g.retiredList)));
        }
        g.releaseBlocks();
    }

    @Override
    void drainRetired(final Guard guard, final BlockBag target) {
        final HpGuard g = (HpGuard) guard;
        g.retiredList.moveAllTo(target);
        g.releaseBlocks();
    }

    @Override
    long advances() {
        return 0;
    }

    /** The scan threshold R for {@code n} threads. */
    long threshold(final int n) {
        return 2L * slots * n + scanThreshold;
    }

    /**
     * H + R: after a scan a thread keeps at most the H = K * n protected records, and scans again R
     * later; plus the amortized backlog for hp-af.
     */
    @Override
    long garbageBound(final int n) {
        return (long) slotWords * n + threshold(n) + (amortized ? backlogLimit : 0);
    }

    private static final class HpGuard extends Guard {

        private final HazardPointers hp;
        final BlockBag retiredList;
        private final BlockBag kept;
        private final BlockBag safe;
        private long[] hazards = new long[0];
        private long nextScan;
        /** Bit w set: slot word w (window and slot) was published in this section. */
        private long used;

        HpGuard(final HazardPointers domain, final int id) {
            super(domain, id);
            this.hp = domain;
            this.retiredList = new BlockBag(blocks);
            this.kept = new BlockBag(blocks);
            this.safe = new BlockBag(blocks);
            this.nextScan = domain.threshold(Participants.highWater());
        }

        @Override
        void enter() {
            freeSome();
        }

        /** Recycles the empty blocks of the scan bags (the thread left or the domain closes). */
        void releaseBlocks() {
            retiredList.releaseBlocks();
            kept.releaseBlocks();
            safe.releaseBlocks();
        }

        @Override
        void exit() {
            final long u = used;
            used = 0;
            clearSlots(u); // (6)
        }

        @Override
        public long protect(final int slot, final long address) {
            final long hazard = slotAddress(slot);
            used |= 1L << ((hazard - row) >>> 3);
            long p = Words.la(address); // (1)
            while (true) {
                Words.xchg(hazard, p & ~MARK_BITS); // (2), (3)
                final long q = Words.la(address); // (1)
                if ((q & ~MARK_BITS) == (p & ~MARK_BITS)) {
                    if (polls) {
                        pollNow(); // (R3): confirms the word
                    }
                    return q;
                }
                p = q;
            }
        }

        @Override
        public boolean protectIfEqual(final int slot, final long address, final long expected) {
            final long hazard = slotAddress(slot);
            used |= 1L << ((hazard - row) >>> 3);
            Words.xchg(hazard, expected & ~MARK_BITS); // (2), (3)
            final boolean equal = Words.la(address) == expected; // (1)
            if (polls) {
                pollNow(); // (R3): confirms the word
            }
            return equal;
        }

        @Override
        public void retire(final long ptr) {
            noteRetire(ptr);
            retiredList.add(ptr);
            if (retiredList.size() >= nextScan) {
                scan();
            }
        }

        /** Frees every retired record that no hazard slot names. */
        void scan() {
            // JFR: no event object unless a recording may want it
            final HazardScanEvent event = EventGate.JFR && HazardScanEvent.GATE.isEnabled() ? new HazardScanEvent() : null;
            final boolean timed = event != null;
            if (timed) {
                event.begin();
            }
            for (ReclaimDomain.Orphan o; (o = hp.orphans.poll()) != null; ) {
                o.bag().moveAllTo(retiredList);
            }
            hp.scans.incrementAndGet();
            Words.fullFence(); // (4)
            final int n = Participants.highWater();
            final int k = hp.slotWords;
            if (hazards.length < n * k) {
                hazards = new long[Math.max(n * k, 2 * hazards.length)];
            }
            int h = 0;
            for (int id = 0; id < n; id++) {
                final long base = hp.slotTable.slot(id) + ReclaimDomain.HAZARDS;
                for (int s = 0; s < k; s++) {
                    final long v = Words.la(base + (long) s * Long.BYTES); // (5)
                    if (v != 0) {
                        hazards[h++] = v;
                    }
                }
            }
            Arrays.sort(hazards, 0, h);
            final long scanned = retiredList.size();
            for (long ptr; (ptr = retiredList.pop()) != 0; ) {
                (Arrays.binarySearch(hazards, 0, h, ptr) >= 0 ? kept : safe).add(ptr);
            }
            final long keptCount = kept.size();
            kept.moveAllTo(retiredList);
            adaptFreesPerPin(); // hp-af: a new safe batch arrives
            release(safe);
            nextScan = retiredList.size() + hp.threshold(n);
            if (timed && event.shouldCommit()) {
                event.scanned = scanned;
                event.kept = keptCount;
                event.hazards = h;
                event.commit();
            }
        }
    }
}
