package dev.limbo.reclaim;

import dev.limbo.core.Words;
import dev.limbo.reclaim.internal.BlockBag;

import java.util.Arrays;
import java.util.Locale;

/**
 * Scheme {@code lfrc}: lock-free reference counting (Valois, "Lock-free linked lists using
 * compare-and-swap", PODC 1995, as corrected by Michael and Scott, "Correction of a memory
 * management method for lock-free data structures", TR 599, Rochester 1995; the Stamp-it report
 * §3.1 for the protect loop and the claim). Every reference to a record is counted: the links of
 * other records and of the structure's roots, the guards' slots, and the record's owner.
 *
 * <pre>{@code
 * Implementation notes
 *
 * State: one header word per record, its count word C = count * ONE | FREED (ONE = 2, FREED = 1).
 * Per guard: K = slots() * maxNesting held records (a Java array: a slot's target, its count
 * held), a mask of the slots used in the section, and two bags for the iterative destructor.
 * The domain's pool is type-stable (ReclaimDomain#typeStable): per-thread bags in front of the
 * shared stack of blocks, unbounded, never returning a record to the allocator before close();
 * fresh records come zeroed. (DEBRA's bounded pool could not serve as it is: beyond its cache it
 * frees whole blocks to the allocator, and in debug mode it is a pass-through.)
 *
 * Count-word protocol. A record's count is, at every point, the sum of
 *  - its owner's unit: 1 from allocation (initHeader) until retire or freeExclusive releases it
 *    (this is the "retired" bit of the brief, kept as a unit so that one decrement path serves
 *    every release: a record is reclaimed when its count is zero AND it was retired, and a node
 *    that is transiently unreferenced between allocate and publish keeps its owner's unit);
 *  - one per link word (in a record or a root) that holds it, marks ignored (Guard#store, cas,
 *    initLink increment the new target before it becomes reachable through the link, and release
 *    the old one after it is not);
 *  - one per guard slot that holds it (protect), and one per increment in flight (a protect not
 *    yet validated, a cas not yet decided).
 * Reclaim: a release is a CAS loop (4) from h to h - ONE, except that h == ONE (the last unit,
 * FREED clear) goes to FREED: the claim. Exactly one release claims a record, and the claimer
 * runs the destructor: it releases the targets of the record's declared links (the claims these
 * make go on a work bag, so a chain of any length is released iteratively) and clears them (a
 * record handed out again links nothing until the structure's initLink: a fresh one is zeroed),
 * poisons its other words in debug mode, and frees it to the pool.
 * Never revived: FREED, once set by the claim, is cleared only when the pool hands the record out
 * again (initHeader (8), by the thread that popped it); increments and decrements never touch it,
 * and a release never claims a record whose FREED is set (h - ONE keeps the bit). An increment
 * that lands on a freed record (protect read the link, the record was unlinked and freed before
 * the increment: the Michael-Scott race) is a stray: it is counted like any other unit, so the
 * count of a free record is the number of strays in flight. initHeader adds ONE - FREED with one
 * atomic add, keeping the strays, and every stray is released once by its protect after the
 * failed validation (3); if the record was reused meanwhile, the stray's unit and its release
 * belong to the new life, where they only delay the claim. A stray never frees: its release
 * sees FREED (no claim), or the record was reused and its own unit keeps the count above zero
 * until that release. (The count word of a free record is therefore never reset with a plain
 * store, which would lose a stray's unit and let its release claim a live record.)
 * Unpublished records (freeExclusive): the owner's unit becomes FREED in one atomic add (9)
 * (C += FREED - ONE, keeping strays and the units of links that a teardown has not released
 * yet), then the destructor runs on it: its links' references (initLink counted them) are
 * released, and it goes to the pool. It is not counted in the domain's frees (it was never
 * retired); the records its release claims are.
 * Mark bits: counts apply to the pointer without the low 3 bits; a cas that only changes marks
 * (same target) moves no count.
 *
 * protect(slot, address): loop { q = load(address) (1); p = q without marks; if p is the slot's
 *   target, return q; if p == 0, release the slot's target, return q; increment p (2); r =
 *   load(address) (3); if r without marks == p: release the slot's previous target, hold p in
 *   the slot, return r; else release p (4) (a stray: p may have been freed and reused) }.
 * protectIfEqual(slot, address, expected): the same with p = expected, validated by r == expected
 *   (marks included); on failure the slot keeps its previous target.
 * store: increment the new target (2), exchange (5), release the old target (4).
 * cas: same target: the CAS alone (6). Else increment the new target (2), CAS (6); success:
 *   release the old target (4); failure: release the new target (4).
 * initLink: increment the target (2), plain store (7) (published by the (5) or (6) that links
 *   the record).
 * retire: note the retire (trailer LIVE -> RETIRED), release the owner's unit (4).
 * unpin (outermost close): release every slot's target (4); the inner windows' protections last
 *   until then, as the Guard contract says.
 *
 * Memory ordering: (1) and (3) acquire loads of links: pair with (5), (6) and the release store
 * of a root, so a protected record's initialization is visible. (2) volatile getAndAdd; (4)
 * volatile compare-and-exchange; (8) volatile load and getAndAdd; (9) volatile getAndAdd: every
 * access to a count word is a volatile RMW (or load), so they are totally ordered and each
 * synchronizes-with the next. Protect's safety: if its increment (2) comes after a claim in the
 * count word's order, the claim synchronizes-with it, so the unlink (5)/(6) that preceded the
 * last release happens-before the validation (3), which therefore cannot see the record in the
 * link any more, unless a later life of the record was linked there again after initHeader (8)
 * kept the increment (then the increment counts in that life). If (2) comes before the claim,
 * the releaser's CAS sees the increment and does not claim. The destructor's plain loads of the
 * links, and the pool's reuse, happen after the claim, which every holder's release precedes in
 * the count word's order: every write to the record happens-before its destruction. (7) is
 * plain: the record is private until the volatile (5)/(6) that links it. Slots are a guard's
 * private array; departure reads them after the thread's end (Participants' release hook).
 *
 * Linearization points: protect - the validating load (3) that finds p (or the load (1) of a
 * null or already held target); protectIfEqual - its validating load (3); store - the exchange
 * (5); cas - its CAS (6); retire - the release CAS (4) of the owner's unit (it reclaims at once
 * if that was the last unit); unpin - the last slot's release (4); a record's reclamation - its
 * claim (4).
 *
 * Progress: protect is lock-free (it retries only when the link changed); a release is
 * lock-free (its CAS fails only when the count changed); store, cas and initLink are wait-free
 * plus at most one release; a release that claims runs the destructor, which frees exactly the
 * records whose last reference it dropped, O(freed records * links), iteratively (bounded
 * stack); allocation is the pool's (lock-free). Departure and close run the releases of the
 * departed thread's slots, lock-free.
 *
 * Reclamation is safe because a record is claimed only when no link, slot or owner holds it and
 * no increment is in flight, and a held record keeps its links' targets held. This is stronger
 * than hazard pointers: any record reached through a held record's link, validated by (3), stays
 * allocated, whether or not the structure still reaches it, so lfrc needs no reachability
 * validation (it does not declare PROTECTION_NEEDS_VALIDATION). Type-stable memory makes a
 * stray's increment on a freed record harmless (it stays a record of this domain until close()).
 * ABA: a held record is never reused, so a CAS whose expected record the caller holds cannot be
 * fooled; a link target written without a hold (Treiber push's top, read with a plain load) is
 * incremented before the CAS that validates it, exactly like protect; the pool's shared stack is
 * tag-protected (BlockStack).
 *
 * Garbage bound: a retired record stays unreclaimed only while a slot holds it or a held record
 * reaches it through links (a chain of retired records: a dequeued MS-queue dummy links the next
 * node, which is dequeued in turn; a marked Harris list node links its successor). One thread
 * holds at most K = slots() * maxNesting records in its slots, each keeping what it reaches: at
 * most K * (1 + R) retired records, where R is the most retired records reachable from one
 * record. For records without links (no declareLinks, or none yet) R = 0: garbageBound(n) = K
 * per thread, n * K in all (the shared stalled-thread test's single cell: the stalled thread
 * holds its protected node). With links, R is the structure's: unbounded in general (a stalled
 * thread holding an old queue dummy keeps every node dequeued since), so garbageBound returns
 * Long.MAX_VALUE.
 * Cycles: a cycle of retired records keeps its own counts above zero and leaks, even at close()
 * (the domain does not track them). The structures here build none: the queue's, the list's and
 * the stack's retired chains point forward to younger records, never back; the trees' links
 * point from parents to children.
 * Orphans: a departing thread (death or Participants.close) releases its slots' counts in its
 * release hook (a thread that died pinned included), the records this frees go to its pool bag,
 * and the pool hands that bag to the shared stack; close() frees every pooled record.
 * }</pre>
 */
