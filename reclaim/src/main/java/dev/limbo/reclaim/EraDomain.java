package dev.limbo.reclaim;

import dev.limbo.allocator.internal.EventGate;
import dev.limbo.core.Participants;
import dev.limbo.core.Words;
import dev.limbo.reclaim.internal.BlockBag;
import dev.limbo.reclaim.internal.HazardScanEvent;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * The shared part of the era family ({@link IntervalBasedReclamation}, {@link HazardEras},
 * {@link WaitFreeEras}): a global era clock driven by allocations, a birth era and a retire era in
 * two scheme-owned header words of every record, a private retired list per thread, and a scan
 * that frees every retired record whose lifetime [birth, retire] overlaps no reservation.
 *
 * <pre>{@code
 * Implementation notes (shared; each scheme's class adds its reservations and protect)
 *
 * State: the era E (a 64-bit counter from 1; it cannot overflow: 2^63 ticks at one per
 * nanosecond take 292 years). Per record, header word 0 = birth era b, header word 1 = retire era
 * r. Per thread: a retired list; an interval reservation [lower, upper] in its guard (ibr's
 * reservation, wfe's helper reservation; lower = 0: none); and, for he and wfe, one era per slot
 * word in its hazard row (0: none; negative: wfe's request marker, protecting nothing).
 *
 * Clock (E1): every thread counts its allocations; at EPOCH_FREQ (150, the IBR benchmark's
 * epoch_freq) it ticks: reads E = e and CASes e -> e + 1 (a failed CAS means another thread
 * ticked). So a thread allocates at most EPOCH_FREQ records in any one era. (The artifact ticks
 * every EPOCH_FREQ * n allocations of a thread; this ticks n times as often, so that the records
 * born in one era are at most EPOCH_FREQ * n rather than EPOCH_FREQ * n^2: see the garbage bound.)
 * A departure ticks too, so that a departed thread's allocations end their era however threads
 * come and go. wfe helps pending protects before it ticks (WaitFreeEras).
 * Birth (E2): a record handed out (Guard.allocate, allocateExclusive, the pool) gets b = E, read
 * before the structure can publish it (the publish is a release store or CAS after it).
 * Retire (E3): full fence, then r = E (volatile load), after the caller's unlink: the fence makes
 * the unlink visible before r is read, so r >= E at every moment a reader could still load a link
 * to the record. Then the record joins the private list; at nextScan records the thread scans.
 * Scan (E4): adopt every orphan; full fence; read every reservation (acquire loads: an interval's
 * lower, then its upper; each he/wfe slot era as [e, e]); sort the lowers and the uppers; a
 * record [b, r] is held back iff some reservation [l, u] has l <= r and u >= b. Since every
 * reservation read has l <= u, the reservations with u < b are among those with l <= r, so the
 * record is held back iff #{l <= r} - #{u < b} > 0: two binary searches per record.
 * nextScan = (records kept) + R, R = 2 * slots * n + scanThreshold (hp's threshold), n =
 * Participants.highWater().
 * Pin scan (E5): every scanThreshold-th outermost pin scans too, before the thread reserves
 * anything, if it holds retired records: a thread that stops retiring would otherwise keep its
 * list until flush, and amortized free would never start (the Token-EBR artifact's schemes free
 * at pins; rcu does the same).
 *
 * Safety (for each scheme, its class shows the reservation covers what it returns): a reader
 * that holds record X has a reservation [l, u] with b_X <= u and r_X >= l, published with a full
 * fence before it loaded the link to X. The retirer unlinked X, then fenced (E3), then the scan
 * fenced (E4) and read the reservation: the store-buffering pair, so the scan sees it (or the
 * reader's load ran after the unlink and did not return X).
 *
 * Memory ordering: (E1) volatile load of E and CAS; (E2) acquire load of E, ordered before the
 * publish by the publish's release; (E3) full fence + volatile load of E, plain store of r into
 * the retired record's header (read by the same thread's scans, or after the orphan queue's
 * hand-over); (E4) full fence, then acquire loads of the reservations (pair with each scheme's
 * publish, a getAndSet: store + full fence).
 *
 * Linearization points: a tick at its CAS; retire at its load of E (E3); a scan frees a record at
 * the reservation loads (E4) that found none overlapping it.
 * Progress: tick, retire and scan are wait-free (a scan reads O(n * slots) words and does
 * O((n * slots) log(n * slots) + L log(n * slots)) work for a list of L; freeing is as wait-free
 * as the pool and the allocator).
 *
 * Garbage bound (the schemes' common shape). A scan frees every retired record that no
 * reservation holds back, so a thread holds at most (the records reservations hold back) + R.
 * A reservation [l, u] holds back only records alive at some moment of the eras l..u (born at
 * or before u, retired at or after l): those alive when era l began, at most S, the most records
 * allocated and not yet retired at once (the structure's size: not a formula in n, slots and
 * thresholds), plus those born in eras l..u, at most (u - l + 1) * EPOCH_FREQ * n (E1).
 * garbageBound(n) = R + n * EPOCH_FREQ * n (+ backlogLimit for the -af forms) is the bound for
 * stalled reservations that span one era each (a thread stalled in the era it pinned in, as in
 * the stalled-thread tests; at most n of them), beyond the records alive when the stall began (S
 * per stalled thread: 1 in SchemeSuiteTest, the protected cell; 64 in EraFamilyTest). In general a stalled thread
 * holds back S + (u - l + 1) * EPOCH_FREQ * n: ibr's reservation may span many eras (a long
 * operation that stalls late); he's and wfe's K slot eras bound it to K * (S + EPOCH_FREQ * n).
 *
 * ABA: a record is reused only after a scan found no reservation overlapping its lifetime, so a
 * pointer validated under a reservation cannot be a reused record; a reused record gets a new
 * birth era (E2).
 * Thread exit: abandon scans once for the departed thread (after its reservations were cleared)
 * and hands what is still held back to the orphans, which the next scan of any thread adopts.
 * }</pre>
 */
abstract class EraDomain extends ReclaimDomain {

    /** Allocations of one thread between two of its ticks of the era clock. */
    static final int EPOCH_FREQ = 150;
    /** Header word of a record's birth era. */
    static final int BIRTH = 0;
    /** Header word of a record's retire era. */
    static final int RETIRE = 1;

    private static final VarHandle ERA;

    static {
        try {
            ERA = MethodHandles.lookup().findVarHandle(EraDomain.class, "era", long.class).withInvokeExactBehavior();
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Whether the scan reads the slot eras of the hazard rows (he, wfe) besides the guards' intervals. */
    private final boolean slotEras;
    @SuppressWarnings("unused") // accessed through ERA
    private volatile long era = 1;

    EraDomain(final Builder b, final boolean slotEras) {
        super(b, 2);
        this.slotEras = slotEras;
    }

    /** The era E (E1), a volatile load. */
    final long era() {
        return (long) ERA.getVolatile(this);
    }

    /** (E1): ticks the clock from {@code e}; a failed CAS means another thread ticked. */
    final void tick(final long e) {
        ERA.compareAndSet(this, e, e + 1);
    }

    /**
     * (E1) at a departure: the departed thread's allocations end their era, so that the records
     * born in one era stay at most EPOCH_FREQ per thread alive in it, however threads come and go.
     */
    void departureTick() {
        tick(era());
    }

    /** (E2): the birth era of a record being handed out. */
    @Override
    final void initHeader(final long header) {
        Words.sp(header, (long) ERA.getAcquire(this));
    }

    @Override
    final void flush(final Guard g) {
        ((EraGuard) g).scan();
    }

    /** Scans once for the departed thread (adopting every orphan): only held-back records stay orphaned. */
    @Override
    void abandon(final Guard guard) {
        final EraGuard g = (EraGuard) guard;
        g.clearInterval();
        departureTick();
        g.scan();
        if (!g.retiredList.isEmpty()) {
            orphans.offer(new Orphan(0, takeAll(g, g.retiredList)));
        }
        g.releaseBlocks();
    }

    @Override
    final void drainRetired(final Guard guard, final BlockBag target) {
        final EraGuard g = (EraGuard) guard;
        g.retiredList.moveAllTo(target);
        g.releaseBlocks();
    }

    /** Ticks of the era clock so far. */
    @Override
    final long advances() {
        return era() - 1;
    }

    /** The scan threshold R for {@code n} threads (hp's). */
    final long threshold(final int n) {
        return 2L * slots * n + scanThreshold;
    }

    /** R + n * EPOCH_FREQ * n (+ backlogLimit): see the notes, "Garbage bound". */
    @Override
    final long garbageBound(final int n) {
        return threshold(n) + (long) n * EPOCH_FREQ * n + (amortized ? backlogLimit : 0);
    }

    /**
     * Copies every reservation into {@code lowers} and {@code uppers} (each at least
     * {@link #reservationsFor} long) and returns how many there are (E4).
     */
    final int collectIntervals(final long[] lowers, final long[] uppers, final int n) {
        int c = 0;
        for (int id = 0; id < n; id++) {
            final Guard h = guardOf(id);
            if (h != null) {
                final EraGuard g = (EraGuard) h;
                final long l = g.lowerAcquire(); // (E4)
                if (l != 0) {
                    lowers[c] = l;
                    uppers[c++] = g.upperAcquire(); // (E4): at least l (written before l)
                }
            }
            if (slotEras) {
                final long base = slotTable.slot(id) + HAZARDS;
                for (int s = 0; s < slotWords; s++) {
                    final long e = Words.la(base + (long) s * Long.BYTES); // (E4)
                    if (e > 0) {
                        lowers[c] = e;
                        uppers[c++] = e;
                    }
                }
            }
        }
        return c;
    }

    /** The most reservations {@code n} threads can hold: an interval and the slot eras each. */
    final int reservationsFor(final int n) {
        return n * (1 + (slotEras ? slotWords : 0));
    }

    /** The number of elements of sorted {@code a[0 .. c)} that are at most {@code x}. */
    static int countAtMost(final long[] a, final int c, final long x) {
        int lo = 0;
        int hi = c;
        while (lo < hi) {
            final int mid = (lo + hi) >>> 1;
            if (a[mid] <= x) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** A guard of the era family: the allocation clock, the retired list, the scan and the interval words. */
    abstract static class EraGuard extends Guard {

        private static final VarHandle LOWER;
        private static final VarHandle UPPER;

        static {
            try {
                final MethodHandles.Lookup lookup = MethodHandles.lookup();
                LOWER = lookup.findVarHandle(EraGuard.class, "lower", long.class).withInvokeExactBehavior();
                UPPER = lookup.findVarHandle(EraGuard.class, "upper", long.class).withInvokeExactBehavior();
            } catch (final ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final EraDomain eras;
        final BlockBag retiredList;
        private final BlockBag kept;
        private final BlockBag safe;
        private long[] lowers = new long[0];
        private long[] uppers = new long[0];
        private long nextScan;
        private int allocations;
        /** Pins until the next scan from a pin. */
        private int pins;
        /** The interval reservation's lower era; 0: none. Written by the owner only (departure: cleared). */
        @SuppressWarnings("unused") // accessed through LOWER
        private long lower;
        /** The interval reservation's upper era; meaningful while lower is not 0. */
        @SuppressWarnings("unused") // accessed through UPPER
        private long upper;

        EraGuard(final EraDomain domain, final int id) {
            super(domain, id);
            this.eras = domain;
            this.retiredList = new BlockBag(blocks);
            this.kept = new BlockBag(blocks);
            this.safe = new BlockBag(blocks);
            this.nextScan = domain.threshold(Participants.highWater());
            this.pins = domain.scanThreshold;
        }

        /**
         * The start of an outermost pin, before the scheme reserves anything: amortized free, and
         * every scanThreshold-th pin a scan if the thread holds retired records (E5).
         */
        final void entering() {
            freeSome();
            if (--pins <= 0) {
                pins = eras.scanThreshold;
                if (!retiredList.isEmpty()) {
                    scan();
                } else {
                    adaptFreesPerPin(); // amortized free: nothing new arrives, so adaptation may shrink
                }
            }
        }

        /** (E1): every EPOCH_FREQ allocations of this thread, a tick. */
        @Override
        final void allocated() {
            if (++allocations >= EPOCH_FREQ) {
                allocations = 0;
                advance();
            }
        }

        /** Ticks the era clock (wfe helps pending protects first). */
        void advance() {
            eras.tick(eras.era());
        }

        /**
         * Publishes the interval [l, u]: upper first, then lower with a getAndSet (store + full
         * fence), so that a scan that reads the new lower reads an upper of at least l.
         */
        final void publishInterval(final long l, final long u) {
            UPPER.setOpaque(this, u);
            final long previous = (long) LOWER.getAndSet(this, l);
            assert previous == 0 || previous <= u : "a reservation published over a newer one";
        }

        /** Raises the published upper era to {@code u} with a getAndSet (store + full fence). */
        final void raiseUpper(final long u) {
            final long previous = (long) UPPER.getAndSet(this, u);
            assert previous <= u : "an upper era moved back";
        }

        /** The owner's own upper era (a plain load: only the owner writes it). */
        final long upperPlain() {
            return (long) UPPER.get(this);
        }

        /** Ends the interval reservation: release store of lower = 0, after the reads it covered. */
        final void clearInterval() {
            LOWER.setRelease(this, 0L);
        }

        final long lowerAcquire() {
            return (long) LOWER.getAcquire(this);
        }

        final long upperAcquire() {
            return (long) UPPER.getAcquire(this);
        }

        @Override
        public final void retire(final long ptr) {
            noteRetire(ptr);
            Words.fullFence(); // (E3)
            Words.sp(eras.header(ptr, RETIRE), eras.era()); // (E3)
            retiredList.add(ptr);
            if (retiredList.size() >= nextScan) {
                scan();
            }
        }

        /** Recycles the empty blocks of the scan bags (the thread left or the domain closes). */
        final void releaseBlocks() {
            retiredList.releaseBlocks();
            kept.releaseBlocks();
            safe.releaseBlocks();
        }

        /** (E4): frees every retired record whose lifetime no reservation overlaps. */
        final void scan() {
            // JFR: no event object unless a recording may want it
            final HazardScanEvent event = EventGate.JFR && HazardScanEvent.GATE.isEnabled() ? new HazardScanEvent() : null;
            final boolean timed = event != null;
            if (timed) {
                event.begin();
            }
            for (ReclaimDomain.Orphan o; (o = eras.orphans.poll()) != null; ) {
                o.bag().moveAllTo(retiredList);
            }
            eras.scans.incrementAndGet();
            Words.fullFence(); // (E4)
            final int n = Participants.highWater();
            final int most = eras.reservationsFor(n);
            if (lowers.length < most) {
                lowers = new long[Math.max(most, 2 * lowers.length)];
                uppers = new long[lowers.length];
            }
            final int c = eras.collectIntervals(lowers, uppers, n);
            Arrays.sort(lowers, 0, c);
            Arrays.sort(uppers, 0, c);
            final long scanned = retiredList.size();
            for (long ptr; (ptr = retiredList.pop()) != 0; ) {
                final long b = Words.lp(eras.header(ptr, BIRTH));
                final long r = Words.lp(eras.header(ptr, RETIRE));
                final boolean held = countAtMost(lowers, c, r) - countAtMost(uppers, c, b - 1) > 0;
                (held ? kept : safe).add(ptr);
            }
            final long keptCount = kept.size();
            kept.moveAllTo(retiredList);
            adaptFreesPerPin(); // amortized free: a new safe batch may arrive (as in rcu)
            release(safe);
            nextScan = retiredList.size() + eras.threshold(n);
            if (timed && event.shouldCommit()) {
                event.scanned = scanned;
                event.kept = keptCount;
                event.hazards = c;
                event.commit();
            }
        }
    }
}
