package dev.limbo.reclaim;

import dev.limbo.core.internal.Native;

/**
 * Schemes {@code qsbr} and {@code qsbr-af}: quiescent-state-based reclamation (McKenney and
 * Slingwine's RCU grace periods, as Hart et al., "Performance of memory reclamation for lockless
 * synchronization", JPDC 2007, §2.2 evaluate it; the Stamp-it report §3.3 describes emr's
 * implementation, which this one follows: a global epoch, a local epoch per thread, three limbo
 * bags). A pin costs nothing shared and no fence: threads announce quiescent states instead.
 *
 * <pre>{@code
 * Implementation notes (the bags, orphans, advance CAS and ordering numbers (1)-(12) are
 * EpochDomain's; this scheme adds (Q1)-(Q4))
 *
 * Algorithm. A thread is in view from its first pin until it departs or goes offline(); in view,
 * its announcement word is e << 2 | ACTIVE, its local epoch e, always: there is no "between
 * sections" value. A quiescent state (QS) is a point where the thread holds no reference to any
 * record of the domain: every outermost unpin (an operation's end, when the structure uses plain
 * pins; a nested unpin is not one, and quiescent() inside a section throws), every outermost pin
 * before the section reads anything, domain.quiescent(), and flush(). At a QS the thread reads E
 * (1) and, if E moved, frees its bags stamped at most E - 3 (EpochDomain's observe) and publishes
 * the new local epoch with a release store (Q1). Every scanThreshold-th QS (default 100; counted
 * at unpins and quiescent()) the thread scans all announcements and advances E from e with the
 * exact CAS (5) if every thread in view announces e or is idle (below). Out of view (never
 * pinned, offline(), departed): word 0, skipped by scans. Coming into view (the first pin, the
 * first pin after online()): a fenced publication (Q2) and a re-read of E, as EBR's pin.
 *
 * Idle inference (so that threads that stopped using the domain without offline(), such as a
 * main thread that filled a structure and waits, do not stop reclamation for good; pure QSBR
 * blocks on them): a scan that finds a thread whose word is stale may count it as having passed
 * a QS if the thread is outside every section, read from its nesting word (Q3, the close
 * handshake's (C6) acquire load) after a heavy barrier (8) issued once E was e (EpochDomain
 * .nestingVisible; rationed to one per heavyBarrierInterval; where the kernel lacks membarrier,
 * every pin's (C2) is a full fence already and the scanner fences). A thread inside a pinned
 * section (any depth) is never quiescent: its nesting is at least 1.
 *
 * Invariant: while a thread is pinned at local epoch e, E <= e + 1. Proof: an advance from e + 1
 * needs the thread's word at e + 1 or the thread idle. Its word is e or older (a word moves only
 * at the thread's own QS); idle would need its nesting read 0 after a barrier issued once E was
 * e + 1: its (C1) store nesting = 1 precedes its read of E at the pin in program order, so either
 * it was executed before the barrier and is visible, or the read of E ran after the barrier and
 * returned e + 1 or more, not e. Coming into view, the word was 0 (ignored by scans), so the
 * fenced store (Q2) and the re-read (1b) give the invariant as EBR's pin does.
 *
 * Safety: a record retired at local epoch r is freed once E >= r + 3 (EpochDomain's stamp rule).
 * The unlink happened while E <= r + 1, so E reached r + 2 after it. The advance r + 2 -> r + 3
 * saw every thread in view at r + 2 or idle. A word r + 2 was published at a QS that read
 * E = r + 2 (1), after the unlink: the thread's reads after that QS follow the acquire (1) and
 * cannot reach the record; its reads before it are ordered before the release (Q1) that the
 * scanner acquired (4). An idle thread's sections begun before the barrier ended with (C7), which
 * (Q3) acquired; sections begun after it read after the barrier, hence after the unlink. A thread
 * out of view has no section (offline() and pin() check it). So no thread holds the record.
 * Departed threads' bags are orphans stamped with E after their last retire, freed at stamp + 2.
 *
 * Why no fence per operation: a QS publishes a word that only ever blocks advances; it never
 * makes a scanner skip the thread. Store-to-load order at a QS would only let a scanner see the
 * new epoch sooner; the loads after the QS are ordered after its read of E by (1) (acquire), and
 * that is all the proof uses. The one transition that could let a scanner skip a thread, from
 * out of view (0) to in view, is fenced (Q2); idle inference pays a membarrier per epoch, and
 * only while some thread in view is stale.
 *
 * Linearization points: QS at its release store (Q1) (or at its read of E (1) if E did not
 * move); pin at its read of E (1) (coming into view: the fenced store (Q2) that the re-read
 * (1b) confirms); unpin at its QS; advance at the CAS (5); offline at the release store of 0 (Q4).
 * Memory ordering:
 *  (Q1) release store of the word e << 2 | ACTIVE at a QS, paired with the scanners' acquire (4).
 *  (Q2) volatile getAndSet of the word (a full fence) when coming into view, then (1b).
 *  (Q3) acquire load of another thread's nesting, paired with its (C7) release store of 0; trusted
 *       only after (8) (or with a fence where pins fence, (C2)).
 *  (Q4) release store of 0 when going offline: the thread's earlier reads precede scans that skip it.
 * Progress: pin, unpin, quiescent, protect and retire are wait-free except coming into view
 * (lock-free, as EBR's pin); an advance is one CAS. Freeing is bounded by the bags.
 * Garbage bound: none while a thread stays pinned, or stays in view without a QS where the
 * barrier fails (Long.MAX_VALUE; the stalled-thread test).
 * ABA: a record is reused only after its grace period.
 * }</pre>
 */
