package dev.limbo.reclaim;

import dev.limbo.core.Layouts;
import dev.limbo.core.Participants;
import dev.limbo.core.Words;
import dev.limbo.reclaim.internal.BlockBag;
import dev.limbo.reclaim.internal.EpochAdvanceEvent;

import java.util.concurrent.atomic.AtomicLong;

/**
 * What the epoch schemes ({@link FraserEbr}, {@link Debra}) share: the global epoch, the
 * announcement encoding, three limbo bags per thread, the full scan, flush and thread exit.
 *
 * <pre>{@code
 * Implementation notes (shared part)
 *
 * State: a global epoch E (a counter in its own 128-byte line, advanced by +1 with a CAS that
 * expects exactly the epoch the advancer validated) and, per thread, an announcement word
 * A = e << 1 | active, written only by its owner. A zero word (a thread that never pinned, or
 * left) is quiescent.
 *
 * Limbo bags: each thread has three bags; bag (e mod 3) receives what the thread retires while it
 * is pinned at its local epoch e, and each bag carries the local epoch it was filled in (its stamp).
 *
 * Invariant and safety: a record retired while its thread was pinned at local epoch e is freed
 * only once the global epoch is at least e + 3. While that thread is pinned at e the epoch cannot
 * pass e + 1 (an advance from e + 1 needs every active thread at e + 1), so the unlink happened
 * while E <= e + 1. The advance from e + 2 to e + 3 validated every thread as quiescent or
 * announcing e + 2, each observed after E reached e + 2, so after the unlink: a thread that was
 * quiescent then, or that announced e + 2 (reading E after the unlink), began its current section
 * after the unlink and cannot reach the record. (DEBRA §4.4's three rotations; the rule by stamps
 * also frees all bags at once when a thread observes a jump of 3 or more epochs.) The stamp rule
 * makes bag (e mod 3) empty whenever a thread moves to epoch e: its stamp is congruent to e and
 * below it, hence at most e - 3.
 *
 * Garbage bound: none while a thread stays pinned (the epoch stops at its epoch + 1); the stalled-
 * thread test shows unreclaimed nodes growing without bound, as expected of EBR and DEBRA.
 *
 * Memory ordering (numbers shared by the subclasses):
 *  (1) acquire load of E when pinning; pairs with the advance CAS (5). (1b) E is read again after
 *      (3), and the thread re-announces if it moved: E may advance any number of times between
 *      (1) and (2) while the thread still looks quiescent, and only a re-validated announcement
 *      gives the invariant below (E <= e + 1 while pinned at e).
 *  (2) opaque store of the announcement A = e << 1 | 1, then
 *  (3) a full fence: StoreLoad between the announcement and every pointer the section reads.
 *      With (4) preceded by a fence on the scanning side (the scanner's own (3), or (7)), this is
 *      the store-buffering pair: either the scanner sees the announcement, or the reader sees the
 *      unlink that preceded the scan. Release/acquire alone would allow both to miss (the jcstress
 *      EpochAnnounceVsAdvanceTest shows it).
 *  (4) acquire loads of other threads' announcements while scanning.
 *  (5) CAS E: e -> e + 1, expecting the validated e exactly, so a stale scanner cannot skip an
 *      epoch (a failed CAS means someone else advanced).
 *  (6) release store of A = e << 1 when leaving: every read of the section happens-before a
 *      scanner that sees the thread quiescent.
 *  (7) a full fence before flush's scan, which runs outside a section.
 *
 * Thread exit: a departed thread's bags become one orphan stamped with the global epoch E_h read
 * after its last retire; it is freed when E >= E_h + 2 (the two advances after E_h validate every
 * thread after the thread's last unlink).
 * }</pre>
 */
abstract class EpochDomain extends ReclaimDomain {

    /** The epoch word: alone in a 128-byte line. */
    final long epochAddress;
    private final AtomicLong advances = new AtomicLong();

    EpochDomain(final Builder b) {
        super(b);
        this.epochAddress = allocator.allocateZeroed(Layouts.PADDED);
    }

    @Override
    final long advances() {
        return advances.get();
    }

    @Override
    final void freeSchemeMemory() {
        allocator.free(epochAddress);
    }

    /** Whether every thread is quiescent or announces {@code e} (a full scan; (4)). */
    final boolean everyoneAt(final long e) {
        scans.incrementAndGet();
        final int n = Participants.highWater();
        for (int id = 0; id < n; id++) {
            final long a = Words.la(slotTable.slot(id) + ANNOUNCE); // (4)
            if ((a & 1) != 0 && (a >>> 1) != e) {
                return false;
            }
        }
        return true;
    }