final class LockFreeRefCounting extends ReclaimDomain {

    /** The count word's bit set from a record's claim to its reuse. */
    static final long FREED = 1;
    /** One reference in the count word. */
    static final long ONE = 2;
    /** What debug mode writes over a reclaimed record's words (the debug allocator's poison). */
    static final long POISON = 0xDBDB_DBDB_DBDB_DBDBL;

    LockFreeRefCounting(final Builder b) {
        super(b, 1, true);
    }

    @Override
    Guard newGuard(final int id) {
        return new LfrcGuard(this, id);
    }

    /**
     * A record handed out: fresh (zeroed: C = 0) or reused (C = FREED | strays). Adds the owner's
     * unit and clears FREED in one atomic add (8), keeping the strays in flight.
     */
    @Override
    void initHeader(final long header) {
        final long c = Words.lv(header); // (8): FREED is set by a claim or (9), cleared only here, by the popper
        Words.xadd(header, ONE - (c & FREED)); // (8)
    }

    /** The address of {@code ptr}'s count word. */
    long countWord(final long ptr) {
        return ptr + recordBytes;
    }

    /** Adds a reference to the record {@code ptr} (2). */
    void increment(final long ptr) {
        Words.xadd(countWord(ptr), ONE); // (2)
    }

    /** Drops a reference to {@code ptr} (4); returns whether this call claimed the record (its last reference). */
    boolean decrement(final long ptr) {
        final long word = countWord(ptr);
        long c = Words.lv(word);
        while (true) {
            final long next = c == ONE ? FREED : c - ONE;
            final long seen = Words.cae(word, c, next); // (4)
            if (seen == c) {
                return c == ONE; // the claim; a stray's release on a free record (FREED | ONE -> FREED) is none
            }
            c = seen;
        }
    }