final class QuiescentStateReclamation extends EpochDomain {

    QuiescentStateReclamation(final Builder b) {
        super(b);
    }

    @Override
    Guard newGuard(final int id) {
        return new QsbrGuard(this, id);
    }

    @Override
    boolean ebrShaped() {
        return false;
    }

    /** Announcements are trusted as read: a stale one only blocks. Idle inference brings its own barrier. */
    @Override
    boolean scansTrusted(final long e) {
        return true;
    }

    /** flush() infers idle threads: it needs the heavy barrier wherever pins do not fence. */
    @Override
    boolean flushBarrier() {
        return Native.MEMBARRIER && !fellBack();
    }

    @Override
    boolean holdsBack(final int id, final long a, final long e) {
        return a != 0 && (a >>> 2) != e && !idle(id, e); // (4), then (8) and (Q3)
    }

    @Override
    void quiescentState(final Guard g) {
        ((QsbrGuard) g).passQuiescentState();
    }

    @Override
    void wentOffline(final Guard g) {
        ((QsbrGuard) g).leaveView();
    }

    private static final class QsbrGuard extends EpochGuard {

        private final QuiescentStateReclamation qsbr;
        /** Whether the thread's word announces its local epoch (in view); false before its first pin and while offline. */
        private boolean inView;
        /** Quiescent states until the next scan. */
        private int countdown;

        QsbrGuard(final QuiescentStateReclamation domain, final int id) {
            super(domain, id);
            this.qsbr = domain;
            this.countdown = domain.scanThreshold;
        }

        /** A new local epoch (observed at a QS, or in flush): publish it (Q1), if in view. */
        @Override
        void epochChanged() {
            if (inView) {
                publish(epoch << 2 | ACTIVE); // (Q1)
            }
        }

        /** Outermost pin: a QS on the way in (or coming into view), then amortized free. */
        @Override
        void enter() {
            if (inView) {
                observe(qsbr.globalEpoch()); // (1), and (Q1) if E moved
            } else {
                comeIntoView();
            }
            freeSome();
        }

        /** (Q2) and (1b): a fenced announcement, validated by re-reading E (as EBR's pinCurrentEpoch). */
        private void comeIntoView() {
            inView = true;
            long e = qsbr.globalEpoch(); // (1)
            while (true) {
                observe(e);
                publishFenced(e << 2 | ACTIVE); // (Q2)
                if (epochOpaque() == e) { // (1b)
                    return;
                }
                e = qsbr.globalEpoch(); // (1)
            }
        }

        /** Outermost unpin: an operation's end is a QS. */
        @Override
        void exit() {
            passQuiescentState();
        }

        /** A QS: observe E (1), publish it if new (Q1), and every scanThreshold QS try to advance (4), (5). */
        void passQuiescentState() {
            if (!inView) {
                return; // out of view: nothing announced, nothing to move
            }
            final long e = qsbr.globalEpoch(); // (1)
            observe(e);
            if (--countdown > 0) {
                return;
            }
            countdown = qsbr.scanThreshold;
            if (qsbr.everyoneAt(e) && qsbr.advance(this, e)) { // (4), (5)
                observe(qsbr.globalEpoch()); // still at a QS: announce the new epoch at once
            }
        }

        /** offline(): out of view, word 0 (Q4); the next pin comes back into view. */
        void leaveView() {
            inView = false;
            publish(0L); // (Q4)
        }
    }
}
