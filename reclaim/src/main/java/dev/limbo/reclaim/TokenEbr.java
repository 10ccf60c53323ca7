package dev.limbo.reclaim;

import dev.limbo.allocator.internal.EventGate;
import dev.limbo.core.Layouts;
import dev.limbo.core.Participants;
import dev.limbo.core.internal.Native;
import dev.limbo.reclaim.internal.BlockBag;
import dev.limbo.reclaim.internal.ReclamationEvent;
import dev.limbo.reclaim.internal.TokenPassEvent;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Schemes {@code token-naive}, {@code token-passfirst}, {@code token-periodic} and {@code token-af}:
 * Token-EBR (Kim, Brown and Singh, "Are Your Epochs Too Epic? Batch Free Can Be Harmful", PPoPP
 * 2024, §4: the abstract algorithm and its correctness sketch, then the four implementations;
 * the artifact's reclaimer_token1..4), with a ring whose membership changes at run time
 * (ours: the paper's ring is fixed).
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm (§4, "Abstract Algorithm"). The threads form a ring and one token goes around it.
 * Each thread has two limbo bags, current and previous; retire adds to current. At the start of
 * an operation (an outermost pin, before the section reads anything) a thread that holds the
 * token takes its turn: it passes the token to its successor, frees previous (everything in it was
 * retired before its previous turn) and swaps the bags (previous := what it retired since its
 * previous turn; current := empty).
 * The variants differ only in the order of pass and free (Handoff):
 *  FREE_THEN_PASS (token-naive, §4.1 "Naive Token-EBR", artifact token1): free previous, then
 *      pass: freeing is serial, and garbage piles up while the token waits.
 *  PASS_THEN_FREE (token-passfirst, §4 "Pass-first Token-EBR", token2): pass, then free the batch.
 *  PASS_THEN_FREE_IN_STEPS (token-periodic, §4 "Periodic Token-EBR", token3): pass, then free
 *      previous PERIODIC_CHECK (K = 100) records at a time; between steps, if the token came back,
 *      pass it again at once (a turn without a swap: safe, it only delays the next swap).
 *  PASS_THEN_SPLICE (token-af, §4 "Amortized-Free Token-EBR", token4): pass, splice previous into
 *      the freeable list of amortized free (Guard.release; O(1)), and free freesPerPin records
 *      (default 1) per pin, after the turn.
 * There is no global epoch and no announcement array; a pin reads only its own token flag (T1),
 * and an unpin writes nothing shared.
 * A sole member keeps the token while it has nothing to free (ours): when its last turn passed the
 * token to itself, R still holds the word that pass wrote (no join or leave since, (T3)), and its
 * bags, its amortized-free backlog and the orphans are empty (and adaptive amortized free has
 * stepped back to one free per pin), a pin skips the turn, which would only pass the token to itself
 * and rotate empty bags. Skipping a turn only delays receipts, which is always safe (freeing
 * happens only at a receipt); nobody waits for the token, since a thread that joins changes R
 * first, and the holder's next pin then takes its turn.
 *
 * Ring state. One ring word R = seq << 22 | busy << 21 | holder (a padded heap word): holder is the
 * participant id that holds the token (NONE = 2^21 - 1 when the ring is empty), busy says the holder
 * is taking a FREE_THEN_PASS turn, and seq counts every change of R. Every change of R is a CAS (T4)
 * that expects the whole word: passes, joins and leaves are thereby serialized in one total order,
 * and a CAS computed from a stale R fails. Per guard: its flag (a hint that R may name it; a pin
 * whose flag is 0 does nothing), and member (whether its id is in the ring). The successor of id
 * h is the first id after h, cyclically over 0 .. Participants.highWater() - 1, whose guard is a
 * member (h itself if it is the only one, NONE if none is).
 *
 * Membership (ours). A guard joins at its first pin (a new guard's flag starts at 1, so that pin
 * takes the slow path) and at online(): member := true (T6), then a CAS (T4) that bumps seq (and
 * takes the token if the ring was empty). It leaves at offline() and when its thread departs
 * (death, Participants.close(); the domain's release hook): member := false (T6), then a CAS (T4)
 * that bumps seq or, if R names it, passes the token to its successor (a leaving holder passes the
 * token on; no turn, no swap: its bags wait for its return, or become orphans). Ids reused by new
 * threads get new guards, which join as any thread does; a pass names the id, and the guard of
 * that id is whichever member holds it when the CAS succeeds (a leave between a passer's read of R
 * and its CAS makes the CAS fail).
 *
 * Idle holders (ours). A thread that stops pinning without going offline (a main thread that
 * filled a structure and waits) would keep the token, or stop it when it arrives. So every
 * STALL_CHECK (64) pins, a thread reads R (T3); if R names the holder it named at the previous
 * check (or at this thread's join), it passes the token on the holder's behalf if the holder is
 * idle (the check is a heuristic for "the token is stuck"; safety rests on the idle test alone):
 * outside every section, read from its nesting word (T8, the close handshake's (C6) acquire load)
 * after a heavy barrier issued once R had this value (T7; EpochDomain's idle inference, as qsbr
 * does it): a CAS (T4) from exactly that R to (seq + 1, successor). Each
 * departure (the release hook) tries the same once, so that threads too short-lived to reach a
 * second check (thread churn behind an idle holder) still move the token; flush() does it without
 * rationing the barrier. A holder that is no member (its guard left: its leave is about to pass)
 * or whose thread terminated (T12) is passed over at once, without a barrier. A busy holder is
 * never passed over.
 * Rule: the token passes over a thread only (a) at that thread's own outermost pin, before its
 * section reads anything, (b) on its behalf while its nesting reads 0 after such a barrier, or
 * once it terminated, or (c) when it leaves the ring, outside every section.
 *
 * Invariant (the paper's, with membership): between two turns of thread j, the token went around
 * the ring: every id that was a member throughout was the holder once and gave the token on by
 * (a), (b) or (c). A pass from h goes to the next member after h, cyclically, and j stays a member
 * (it takes turns only as a member), so the holders after j's turn r1 run through the ids after j
 * in cyclic order back to j; a member throughout cannot be jumped, as it is the next member when
 * the token is at the member before it.
 *
 * Safety. Let j retire O before turn r1 (O is in previous from r1 on; retires in the turn's own
 * operation go to the new current) and free it at turn r2. Every (T4) CAS reads R from the previous
 * CAS in R's total order (a volatile read-modify-write), so the unlink of O, which precedes j's
 * (T4) at r1 in j's program order, happens-before every later access to R. Let k hold a reference to
 * O in a section S (read before the unlink was visible to it). Then k was in the ring during S (a
 * section begins after the join's CAS and ends before the leave's). (1) k a member throughout
 * (r1, r2): the token gave k's turn on between r1 and r2. By (a): S precedes k's pass in program
 * order, and k's pass precedes r2 in R's order: S ends before O is freed; k's later sections
 * begin after its (T4), which follows r1, so they cannot reach O. By (b): S ended with (C7),
 * which the helper's (T8) acquired before its (T4); a section of k begun after the barrier loads
 * after it, when the unlink (which happens-before the helper's read of R, which precedes the
 * barrier) is visible to it; a section whose (C1) store was executed before the barrier is seen
 * by (T8), and then no pass happens. A terminated k (T12) has no section left, and all it did
 * happens-before the pass. (2) k joined after r1: its join's (T4) follows r1 in R's
 * order, so its sections cannot reach O. (3) k left before r2: S ended before its leave's (T4),
 * which precedes r2. So no thread holds O at r2. Receipt makes freeing safe, not the pass, so
 * freeing before or after passing is equally safe (§4, "Pass-first"), and so is passing again in
 * the middle of a free ("Periodic") or splicing previous into the freeable list ("Amortized-Free").
 *
 * Orphans (ours). A departed thread's bags become one orphan, stamped with R's seq s after its
 * leave. A wrap is a pass to an id at or below the passer's (or to or from the empty ring): between
 * two consecutive wraps the token climbs through the members in increasing id order, and a member
 * throughout the climb cannot be jumped (as above). So once two wraps w2 > w1 > s follow the
 * departure in R's order, the climb from w1 to w2 is a full round after the departure, and the
 * argument above, with the departure's leave (which follows the departed thread's unlinks) in
 * place of r1, makes the orphan safe. The seq of the latest wrap is kept in the last-wrap word
 * (T11); every turn, every departure and flush sweep the orphan queue: an orphan seen with a wrap
 * w > s is restamped with w, and freed when a wrap above w is seen (ReclaimDomain's orphan queue
 * orders the departure before the sweep).
 *
 * Linearization points: pin with a turn at its (T4) (a claim for FREE_THEN_PASS, else the pass);
 * pin without a turn at (T1); unpin: nothing shared; retire: the add to current (thread-local);
 * join and leave at their (T4); a pass on a holder's behalf at its (T4).
 *
 * Progress. Unpin, protect and retire are wait-free; a pin without a turn is wait-free; a turn
 * retries its CAS only after another thread joined or left, so it is lock-free; freeing is bounded
 * by the bags. Reclamation is blocking, as in the paper: a thread stalled inside a section stops
 * the token (garbageBound is Long.MAX_VALUE). flush() waits for an active holder's next pin for at
 * most FLUSH_PATIENCE, then returns; (T11)'s raise retries only after another wrap raised it.
 *
 * Memory ordering:
 *  (T1) opaque load of the pinning thread's own flag: a hint only; the turn is decided by (T3), (T4).
 *  (T2) getAndSet of the own flag to 0 (volatile) before (T3): with (T5) after the passer's (T4),
 *       no pass is missed (if (T3) misses the passer's CAS, (T5) follows (T2) in the flag's order).
 *  (T3) volatile load of R.
 *  (T4) CAS of R: every pass, claim, join and leave. Its read acquires everything before the CASes
 *       that precede it; its write releases the caller's earlier accesses (its sections' reads,
 *       its unlinks and retires) to every later access of R.
 *  (T5) volatile store of 1 into the successor's flag after a pass.
 *  (T6) volatile store of member (true at a join, false at a leave) before the (T4) that bumps seq;
 *       volatile loads by passers choosing a successor, after their (T3).
 *  (T7) heavy barrier, membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), after the helper's (T3); then
 *       a release store of R's seq into the barrier word (T9), which later helpers acquire (T10) to
 *       trust their (T8) for the same seq without a barrier of their own. Rationed to one per
 *       heavyBarrierInterval per domain, except in flush(). Where the kernel lacks membarrier,
 *       every pin fences (ReclaimDomain's (C2)) and the helper fences instead. If the barrier fails
 *       at run time, idle holders are no longer inferred (flush() and leaves still pass).
 *  (T8) acquire load of the holder's nesting; pairs with its (C7) release store of 0.
 *  (T12) Thread.isAlive() of the holder's thread, false once it terminated: the thread's last
 *       action synchronizes-with it (JLS 17.4.4), so all its sections happen-before the pass.
 *  (T11) CAS-max of the last-wrap word to a wrap's seq, after the wrap's (T4); acquire load by
 *       sweeps. A late raise only delays orphans: every value it holds is the seq of a real wrap.
 *  (11) protect's and protectIfEqual's acquire load of the word (as EpochDomain's (11)).
 *  Receipt counters are per guard (opaque, owner-written); the JFR event is built only when a
 *  recording enables it.
 *
 * ABA: seq makes every R value unique, so a CAS from a stale R fails even if the holder is the
 * same id again; a record is reused only after the round that frees it.
 * Garbage bound: none while a thread stays inside a section (Long.MAX_VALUE).
 * }</pre>
 */
final class TokenEbr extends ReclaimDomain {

    /** When a turn frees its previous bag, relative to passing the token. */
    enum Handoff {
        /** token-naive: free the batch, then pass. */
        FREE_THEN_PASS,
        /** token-passfirst: pass, then free the batch. */
        PASS_THEN_FREE,
        /** token-periodic: pass, then free K records at a time, passing again whenever the token is back. */
        PASS_THEN_FREE_IN_STEPS,
        /** token-af: pass, then splice the batch into the freeable list of amortized free. */
        PASS_THEN_SPLICE
    }

    /** token-periodic's K: records freed between two checks of the token (the paper's 100). */
    static final int PERIODIC_CHECK = 100;
    /** Pins between two checks of whether the token moved (idle holders). */
    static final int STALL_CHECK = 64;
    /** How long flush() waits for a holder that is inside a section to pass the token. */
    private static final long FLUSH_PATIENCE = TimeUnit.MILLISECONDS.toNanos(5);

    private static final int ID_BITS = 21;
    private static final long ID_MASK = (1L << ID_BITS) - 1;
    /** The holder field of an empty ring. */
    static final int NONE = (int) ID_MASK;
    private static final long BUSY = 1L << ID_BITS;
    private static final int SEQ_SHIFT = ID_BITS + 1;

    /** The words array's elements: R, the barrier word and the last-wrap word, each on a 128-byte line of its own. */
    private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class).withInvokeExactBehavior();
    private static final int STRIDE = (int) (Layouts.PADDED / Long.BYTES);
    private static final int RING = STRIDE;
    private static final int BARRIER_SEQ = 2 * STRIDE;
    private static final int LAST_WRAP = 3 * STRIDE;
    /** {@link TokenGuard#token}: (T1), (T2), (T5). */
    private static final VarHandle TOKEN;
    /** {@link TokenGuard#receipts}: opaque, owner-written. */
    private static final VarHandle RECEIPTS;

    static {
        try {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            TOKEN = lookup.findVarHandle(TokenGuard.class, "token", int.class).withInvokeExactBehavior();
            RECEIPTS = lookup.findVarHandle(TokenGuard.class, "receipts", long.class).withInvokeExactBehavior();
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final Handoff handoff;
    /**
     * R at index RING, the barrier word at BARRIER_SEQ and the seq of the latest wrap at LAST_WRAP,
     * each on its own line (a pass writes R).
     */
    private final long[] words = new long[4 * STRIDE];
    private final AtomicLong departedReceipts = new AtomicLong();
    /** When the last rationed heavy barrier was issued; a racy hint, not a safety condition. */
    private long lastBarrierNanos;
    /** Set when a heavy barrier failed at run time: idle holders are no longer inferred. */
    private volatile boolean barrierFailed;

    TokenEbr(final Builder b, final Handoff handoff) {
        super(b);
        this.handoff = handoff;
        this.lastBarrierNanos = System.nanoTime() - heavyBarrierIntervalNanos;
        WORDS.setVolatile(words, RING, (long) NONE);
        WORDS.setVolatile(words, BARRIER_SEQ, -1L);
    }

    static int holder(final long r) {
        return (int) (r & ID_MASK);
    }

    static boolean busy(final long r) {
        return (r & BUSY) != 0;
    }

    /** The word after {@code r}: seq + 1, with {@code holder} and the busy bit. */
    static long next(final long r, final int holder, final boolean busy) {
        return ((r >>> SEQ_SHIFT) + 1) << SEQ_SHIFT | (busy ? BUSY : 0) | holder;
    }

    /** (T3) */
    long ring() {
        return (long) WORDS.getVolatile(words, RING);
    }

    /** (T4) */
    private boolean casRing(final long expected, final long word) {
        return (boolean) WORDS.compareAndSet(words, RING, expected, word);
    }

    /**
     * Passes the token from {@code from}, named by {@code r}, to {@code to}: the CAS (T4), then the
     * wrap record (T11), the successor's flag (T5) and the JFR event. False if R is no longer {@code r}.
     */
    private boolean pass(final long r, final int from, final int to, final long records, final boolean onBehalf) {
        final long word = next(r, to, false);
        if (!casRing(r, word)) { // (T4)
            return false;
        }
        if (to == NONE || to <= from) {
            wrapped(word >>> SEQ_SHIFT); // (T11)
        }
        signal(to); // (T5)
        if (EventGate.JFR) {
            TokenPassEvent.emit(scheme.id(), from, to, records, onBehalf);
        }
        return true;
    }

    /**
     * (T11): raises the last-wrap word to {@code seq}, the seq of a pass that went to an id at or
     * below the passer's (the token starts its climb through the members again), to the empty
     * ring, or from it. Values only rise, and every value is the seq of a real wrap.
     */
    private void wrapped(final long seq) {
        long seen = (long) WORDS.getVolatile(words, LAST_WRAP);
        while (seen < seq && !(boolean) WORDS.compareAndSet(words, LAST_WRAP, seen, seq)) { // (T11)
            seen = (long) WORDS.getVolatile(words, LAST_WRAP);
        }
    }

    /** The seq of R now (a departure's stamp). */
    private long seqNow() {
        return ring() >>> SEQ_SHIFT;
    }

    /**
     * Frees through {@code g} the orphans whose departure two wraps follow (T11). An orphan is
     * stamped {@code s << 1} with the seq s of its departure; once a wrap w > s is seen it becomes
     * {@code w << 1 | 1}; once a wrap above w is seen, it is freed.
     */
    void sweepOrphans(final Guard g) {
        if (orphans.isEmpty()) {
            return;
        }
        final long wrap = (long) WORDS.getAcquire(words, LAST_WRAP); // (T11)
        for (int n = orphans.size(); n > 0; n--) {
            final Orphan o = orphans.poll();
            if (o == null) {
                return;
            }
            if (wrap <= o.stamp() >>> 1) {
                orphans.offer(o);
            } else if ((o.stamp() & 1) == 0) {
                orphans.offer(new Orphan(wrap << 1 | 1, o.bag()));
            } else {
                g.release(o.bag());
            }
        }
    }

    /** The holder of the token now (tests). */
    int holderNow() {
        return holder(ring());
    }

    @Override
    Guard newGuard(final int id) {
        return new TokenGuard(this, id);
    }

    /** The next member after {@code h}, cyclically; {@code h} if it is the only member; NONE if none is. (T6) */
    int successorOf(final int h) {
        final int n = Math.max(Participants.highWater(), h + 1);
        for (int i = 1; i <= n; i++) {
            final int id = (h + i) % n;
            final Guard g = guardOf(id);
            if (g instanceof TokenGuard t && t.member) { // (T6)
                return id;
            }
        }
        return NONE;
    }

    /** (T5): tells {@code id}'s guard that R may name it. */
    private void signal(final int id) {
        if (id != NONE && guardOf(id) instanceof TokenGuard t) {
            TOKEN.setVolatile(t, 1); // (T5)
        }
    }

    /** Joins {@code g} to the ring: (T6), then (T4); takes the token if the ring is empty. */
    private void join(final TokenGuard g) {
        g.member = true; // (T6)
        while (true) {
            final long r = ring(); // (T3)
            final boolean empty = holder(r) == NONE;
            final long word = empty ? next(r, g.id, false) : next(r, holder(r), busy(r));
            if (casRing(r, word)) { // (T4)
                if (empty) {
                    wrapped(word >>> SEQ_SHIFT); // (T11)
                    TOKEN.setVolatile(g, 1); // (T5)
                }
                g.lastHolder = holder(word);
                return;
            }
        }
    }

    /** Takes {@code g} out of the ring: (T6), then (T4), passing the token on if R names it. */
    private void leave(final TokenGuard g) {
        if (!g.member) {
            return;
        }
        g.member = false; // (T6)
        while (true) {
            final long r = ring(); // (T3)
            if (holder(r) == g.id) {
                if (pass(r, g.id, successorOf(g.id), 0, true)) { // (T4), (T11), (T5)
                    return;
                }
            } else if (casRing(r, next(r, holder(r), busy(r)))) { // (T4)
                return;
            }
        }
    }

    /**
     * Passes the token on behalf of the holder named by {@code r} if it is idle (outside every
     * section, (T7) then (T8)), terminated (T12) or no member: a CAS (T4) from exactly {@code r}. Returns whether it
     * passed. {@code rationed}: whether the heavy barrier is rationed (pins) or not (flush).
     */
    boolean passForIdleHolder(final long r, final boolean rationed) {
        final int h = holder(r);
        if (h == NONE || busy(r)) {
            return false;
        }
        final Guard g = guardOf(h);
        if (g instanceof TokenGuard t && t.member && t.owner.isAlive()) { // (T12)
            if (!nestingVisible(r, rationed) || (int) Guard.NESTING.getAcquire(g) != 0) { // (T7), (T8)
                return false;
            }
        }
        final int successor = successorOf(h);
        if (successor == h || !pass(r, h, successor, 0, true)) { // (T4), (T11), (T5)
            return false;
        }
        scans.incrementAndGet();
        return true;
    }

    /**
     * Whether nesting words read from now on show every section begun before R had the value
     * {@code r} ((T7); EpochDomain's nestingVisible, keyed by R's seq instead of the epoch).
     */
    private boolean nestingVisible(final long r, final boolean rationed) {
        if (!Native.MEMBARRIER) {
            VarHandle.fullFence(); // pairs with the pins' (C2) full fence
            return true;
        }
        final long seq = r >>> SEQ_SHIFT;
        if ((long) WORDS.getAcquire(words, BARRIER_SEQ) == seq) { // (T10)
            return true;
        }
        if (barrierFailed) {
            return false;
        }
        if (rationed) {
            final long now = System.nanoTime();
            if (now - lastBarrierNanos < heavyBarrierIntervalNanos) {
                return false;
            }
            lastBarrierNanos = now;
        }
        try {
            Native.membarrier(); // (T7)
        } catch (final RuntimeException refused) {
            barrierFailed = true;
            return false;
        }
        WORDS.setRelease(words, BARRIER_SEQ, seq); // (T9)
        return true;
    }

    /**
     * flush(): takes two turns (the first moves current into previous, the second frees it), and up
     * to two more while orphans wait for their wraps, passing the token on behalf of idle holders on
     * the way, and waiting at most FLUSH_PATIENCE for a holder inside a section.
     */
    @Override
    void flush(final Guard guard) {
        final TokenGuard g = (TokenGuard) guard;
        if (g.offline) {
            return; // out of the ring: no turns until online()
        }
        if (!g.member) {
            join(g);
        }
        long waitingSince = 0;
        for (int turns = 0; turns < 2 || turns < 4 && !orphans.isEmpty(); ) {
            final long r = ring(); // (T3)
            if (holder(r) == g.id && !busy(r)) {
                if (g.turn(r)) {
                    turns++;
                    waitingSince = 0;
                }
            } else if (passForIdleHolder(r, false)) {
                waitingSince = 0;
            } else {
                final long now = System.nanoTime();
                if (waitingSince == 0) {
                    waitingSince = now;
                } else if (now - waitingSince > FLUSH_PATIENCE) {
                    return; // a thread inside a section holds the token: it passes at its next pin
                }
                Thread.yield();
            }
        }
    }

    @Override
    void wentOffline(final Guard g) {
        leave((TokenGuard) g);
    }

    @Override
    void cameOnline(final Guard g) {
        join((TokenGuard) g);
    }

    @Override
    void abandon(final Guard guard) {
        final TokenGuard g = (TokenGuard) guard;
        leave(g);
        departedReceipts.addAndGet(g.receiptCount());
        final BlockBag all = new BlockBag(g.blocks);
        g.current.moveAllTo(all);
        g.previous.moveAllTo(all);
        g.current.releaseBlocks();
        g.previous.releaseBlocks();
        if (!all.isEmpty()) {
            orphans.offer(new Orphan(seqNow() << 1, all));
        }
        // A departure helps as a scan does in the epoch schemes: threads too short-lived to take
        // turns or watch the ring (thread churn, an idle holder) must still move the token, and
        // free the orphans whose wraps came.
        passForIdleHolder(ring(), true);
        sweepOrphans(g);
    }

    @Override
    void drainRetired(final Guard guard, final BlockBag target) {
        final TokenGuard g = (TokenGuard) guard;
        g.current.moveAllTo(target);
        g.previous.moveAllTo(target);
        g.current.releaseBlocks();
        g.previous.releaseBlocks();
    }

    /** Token receipts (turns) of all threads, departed ones included: each is a local epoch of the paper. */
    @Override
    long advances() {
        long n = departedReceipts.get();
        final int high = Participants.highWater();
        for (int id = 0; id < high; id++) {
            if (guardOf(id) instanceof TokenGuard t) {
                n += t.receiptCount();
            }
        }
        return n;
    }

    /** None: a thread stalled inside a section keeps the token, and nothing retired since is freed. */
    @Override
    long garbageBound(final int n) {
        return Long.MAX_VALUE;
    }

    /** A thread's state: its flag, its membership and its two bags. */
    static final class TokenGuard extends Guard {

        private final TokenEbr ring;
        BlockBag current;
        BlockBag previous;
        /** 1: R may name this guard; pins look closer. Starts at 1 so that the first pin joins the ring. */
        @SuppressWarnings("unused") // accessed through TOKEN
        private int token = 1;
        /** Whether this guard's id is in the ring; written by its owner (or its departure), read by passers (T6). */
        volatile boolean member;
        @SuppressWarnings("unused") // accessed through RECEIPTS
        private long receipts;
        /** Pins until the next check of R, and the holder at the previous check (or at the join). */
        private int countdown = STALL_CHECK;
        int lastHolder = NONE;
        /**
         * token-af: the freeable records left over when this pin's turn spliced a batch in, or -1.
         * Frees per pin adapt to it after the pin's own frees, so a pin frees as many as it was allowed on entry.
         */
        private long leftOver = -1;
        /** The ring word this guard's last turn wrote if it passed the token to itself, else -1. */
        private long soleRing = -1;

        TokenGuard(final TokenEbr domain, final int id) {
            super(domain, id);
            this.ring = domain;
            this.current = new BlockBag(blocks);
            this.previous = new BlockBag(blocks);
        }

        @Override
        void enter() {
            if ((int) TOKEN.getOpaque(this) != 0 && !idleSoleHolder()) { // (T1)
                takeTurnIfHolder();
            }
            if (ring.amortized) {
                freeSome();
                if (leftOver >= 0) { // a batch arrived in this pin's turn: adapt for the pins after it
                    adaptFreesPerPin(leftOver);
                    leftOver = -1;
                }
            }
            if (--countdown == 0) {
                countdown = STALL_CHECK;
                watchRing();
            }
        }

        /**
         * Whether this guard holds the token alone with nothing to free: R is still the word its
         * last turn wrote when it passed the token to itself (T3), its bags, its amortized-free
         * backlog and the orphans are empty, and its adaptive frees per pin, which turns step, are
         * back at 1. Its turn would only pass the token to itself; it keeps the token instead.
         */
        private boolean idleSoleHolder() {
            return current.isEmpty() && previous.isEmpty() && freeable.isEmpty() && freesPerPin <= 1
                    && ring.ring() == soleRing && ring.orphans.isEmpty();
        }

        /** The flag was set: joins if need be, then takes a turn if R names this guard. */
        private void takeTurnIfHolder() {
            final int hint = (int) TOKEN.getAndSet(this, 0); // (T2)
            if (!member) {
                ring.join(this);
            }
            for (long r = ring.ring(); holder(r) == id && !busy(r); r = ring.ring()) { // (T3)
                if (turn(r)) {
                    return;
                }
            }
        }

        /**
         * Every STALL_CHECK pins: if the same thread held the token at the last check (or when this
         * one joined), help it if it is idle (a holder that is not idle only costs the check).
         */
        private void watchRing() {
            final long r = ring.ring(); // (T3)
            final int h = holder(r);
            if (h != lastHolder) {
                lastHolder = h;
            } else if (h != id) {
                ring.passForIdleHolder(r, true);
            }
        }

        /**
         * A turn from ring word {@code r}, which names this guard, not busy; false if the CAS lost
         * to a join or a leave (the caller reads R again).
         */
        boolean turn(final long r) {
            final long batch = previous.size();
            if (ring.handoff == Handoff.FREE_THEN_PASS) {
                final long claimed = next(r, id, true);
                if (!ring.casRing(r, claimed)) { // (T4): the claim
                    return false;
                }
                countReceipt();
                try {
                    release(previous);
                    rotate();
                    ring.sweepOrphans(this);
                } finally {
                    passFrom(claimed, batch);
                }
                return true;
            }
            final int successor = ring.successorOf(id);
            if (!ring.pass(r, id, successor, batch, false)) { // (T4): receipt and pass; (T11), (T5)
                return false;
            }
            soleRing = successor == id ? next(r, id, false) : -1;
            countReceipt();
            switch (ring.handoff) {
                case PASS_THEN_FREE -> release(previous);
                case PASS_THEN_FREE_IN_STEPS -> freeInSteps();
                default -> { // PASS_THEN_SPLICE
                    leftOver = freeable.size();
                    release(previous); // amortized: a splice into the freeable list
                }
            }
            rotate();
            ring.sweepOrphans(this);
            return true;
        }

        /** FREE_THEN_PASS: passes from the claimed word; a join or leave meanwhile only bumped seq. */
        private void passFrom(final long claimed, final long batch) {
            long r = claimed;
            int successor = ring.successorOf(id);
            while (!ring.pass(r, id, successor, batch, false)) { // (T4), (T11), (T5)
                r = ring.ring(); // (T3): still names this guard, busy
                successor = ring.successorOf(id);
            }
            soleRing = successor == id ? next(r, id, false) : -1;
        }

        /**
         * token-periodic: frees previous K records at a time, passing again whenever the token is
         * back. The whole stepped free is one batch (one JFR dev.limbo.Reclamation event, as long
         * as the free took), as the paper's timelines draw it.
         */
        private void freeInSteps() {
            final long batch = previous.size();
            // JFR: no event object unless a recording may want it
            final ReclamationEvent event = EventGate.JFR && ReclamationEvent.GATE.isEnabled() ? new ReclamationEvent() : null;
            final boolean timed = event != null;
            if (timed) {
                event.begin();
            }
            while (!previous.isEmpty()) {
                freeFrom(previous, PERIODIC_CHECK);
                if (!previous.isEmpty() && (int) TOKEN.getOpaque(this) != 0) { // (T1)
                    passAgain();
                }
            }
            if (batch > 0) {
                commit(event, timed, batch, false);
            }
        }

        /** token-periodic: a turn without a swap (the token came back in the middle of a free). */
        private void passAgain() {
            final int hint = (int) TOKEN.getAndSet(this, 0); // (T2)
            for (long r = ring.ring(); holder(r) == id && !busy(r); r = ring.ring()) { // (T3)
                if (ring.pass(r, id, ring.successorOf(id), 0, false)) { // (T4), (T11), (T5)
                    countReceipt();
                    return;
                }
            }
        }

        private void rotate() {
            final BlockBag freed = previous;
            previous = current;
            current = freed;
        }

        private void countReceipt() {
            RECEIPTS.setOpaque(this, (long) RECEIPTS.getOpaque(this) + 1);
        }

        long receiptCount() {
            return (long) RECEIPTS.getOpaque(this);
        }

        /** Outermost unpin: nothing shared to write (the close handshake's (C7) is ReclaimDomain's). */
        @Override
        void exit() {
        }

        @Override
        public long protect(final int slot, final long address) {
            return sectionProtect(slot, address); // (11), then the poll
        }

        @Override
        public boolean protectIfEqual(final int slot, final long address, final long expected) {
            return sectionProtectIfEqual(slot, address, expected); // (11), then the poll
        }

        @Override
        public void retire(final long ptr) {
            noteRetire(ptr);
            current.add(ptr);
        }
    }
}