    /** Advances the epoch from {@code e} (5); on success frees the orphans that became safe. */
    final boolean advance(final EpochGuard g, final long e) {
        if (!Words.cas(epochAddress, e, e + 1)) { // (5)
            return false;
        }
        advances.incrementAndGet();
        EpochAdvanceEvent.emit(scheme.id(), e + 1);
        reclaimOrphans(g, e + 1 - 2);
        return true;
    }

    @Override
    final void flush(final Guard guard) {
        final EpochGuard g = (EpochGuard) guard;
        for (int round = 0; round < 3; round++) {
            final long e = Words.la(epochAddress); // (1)
            g.observe(e);
            Words.fullFence(); // (7)
            if (!everyoneAt(e) || !advance(g, e)) {
                break;
            }
        }
        final long e = Words.la(epochAddress);
        g.observe(e);
        reclaimOrphans(g, e - 2);
    }

    @Override
    final void abandon(final Guard guard) {
        final EpochGuard g = (EpochGuard) guard;
        final BlockBag all = new BlockBag(g.blocks);
        for (final BlockBag bag : g.bags) {
            bag.moveAllTo(all);
            bag.releaseBlocks();
        }
        if (!all.isEmpty()) {
            orphans.offer(new Orphan(Words.la(epochAddress), all)); // (1)
        }
    }

    @Override
    final void drainRetired(final Guard guard, final BlockBag target) {
        for (final BlockBag bag : ((EpochGuard) guard).bags) {
            bag.moveAllTo(target);
            bag.releaseBlocks();
        }
    }

    /** A thread's state in an epoch scheme. */
    abstract static class EpochGuard extends Guard {

        final BlockBag[] bags = new BlockBag[3];
        private final long[] stamps = {-3, -3, -3};
        /** The local epoch: the last global epoch this thread observed. */
        long epoch = -1;
        private final EpochDomain epochs;

        EpochGuard(final EpochDomain domain, final int id) {
            super(domain, id);
            this.epochs = domain;
            for (int i = 0; i < 3; i++) {
                bags[i] = new BlockBag(blocks);
            }
        }

        /**
         * Moves to global epoch {@code e} if it is new: frees every bag stamped at most e - 3.
         * Called while quiescent (before announcing), so freeing never delays an advance.
         * Returns whether the epoch was new.
         */
        final boolean observe(final long e) {
            if (e == epoch) {
                return false;
            }
            adaptFreesPerPin();
            for (int i = 0; i < 3; i++) {
                if (stamps[i] <= e - 3) {
                    release(bags[i]);
                }
            }
            epoch = e;
            stamps[(int) (e % 3)] = e;
            return true;
        }

        /** Announces local epoch {@code e}: (2) then (3). */
        final void announce(final long e) {
            Words.opaqueStore(row + ANNOUNCE, e << 1 | 1); // (2)
            Words.fullFence(); // (3)
        }

        /**
         * Outermost pin: reads E (1), frees what became safe, announces E (2), (3), and re-reads E
         * after the fence (1b); if E moved, the announcement may be stale (E can advance any
         * number of times while this thread is quiescent between (1) and (2), and a stale stamp
         * would let the stamp rule free this section's retires at once), so it starts over.
         * Returns the announced epoch e, with the invariant that E stays at most e + 1 until the
         * section ends. Lock-free: it retries only after another thread advanced E.
         */
        final long pinCurrentEpoch() {
            long e = globalEpoch(); // (1)
            while (true) {
                observe(e);
                announce(e); // (2), (3)
                final long now = globalEpoch(); // (1b)
                if (now == e) {
                    return e;
                }
                e = now;
            }
        }

        @Override
        final void exit() {
            Words.sr(row + ANNOUNCE, epoch << 1); // (6)
        }

        @Override
        public final long protect(final int slot, final long address) {
            slotAddress(slot);
            return Words.la(address);
        }

        @Override
        public final boolean protectIfEqual(final int slot, final long address, final long expected) {
            slotAddress(slot);
            return Words.la(address) == expected;
        }

        @Override
        public final void retire(final long ptr) {
            noteRetire(ptr);
            bags[(int) (epoch % 3)].add(ptr);
        }

        /** The current global epoch (1). */
        final long globalEpoch() {
            return Words.la(epochs.epochAddress);
        }
    }
}