    @Override
    void freeUnpublished(final long ptr) {
        ((LfrcGuard) callerGuard()).freeOwned(ptr);
    }

    /** A structure whose records have several layouts cannot say where their links are: refused. */
    @Override
    void linksDeclared(final long[] sorted) {
        if (sorted.length == 0) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "reclamation domain %s counts references (lfrc): it releases a reclaimed record's links, "
                            + "so it cannot serve a structure that declares none (records of several layouts); "
                            + "use another scheme", this));
        }
    }

    /** Frees are immediate: nothing waits for a flush. */
    @Override
    void flush(final Guard g) {
    }

    /** The departed thread's slots release their counts; what that frees goes to its pool bag. */
    @Override
    void abandon(final Guard g) {
        ((LfrcGuard) g).departed();
    }

    /** Close: the slots of a thread that died pinned still hold counts; release them. */
    @Override
    void drainRetired(final Guard g, final BlockBag target) {
        ((LfrcGuard) g).departed();
    }

    @Override
    long advances() {
        return 0;
    }

    /** K = slots * maxNesting held records per thread, without links; unbounded chains with links. */
    @Override
    long garbageBound(final int n) {
        final long[] links = linkOffsets();
        return links == null || links.length == 0 ? slotWords : Long.MAX_VALUE;
    }

    /** Whether {@code g}'s slots hold {@code ptr} (tests). */
    boolean holds(final Guard g, final long ptr) {
        for (final long p : ((LfrcGuard) g).held) {
            if (p == ptr) {
                return true;
            }
        }
        return false;
    }

    static final class LfrcGuard extends Guard {

        private final LockFreeRefCounting rc;
        /** Each slot word's target (window by window), its count held; 0 when none. */
        final long[] held;
        /** Bit w: slot word w holds a target. */
        private long used;
        /** Claimed records whose links are not released yet (the destructor's work list). */
        private final BlockBag work;
        /** Destroyed records, freed to the pool in one go. */
        private final BlockBag dead;

        LfrcGuard(final LockFreeRefCounting domain, final int id) {
            super(domain, id);
            this.rc = domain;
            this.held = new long[domain.slotWords];
            this.work = new BlockBag(blocks);
            this.dead = new BlockBag(blocks);
        }

        @Override
        void enter() {
        }

        @Override
        void exit() {
            releaseSlots();
        }

        /** Releases every slot's target (unpin, departure, close). */
        void releaseSlots() {
            long u = used;
            used = 0;
            while (u != 0) {
                final int w = Long.numberOfTrailingZeros(u);
                u &= u - 1;
                final long p = held[w];
                held[w] = 0;
                if (p != 0) {
                    drop(p);
                }
            }
        }

        /** The thread departed (or the domain closes): releases its slots and recycles its bags' blocks. */
        void departed() {
            releaseSlots();
            work.releaseBlocks();
            dead.releaseBlocks();
        }

        /** The index of {@code slot} of the current window in {@link #held} (checks the slot and the section). */
        private int index(final int slot) {
            return (int) ((slotAddress(slot) - row - ReclaimDomain.HAZARDS) >>> 3);
        }

        @Override
        public long protect(final int slot, final long address) {
            final int w = index(slot);
            while (true) {
                final long q = Words.la(address); // (1)
                final long p = q & ~MARK_BITS;
                final long had = held[w];
                if (p == had) {
                    return confirmed(q);
                }
                if (p == 0) {
                    hold(w, 0, had);
                    return confirmed(q);
                }
                rc.increment(p); // (2)
                final long r = Words.la(address); // (3)
                if ((r & ~MARK_BITS) == p) {
                    hold(w, p, had);
                    return confirmed(r);
                }
                drop(p); // a stray: p may have been freed (and reused) since (1)
            }
        }

        @Override
        public boolean protectIfEqual(final int slot, final long address, final long expected) {
            final int w = index(slot);
            final long p = expected & ~MARK_BITS;
            final long had = held[w];
            final boolean equal;
            if (p == had || p == 0) {
                equal = Words.la(address) == expected; // (3)
                if (equal && p != had) {
                    hold(w, 0, had);
                }
            } else {
                rc.increment(p); // (2)
                equal = Words.la(address) == expected; // (3)
                if (equal) {
                    hold(w, p, had);
                } else {
                    drop(p);
                }
            }
            if (polls) {
                pollNow(); // (R3): confirms the word
            }
            return equal;
        }

        /** Slot word {@code w} now holds {@code p} (its count taken); releases its previous target {@code had}. */
        private void hold(final int w, final long p, final long had) {
            held[w] = p;
            used |= 1L << w;
            if (had != 0) {
                drop(had);
            }
        }

        /** The poll of a protect (restart injection), after the word it returns is held. */
        private long confirmed(final long word) {
            if (polls) {
                pollNow(); // (R3)
            }
            return word;
        }

        @Override
        public void retire(final long ptr) {
            noteRetire(ptr);
            drop(ptr); // the owner's unit
        }

        @Override
        public void store(final long address, final long ptr) {
            final long p = ptr & ~MARK_BITS;
            if (p != 0) {
                rc.increment(p); // (2)
            }
            final long old = Words.xchg(address, ptr) & ~MARK_BITS; // (5)
            if (old != 0) {
                drop(old);
            }
        }

        @Override
        public boolean cas(final long address, final long expected, final long ptr) {
            final long p = ptr & ~MARK_BITS;
            final long e = expected & ~MARK_BITS;
            if (p == e) {
                return Words.cas(address, expected, ptr); // (6): marks only, no count moves
            }
            if (p != 0) {
                rc.increment(p); // (2)
            }
            final boolean done = Words.cas(address, expected, ptr); // (6)
            final long release = done ? e : p;
            if (release != 0) {
                drop(release);
            }
            return done;
        }

        @Override
        public void initLink(final long address, final long ptr) {
            final long p = ptr & ~MARK_BITS;
            if (p != 0) {
                rc.increment(p); // (2)
            }
            Words.sp(address, ptr); // (7)
        }

        /** Drops a reference to {@code p}; destroys what that leaves unreferenced. */
        private void drop(final long p) {
            if (rc.decrement(p)) {
                work.add(p);
                destroy();
            }
        }

        /**
         * freeExclusive: the owner's unit of the live record {@code p} becomes FREED (9), its links
         * are released, and it goes to the pool, uncounted (it was never retired).
         */
        void freeOwned(final long p) {
            Words.xadd(rc.countWord(p), FREED - ONE); // (9)
            releaseLinks(p, rc.linkOffsets());
            rc.pool.free(pool, blocks, p, scratch);
            destroy();
        }

        /**
         * The destructor, iterative: releases the links of every claimed record on the work list
         * (adding the records this claims), then frees them all to the pool, counted.
         */
        private void destroy() {
            final long[] links = rc.linkOffsets();
            for (long x; (x = work.pop()) != 0; ) {
                releaseLinks(x, links);
                dead.add(x);
            }
            freeFrom(dead, dead.size());
        }

        /**
         * Releases what {@code x}'s links hold (claims go on the work list) and clears the links, so
         * that a record handed out again links nothing until the structure initializes it; in debug
         * mode, poisons its other words.
         */
        private void releaseLinks(final long x, final long[] links) {
            if (rc.debug) {
                for (long o = 0; o < rc.recordBytes; o += Long.BYTES) {
                    if (links == null || Arrays.binarySearch(links, o) < 0) {
                        Words.sp(x + o, POISON);
                    }
                }
            }
            if (links != null) {
                for (final long offset : links) {
                    final long child = Words.lp(x + offset) & ~MARK_BITS;
                    Words.sp(x + offset, 0L);
                    if (child != 0 && rc.decrement(child)) {
                        work.add(child);
                    }
                }
            }
        }
    }
}
