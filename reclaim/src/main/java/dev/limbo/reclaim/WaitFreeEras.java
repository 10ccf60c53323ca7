package dev.limbo.reclaim;

import dev.limbo.core.Participants;
import dev.limbo.core.Words;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Schemes {@code wfe} and {@code wfe-af}: wait-free eras (Nikolaev and Ravindran, "Universal
 * wait-free memory reclamation", PPoPP 2020, §3 and Figures 2 to 4). Hazard eras whose protect
 * gives up after a bounded number of attempts and asks for help; every thread that ticks the era
 * clock first completes the pending requests, so that a request sees a bounded number of ticks.
 *
 * <pre>{@code
 * Implementation notes (the clock, headers, retired list and scan, (E1) to (E4), are EraDomain's;
 * the slots and their fast path are HazardEras')
 *
 * State: per thread, K era words in its hazard row (0: none; negative: the marker of its pending
 * request, which protects nothing), an interval [lower, upper] in its guard (the helper's
 * reservation, lower = 0 when it helps nobody), and a request per slot word (null: none).
 * Per domain: pending (requests posted and not yet withdrawn) and a sequence for markers.
 * A request: the word's address, the requester's row and slot word, its marker
 * Long.MIN_VALUE | seq (unique: seq never repeats), and done: null, then once a Done(word, era).
 *
 * protect(slot, address): HazardEras' loop (H1), (H2), at most MAX_ATTEMPTS = 16 times; if the era
 * moved every time, the slow path:
 *  (W1) getAndSet the slot to the marker (the slot's old era is dropped: protect replaces it);
 *  (W2) volatile store of the request; (W3) pending += 1 (getAndAdd); help the request (below);
 *  (W7) CAS the slot from the marker to done.era (a helper may have done it);
 *  (W8) release store of null into the request slot; pending -= 1; return done.word.
 * help(request) (the requester, or a thread about to tick):
 *  loop while done is null: lo = the least positive era in the requester's other slot words
 *  (acquire loads); e = E (E1); publish [min(lo, e), e] in the own interval (W4: upper, then
 *  getAndSet of lower); if done is set now, stop (W5, volatile load); p = acquire load of the
 *  word (H1); if E is still e: CAS done from null to Done(p, e) (W6) and, if it won, CAS the
 *  requester's slot from the marker to e (W7); stop. Finally release-clear the own interval.
 * tick (every EPOCH_FREQ allocations): if pending is not 0 (volatile load, W9), help every posted
 * request (acquire loads of the request slots, W10), then E1's CAS. A departure ticks only when
 * pending is 0 (its thread cannot help: its guard is gone).
 *
 * Where this departs from the paper, for the JVM's single-word CAS:
 *  - The paper's result {pointer, era} (a double-width CAS) is one immutable Done object,
 *    installed by one reference CAS (W6); the request is a fresh object per slow path, so
 *    neither CAS can suffer ABA (the garbage collector never reuses a reachable object). Both
 *    allocate, on the slow path only (the fast path allocates nothing).
 *  - The paper's reservation {era, tag} (a double-width CAS by helpers) is the slot's era word
 *    alone: during a request the requester parks its slot at a unique marker, and helpers CAS the
 *    slot from that marker only (W7). Markers never repeat, so a late helper's CAS fails once
 *    the requester has moved on. The requester's own attempts use its interval, as a helper's do.
 *  - The paper's helper protects the requester's parent by the parent's birth era (its
 *    get_protected takes the parent). Guard.protect has no parent argument, so the helper
 *    reserves the interval from the least of the requester's other slot eras up to E: it covers
 *    the slot era that protects the parent (every protected parent is in another slot; a
 *    structure never re-protects into the slot of the record it reads from) and the era e of
 *    the word it reads. The recheck (W5) confirms the request still pending, so the requester
 *    still held those eras when the interval was in place.
 *  - The paper's counter_start/counter_end pair is one counter, pending (W3, W8).
 *
 * Invariants: a slot holds a marker only while its request is pending; done is set once; when
 * done = (p, e) is set, p was read while E = e and the winner's interval [., e] was published
 * (so e lies in p's lifetime, as in HazardEras' invariant), and that interval stays published
 * until the slot holds e (W7 by the winner or the requester, both before the winner clears).
 * Safety: the fast path is HazardEras'. Slow path: the helper's (W4) publish + fence + (W5)/(H1)
 * loads against unlink + fence + scan (E4): the store-buffering pair; the parent is held by the
 * requester's slot era until (W5) and by the helper's interval after it; p by the helper's
 * interval until (W7) and by the slot after it.
 * Capability PROTECTION_NEEDS_VALIDATION: as for he.
 *
 * Memory ordering: (W1), (W4) getAndSet (store + full fence); (W2) volatile store and (W3)
 * getAndAdd, ordered so that a thread that sees pending > 0 (W9) sees the request (W10, acquire);
 * (W5) volatile load of done; (W6), (W7) CAS; (W8) release store, then getAndAdd; the helper's
 * interval clear is a release store.
 *
 * Linearization points: protect, fast path: its last load (H1); slow path: the load (H1) of the
 * winning help (W6). protectIfEqual: the same, returning whether the word equals expected.
 * Progress: protect is wait-free. The fast path makes at most MAX_ATTEMPTS attempts. A help
 * attempt fails only if E moved between its two reads; a tick whose W9 load follows the request's
 * (W3) in the synchronization order helps the request to completion before its CAS, so the ticks
 * that can fail the request's attempts are those whose W9 preceded (W3): at most one per other
 * thread (its next W9 follows its own CAS) and one departure (departures are serialized). So
 * every help loop, the requester's and each helper's, ends within n + 1 attempts of O(K) loads;
 * a tick helps at most n * K requests. Pin, unpin and retire are wait-free.
 * Garbage bound: HazardEras' (garbageBound(n) = R + n * EPOCH_FREQ * n (+ backlogLimit) when each
 * stalled thread's eras span one era), plus the helpers' intervals: a helper stalled inside help
 * holds back the records alive in the requester's eras through E, like an ibr interval.
 * A departure that finds a request pending does not tick: the allocations of that departed thread
 * then share their era with the next ones (a rare, transient widening of one era).
 * ABA: EraDomain's, and fresh request and Done objects (above).
 * }</pre>
 */
final class WaitFreeEras extends HazardEras {

    /** Fast-path attempts of a protect before it asks for help (the paper's MAX_ATTEMPTS). */
    static final int MAX_ATTEMPTS = 16;

    private static final VarHandle PENDING;
    private static final VarHandle SEQUENCE;
    private static final VarHandle REQUESTS = MethodHandles.arrayElementVarHandle(Request[].class)
            .withInvokeExactBehavior();

    static {
        try {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            PENDING = lookup.findVarHandle(WaitFreeEras.class, "pending", long.class).withInvokeExactBehavior();
            SEQUENCE = lookup.findVarHandle(WaitFreeEras.class, "sequence", long.class).withInvokeExactBehavior();
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Fast-path attempts before the slow path: MAX_ATTEMPTS, or 0 in tests that exercise the slow path alone. */
    private final int attempts;
    /** Requests completed by a thread other than their requester (tests). */
    private final AtomicLong helped = new AtomicLong();
    /** Requests posted (W3) and not yet withdrawn (W8). */
    @SuppressWarnings("unused") // accessed through PENDING
    private volatile long pending;
    /** The last request's sequence number (markers are Long.MIN_VALUE | seq). */
    @SuppressWarnings("unused") // accessed through SEQUENCE
    private volatile long sequence;

    WaitFreeEras(final Builder b) {
        this(b, MAX_ATTEMPTS);
    }

    /** A domain whose protects make {@code attempts} fast-path attempts (tests: 0, every protect asks for help). */
    WaitFreeEras(final Builder b, final int attempts) {
        super(b);
        this.attempts = attempts;
    }

    @Override
    Guard newGuard(final int id) {
        return new WfeGuard(this, id);
    }

    /** A departure ticks only when no request is pending: its departed guard cannot help. */
    @Override
    void departureTick() {
        if ((long) PENDING.getVolatile(this) == 0) { // (W9)
            tick(era());
        }
    }

    @Override
    int attempts() {
        return attempts;
    }

    /** Requests posted so far (tests). */
    long requests() {
        return (long) SEQUENCE.getVolatile(this);
    }

    /** Requests completed by a helper rather than their requester (tests). */
    long helped() {
        return helped.get();
    }

    /** A slow-path protect of one slot word: posted by its requester, completed once by anyone. */
    static final class Request {

        private static final VarHandle DONE;

        static {
            try {
                DONE = MethodHandles.lookup().findVarHandle(Request.class, "done", Done.class).withInvokeExactBehavior();
            } catch (final ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        /** The region offset of the word to read. */
        final long address;
        /** The requester's slot word, and its index in the requester's row. */
        final long hazard;
        final int word;
        /** The requester's row (its slot words). */
        final long row;
        /** The value of the slot while the request is pending: negative, unique. */
        final long marker;
        @SuppressWarnings("unused") // accessed through DONE
        private volatile Done done;

        Request(final long address, final long hazard, final int word, final long row, final long marker) {
            this.address = address;
            this.hazard = hazard;
            this.word = word;
            this.row = row;
            this.marker = marker;
        }

        /** (W5): the result, or null while pending. */
        Done done() {
            return (Done) DONE.getVolatile(this);
        }

        /** (W6): installs the result; false if another thread did first. */
        boolean complete(final Done result) {
            return DONE.compareAndSet(this, (Done) null, result);
        }
    }

    /** A request's result: the word read, and the era that protected it. */
    record Done(long word, long era) {
    }

    private static final class WfeGuard extends HeGuard {

        private final WaitFreeEras wfe;
        /** Each slot word's pending request, or null (W2, W8, W10). */
        private final Request[] requests;

        WfeGuard(final WaitFreeEras domain, final int id) {
            super(domain, id);
            this.wfe = domain;
            this.requests = new Request[domain.slotWords];
        }

        /** The era moved at every fast-path attempt: the slow path. */
        @Override
        long exhausted(final long hazard, final long address) {
            return slowPath(hazard, address);
        }

        /** Posts a request for the word at {@code address}, helps it to completion, withdraws it. */
        private long slowPath(final long hazard, final long address) {
            final int word = (int) ((hazard - row) >>> 3);
            final long marker = Long.MIN_VALUE | (long) SEQUENCE.getAndAdd(wfe, 1L) + 1;
            Words.xchg(hazard, marker); // (W1)
            final Request request = new Request(address, hazard, word, row, marker);
            REQUESTS.setVolatile(requests, word, request); // (W2)
            final long posted = (long) PENDING.getAndAdd(wfe, 1L); // (W3)
            assert posted >= 0 : "pending requests below zero";
            help(request);
            final Done done = request.done();
            Words.cas(hazard, marker, done.era()); // (W7), unless a helper did it
            REQUESTS.setRelease(requests, word, (Request) null); // (W8)
            final long left = (long) PENDING.getAndAdd(wfe, -1L); // (W8)
            assert left > 0 : "a request withdrawn twice";
            return done.word();
        }

        /** Completes {@code request} (or sees it completed), with this thread's interval as the helper's reservation. */
        private void help(final Request request) {
            while (request.done() == null) { // (W5)
                long lo = Long.MAX_VALUE;
                for (int s = 0; s < eras.slotWords; s++) {
                    if (s != request.word) {
                        final long v = Words.la(request.row + ReclaimDomain.HAZARDS + (long) s * Long.BYTES);
                        if (v > 0 && v < lo) {
                            lo = v;
                        }
                    }
                }
                final long e = eras.era(); // (E1)
                publishInterval(Math.min(lo, e), e); // (W4)
                if (request.done() != null) { // (W5): the requester may have moved on; its eras no longer count
                    break;
                }
                final long p = Words.la(request.address); // (H1)
                if (eras.era() == e) { // (E1)
                    if (request.complete(new Done(p, e))) { // (W6)
                        Words.cas(request.hazard, request.marker, e); // (W7)
                        if (request.row != row) {
                            wfe.helped.incrementAndGet();
                        }
                    }
                    break;
                }
            }
            clearInterval();
        }

        /** (W9), (W10): helps every pending request, then ticks. */
        @Override
        void advance() {
            if ((long) PENDING.getVolatile(wfe) != 0) { // (W9)
                final int n = Participants.highWater();
                for (int id = 0; id < n; id++) {
                    if (wfe.guardOf(id) instanceof WfeGuard other) {
                        for (int w = 0; w < other.requests.length; w++) {
                            final Request r = (Request) REQUESTS.getAcquire(other.requests, w); // (W10)
                            if (r != null) {
                                help(r);
                            }
                        }
                    }
                }
            }
            super.advance();
        }
    }
}
