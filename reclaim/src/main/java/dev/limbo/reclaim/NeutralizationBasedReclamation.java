package dev.limbo.reclaim;

import dev.limbo.allocator.internal.EventGate;
import dev.limbo.core.Participants;
import dev.limbo.reclaim.internal.BlockBag;
import dev.limbo.reclaim.internal.NeutralizationEvent;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Schemes {@code nbr}, {@code nbr+} and their {@code -af} forms: neutralization-based reclamation
 * (Singh, Brown, Mashtizadeh, "NBR: neutralization based reclamation", PPoPP 2021, §4-§5), and
 * NBR+ (the journal version's and the artifact's "piggybacking" of the other threads'
 * neutralizations), in the cooperative form that DebraPlus uses: a reclaimer marks each thread
 * (Guard (R2)) instead of sending it a signal, and the thread learns of it at its next poll, which
 * throws {@link Restart} instead of a siglongjmp.
 *
 * <pre>{@code
 * Implementation notes (the victim's protocol, (R1)-(R6), is Guard's and ReclaimDomain's; (N1)-(N7)
 * and the accesses (S1)-(S5) are this class's)
 *
 * (N1) State. Per thread: a bag of retired records (its own retires, and orphans it adopted), and
 *  for nbr+ a pending bag (the records it retired before its low-watermark stamp snapshot) with
 *  that snapshot. B = Builder.scanThreshold (the scan-on-threshold batch size of every such scheme
 *  here; the artifact's MAX_RETIREBAG_CAPACITY is 32 K, the value of the Token-EBR paper's
 *  Experiment 2, which a benchmark passes as scanThreshold(32768) to every scheme at once); k =
 *  slotWords = slots * maxNesting reservation words per thread; n = Participants.highWater(). base
 *  = the records that stayed reserved at this thread's last screening. Per participant id: a round
 *  stamp (single writer: the id's holder, or its departure hook, which runs before the id's next
 *  claim), even between rounds, odd during one. Per domain: roundsEnded, the rounds completed.
 *
 * (N2) Read phases, write phases, polls. A read phase reads shared memory only through protect
 *  and protectIfEqual (sectionProtect: an acquire load (1), then a poll (R3) that confirms it);
 *  a structure confirms what it read with poll before using it, and reserves (R1) every record
 *  its write phase touches before beginWrite (fence (R4), poll (R3)). Polls replace the paper's
 *  signals: Guard.protect, protectIfEqual, poll and beginWrite poll. No read phase runs unbounded
 *  without one, because every traversal step protects (Guard's class doc): a marked thread in a
 *  read phase restarts at its next step, before it uses anything read from a record freed after
 *  the mark (a poll's acquire fence orders the phase's reads before its load of the mark). A
 *  thread that does not run does not poll, but it uses nothing either until it polls.
 *
 * (N3) A round (nbr's signalAll, §4.2), run by a thread whose bag reaches base + B records, by
 *  flush, and by a departure: adopt the orphans into the bag; (S1) stamp odd; mark every thread
 *  that has a guard here (ReclaimDomain.neutralize, (R2), counted in stats().neutralizations() and
 *  recorded as a JFR dev.limbo.Neutralization event with victimEpoch 0), except the round's own
 *  thread when it is at nesting depth 1; (S2) stamp even; (S3) roundsEnded + 1; then screen the
 *  whole bag (N4). The rule for a record retired before a round (NBR §4.3): every record in the
 *  bag was unlinked before it was retired, so before the round's first mark; after the marks,
 *  every thread that may hold a reference to it is either marked after the unlink, and restarts
 *  at its next poll before using it (a read phase), or was in a write phase when marked, and then
 *  uses only records it reserved before its fence (R4), which the screening sees (N4), or is
 *  this thread at depth 1, which is in the write phase that retires (it uses only its own
 *  reserved records, and its own reservations are screened as the others' are). A thread at a
 *  deeper depth marks itself: its enclosing depths may hold pointers read before the nested
 *  section, and a nested retire may free what they reached (an adopted orphan); they restart at
 *  their next poll (Guard's rule 4). Unpinned threads are marked too, rather than skipped on a
 *  nesting of 0: a pin announces its nesting without a StoreLoad fence where membarrier exists
 *  (ReclaimDomain (C2)), so a reclaimer that read 0 could miss a thread whose first read already
 *  saw the record; a mark on an unpinned thread costs only its next outermost pin's clear (a
 *  getAndSet, after which its reads see the unlink), and a pinned one restarts.
 *
 * (N4) Screening (§4.3's freeing step; DebraPlus (P4), shared as ReservationScreen): after the
 *  marks (or, nbr+, after the stamp that shows another thread's marks, (N5)), collect every
 *  published reservation once ((R5), acquire loads), sort them, and hand every record of the batch
 *  that no reservation names (an address inside [p, p + recordBytes) reserves p) to Guard.dispose
 *  (the pool, or, -af, the freeable list, freed a few per pin before the section's first read:
 *  the Token-EBR digest §3.8's hook for nbr); the reserved ones stay in the bag, base = their
 *  number, at most n k. Safety: the store-buffering pair (R1)(R4)(R3) / (R2)(R5): a victim whose
 *  beginWrite poll missed the mark published its reservations before its fence, and the mark
 *  came later in the total order of the full fences, so the collection, after the mark, sees them
 *  (NbrReserveVsNeutralizeTest). A reservation made after the marks is made by a marked thread,
 *  whose beginWrite then restarts.
 *
 * (N5) nbr+ (piggybacking): when a thread's bag reaches base + B / 2 (the low watermark) and it has
 *  no pending bag, it moves the bag to the pending bag and snapshots (S4) roundsEnded, then (S5)
 *  every stamp s_j of ids j < n. At each later retire, if roundsEnded moved since it last looked
 *  (S4), it reads the stamps again (S5): a stamp of j >= s_j + 2 + (s_j & 1) (the end of a round of
 *  j that began after the snapshot: a round in flight at the snapshot, s_j odd, does not count)
 *  means that j marked every thread after this thread's retires of the pending records. It then
 *  screens the pending bag (N4) against reservations it collects after that load, and frees it
 *  without marking anyone: the round of j gives exactly what a round of its own would, for every
 *  record retired before the snapshot. What stays reserved goes back to the bag. A thread whose
 *  bag (pending included) reaches base + B runs a round of its own (N3), which frees the pending
 *  bag with the rest. The roundsEnded filter costs a load per retire: a covering round increments
 *  it after its end stamp (S2), so a thread that read it (S4) before a scan of the stamps that
 *  missed that stamp sees it move again. An id at or above the highWater that the snapshot read
 *  (a volatile load, after the pending retires) had never been claimed, so its stamp was 0 then,
 *  and its holder's rounds follow its claim's raise of highWater (a volatile read-modify-write),
 *  which the snapshot's load did not see: they began after the snapshot, and count from 0.
 *
 * (N6) Departure and orphans: the release hook clears the departed thread's reservations
 *  (ReclaimDomain), and, if it leaves retired records or orphans are waiting, runs a round on its
 *  behalf (with its id's stamp); what stays reserved becomes an orphan, adopted into the bag of
 *  the next round of any thread or departure. So orphans hold at most n k records after each
 *  departure, however many threads come and go. Teardown takes every bag.
 *
 * (N7) Garbage bound, per thread: between screenings its bag (pending included) holds fewer than
 *  base + B records, base <= n k (the records reserved at the last screening; there are n k
 *  reservation words); the batch a round frees is that bag (and the orphans it adopts, the
 *  departed threads' at most n k reserved records). -af adds the freeable backlog, at most
 *  backlogLimit after each dispose. garbageBound(n) = B + n k (+ backlogLimit): finite, O(B + n k)
 *  per thread, O(n (B + n k)) in all. It holds while another thread stalls anywhere: a round
 *  never waits for anyone (it marks and moves on; a stalled thread never polls, and needs not),
 *  and a stalled thread keeps at most the records named by its k reservation words, whatever
 *  phase it stalls in: reservations are published only before a write phase (a thread stalled in
 *  its first read phase reserves nothing) and cleared when their section ends; those are part of
 *  the n k that a screening keeps. Defaults (B = 100, k = 16): 100 + 16 n records (1124 + 16 n for
 *  the -af forms). The scheme suite's stall test (20,000 retires) needs B + n k below 20,000:
 *  the default B of the scan-on-threshold schemes, rather than the artifact's 32 K, keeps it so.
 *
 * Memory ordering: Guard's (R1)-(R6); (1) the protect's acquire load, paired with the release
 *  store or CAS that published the record; (S1) volatile store of the odd stamp, before the round's
 *  marks (R2); (S2) volatile store of the even stamp, after them; (S3) getAndIncrement of
 *  roundsEnded, after (S2); (S4) volatile load of roundsEnded, before (S5) the volatile loads of
 *  the stamps. Pairs: (S5) reading (S2)'s value orders that round's marks before the reader's
 *  collection (R5); the snapshot's (S5) reading s_j orders it, in the synchronization order,
 *  before j's next (S1), so before that round's marks, and the pending records' unlinks (before
 *  their retires, before the snapshot) before the marks; (S3)/(S4) as in (N5).
 * Linearization points: retire, the add to the bag (thread-local; the unlink precedes it); a
 *  neutralization, the mark (R2); a round frees a record at its screening, after its last mark.
 * Progress: protect, pin and unpin are wait-free (a poll and no announcement: nbr's reads cost a
 *  load and a poll); retire is wait-free, with a round of O(n) marks and an O(n k log(n k) + B)
 *  screening every B retires; nbr+ adds O(1) per retire, O(n) when a round ended. Reclamation
 *  never waits for another thread (robust: a stalled thread is neutralized); a read phase may
 *  restart repeatedly while it outlasts B retires of another thread (the paper's caveat).
 * Reclamation safety and ABA: a record is freed only after every thread was marked after its
 *  unlink (N3), by this thread or, nbr+, by another whose round began after the snapshot (N5), and
 *  only if no reservation names it (N4); a pointer is reused only after that, so a write phase's
 *  CAS never meets a recycled record that it reserved, and a read phase's value from a recycled
 *  record is never used (its poll restarts).
 * }</pre>
 */
final class NeutralizationBasedReclamation extends ReclaimDomain {

    /** (S1), (S2), (S5): the per-id round stamps. */
    private static final VarHandle STAMPS = MethodHandles.arrayElementVarHandle(long[].class).withInvokeExactBehavior();

    /** nbr+: piggyback on the other threads' rounds (N5). */
    private final boolean plus;
    /** (N1): each participant id's round stamp; odd during a round. */
    private final long[] stamps = new long[Participants.CAPACITY];
    /** (N1), (S3): rounds completed, the nbr+ filter. */
    private final AtomicLong roundsEnded = new AtomicLong();

    NeutralizationBasedReclamation(final Builder b, final boolean plus) {
        super(b);
        this.plus = plus;
    }

    @Override
    Guard newGuard(final int id) {
        return new NbrGuard(this, id);
    }

    /** (N7): B + n k, plus the amortized backlog for the -af forms. */
    @Override
    long garbageBound(final int n) {
        return scanThreshold + (long) n * slotWords + (amortized ? backlogLimit : 0);
    }

    @Override
    long advances() {
        return 0;
    }

    @Override
    void flush(final Guard g) {
        ((NbrGuard) g).roundIfAny();
    }

    /** (N6): a round on the departed thread's behalf; what stays reserved is orphaned. */
    @Override
    void abandon(final Guard guard) {
        final NbrGuard g = (NbrGuard) guard;
        g.roundIfAny();
        if (!g.bag.isEmpty()) {
            orphans.offer(new Orphan(0, takeAll(g, g.bag)));
        }
        g.releaseBlocks();
    }

    @Override
    void drainRetired(final Guard guard, final BlockBag target) {
        final NbrGuard g = (NbrGuard) guard;
        g.bag.moveAllTo(target);
        g.pending.moveAllTo(target);
        g.releaseBlocks();
    }

    private long stamp(final int id) {
        return (long) STAMPS.getVolatile(stamps, id); // (S5)
    }

    private static final class NbrGuard extends Guard {

        private final NeutralizationBasedReclamation nbr;
        /** (N1): retired records (and adopted orphans) not yet screened. */
        final BlockBag bag;
        /** (N5): records retired before the stamp snapshot, freed by a round that covers them. */
        final BlockBag pending;
        private final ReservationScreen screen;
        /** (N5): the stamps of ids 0 .. snapshotIds - 1 at the snapshot; the ids above were never claimed then. */
        private long[] snapshot = new long[0];
        private int snapshotIds;
        /** (N5): roundsEnded when the stamps were last read. */
        private long seenEnded;
        /** (N1): records that stayed reserved at the last screening. */
        private long base;

        NbrGuard(final NeutralizationBasedReclamation domain, final int id) {
            super(domain, id);
            this.nbr = domain;
            this.bag = new BlockBag(blocks);
            this.pending = new BlockBag(blocks);
            this.screen = new ReservationScreen(domain, blocks);
        }

        @Override
        void enter() {
            freeSome(); // -af: before the section's first read, where no poll can interrupt it
        }

        @Override
        void exit() {
            // nothing announced: Guard.close clears the section's reservations (endSection)
        }

        @Override
        public long protect(final int slot, final long address) {
            return sectionProtect(slot, address); // (1), (R3)
        }

        @Override
        public boolean protectIfEqual(final int slot, final long address, final long expected) {
            return sectionProtectIfEqual(slot, address, expected); // (1), (R3)
        }

        @Override
        public void retire(final long ptr) {
            noteRetire(ptr);
            bag.add(ptr);
            if (bag.size() + pending.size() >= base + nbr.scanThreshold) {
                round(); // (N3)
            } else if (nbr.plus) {
                piggyback(); // (N5)
            }
        }

        /** (N5): snapshot at the low watermark, or free the pending bag once a round covers it. */
        private void piggyback() {
            if (pending.isEmpty()) {
                if (bag.size() >= base + nbr.scanThreshold / 2) {
                    snapshotStamps();
                }
            } else if (covered()) {
                screenAndFree(pending);
                pending.moveAllTo(bag);
            }
        }

        /** (N5): the pending records are the bag's now; (S4), then (S5) of every id. */
        private void snapshotStamps() {
            bag.moveAllTo(pending);
            seenEnded = nbr.roundsEnded.get(); // (S4)
            final int n = Participants.highWater();
            if (snapshot.length < n) {
                snapshot = new long[n];
            }
            for (int j = 0; j < n; j++) {
                snapshot[j] = nbr.stamp(j); // (S5)
            }
            snapshotIds = n;
        }

        /** (N5): whether some id completed a round that began after the snapshot. */
        private boolean covered() {
            final long ended = nbr.roundsEnded.get(); // (S4)
            if (ended == seenEnded) {
                return false;
            }
            seenEnded = ended;
            final int n = Participants.highWater();
            for (int j = 0; j < n; j++) {
                final long s = j < snapshotIds ? snapshot[j] : 0; // an id claimed since: 0 at the snapshot
                if (nbr.stamp(j) >= s + 2 + (s & 1)) { // (S5)
                    return true;
                }
            }
            return false;
        }

        /** (N6): flush and departure run a round only if there is something to free. */
        void roundIfAny() {
            if (!bag.isEmpty() || !pending.isEmpty() || !nbr.orphans.isEmpty()) {
                round();
            }
        }

        /** (N3): adopt the orphans, mark every thread, then screen and free the whole bag. */
        private void round() {
            for (ReclaimDomain.Orphan o; (o = nbr.orphans.poll()) != null; ) {
                o.bag().moveAllTo(bag);
            }
            pending.moveAllTo(bag);
            final long begin = (long) STAMPS.get(nbr.stamps, id) + 1; // own stamp: single writer
            STAMPS.setVolatile(nbr.stamps, id, begin); // (S1)
            final int n = Participants.highWater();
            final boolean markSelf = nesting > 1;
            for (int j = 0; j < n; j++) {
                if ((j != id || markSelf) && nbr.neutralize(j)) { // (R2)
                    if (EventGate.JFR) {
                        NeutralizationEvent.emit(nbr.scheme.id(), id, j, 0, bag.size());
                    }
                }
            }
            STAMPS.setVolatile(nbr.stamps, id, begin + 1); // (S2)
            nbr.roundsEnded.getAndIncrement(); // (S3)
            screenAndFree(bag);
        }

        /** (N4): frees every record of {@code batch} that no reservation names; the rest stay in it. */
        private void screenAndFree(final BlockBag batch) {
            nbr.scans.incrementAndGet();
            adaptFreesPerPin(); // -af: a new safe batch arrives
            if (screen.collect(Participants.highWater()) == 0) { // (R5)
                dispose(batch);
            } else {
                dispose(screen.split(batch));
            }
            base = batch.size();
        }

        /** Recycles the bags' blocks (departure, teardown); the bags must be empty. */
        void releaseBlocks() {
            bag.releaseBlocks();
            pending.releaseBlocks();
            screen.releaseBlocks();
        }
    }
}
