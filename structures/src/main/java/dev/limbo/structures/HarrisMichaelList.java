package dev.limbo.structures;

import dev.limbo.core.Layouts;
import dev.limbo.core.Words;
import dev.limbo.reclaim.Guard;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Restart;

import java.util.ArrayList;
import java.util.List;

import static dev.limbo.structures.ListNodeLayout.KEY;
import static dev.limbo.structures.ListNodeLayout.NEXT;
import static dev.limbo.structures.ListNodeLayout.VALUE;

/**
 * A lock-free ordered set of {@code long} keys, and map from them to {@code long} values, with
 * nodes in off-heap memory: Harris's linked list with Michael's hazard-pointer-compatible search.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm and source: Michael, "High performance dynamic lock-free hash tables and list-based
 * sets", SPAA 2002, §3 and Fig. 4/5 (Find, Insert, Delete, Search): Harris's list (DISC 2001) with
 * the deletion mark in bit 0 of a node's next word, and a Find that validates the predecessor link
 * after protecting each successor, so that it never follows a pointer out of a removed node and
 * works with hazard pointers as well as with epochs. The list has a head word (never marked) and
 * no sentinel nodes; 0 ends it. Three protection slots (prev, cur, next) rotate by index, without
 * copying hazards.
 * Departure: the map's value. The paper's set has no value; here a value word is replaced in place
 * by CAS (put), and remove swaps it to RESERVED (the tombstone) right after marking, so that the
 * value a remove returns is the last one written and no update is lost (see linearization).
 *
 * Find(key), the core (Fig. 5): prev = head; cur = protect(head) (1). Loop: if cur == 0, stop
 * (window prev, 0). next = protect(cur.next) (1); ckey = cur.key (3); if load(prev) != cur (2),
 * restart (cur was unlinked, or prev was marked, or a node was inserted between). If next is
 * unmarked: stop if ckey >= key (window prev, cur, next; found = ckey == key), else advance
 * (prev = &cur.next). If next is marked: CAS(prev, cur, next unmarked) (6) and retire cur, or
 * restart if the CAS fails. The window goes back in Guard.locals(): [prev link address, cur, next].
 *
 * Operations: putIfAbsent / insert - Find; if found, read the value (7) (tombstone: retry); else
 * allocate the node once, write key, value, next = cur with plain stores and CAS(prev, cur, node)
 * (4); retry on failure, reusing the node. A node allocated but never linked (the key turned up on
 * a retry) was never visible to another thread and is freed at once with freeExclusive.
 * put - as putIfAbsent, but a found node's value is replaced by CAS (8) (old value != tombstone).
 * remove - Find; CAS(cur.next, next, next | 1) (5) (failure: retry); swap the value to the
 * tombstone (9); CAS(prev, cur, next) (6) and retire cur, or, if that fails, run Find(key) once,
 * which unlinks cur (no node with the same key can be linked before cur is unlinked).
 * get / contains - Find; get reads the value (7). size - a Find for RESERVED_KEY (larger than
 * every key) that counts the unmarked nodes it passes.
 *
 * Invariants:
 *  - The nodes reachable from the head (following next words, marks ignored) are exactly the
 *    linked nodes, with strictly increasing keys (signed order); a linked node's next word is
 *    marked iff it has been logically removed. A node is linked once (by (4)) and unlinked once
 *    (by (6)); a node with key k is linked only after every earlier node with key k was unlinked.
 *  - A marked next word never changes again (every CAS on a next word expects an unmarked value).
 *  - A node's key never changes while it is reachable; its value is RESERVED (the tombstone) only
 *    after its next word is marked, and never changes after that.
 *  - Only the head word and next words hold node pointers; the head word is never marked.
 *
 * Linearization points:
 *  - insert / putIfAbsent that inserts, put that inserts: the successful link CAS (4).
 *  - putIfAbsent that finds the key: the value read (7); put that replaces: its successful value
 *    CAS (8). Such a read or CAS may come after a concurrent remove's mark (5) (its Find saw cur
 *    unmarked before the mark): it is then linearized just before that mark; this is consistent
 *    because the remove reports the value that its swap (9) finds, i.e. the last one written, and
 *    later updates see the tombstone and retry.
 *  - remove that removes: the marking CAS (5). remove, get or contains that finds nothing: the
 *    last Find step's read (1) of an unmarked link that returned a node with a larger key or 0,
 *    its owner validated as still linked by (2) (a remove whose mark CAS (5) lost retries).
 *  - get / contains that find the key: the read (1) of cur.next that saw it unmarked in the last
 *    Find step (get: with the value read (7) after it; a tombstone read there means the node was
 *    removed after that point, and get is linearized just after the mark: absent).
 *  - size: not linearizable; a traversal that counts the nodes it saw unmarked (approximate while
 *    other threads update the list, exact when quiescent).
 *
 * Progress: lock-free. Find restarts only when a link it validated changed, i.e. when another
 * operation's CAS (4)/(5)/(6) succeeded; every CAS loop retries only after another thread's CAS on
 * the same word succeeded. HP protect loops only while the protected word keeps changing.
 *
 * Memory ordering:
 *  (1) protect(slot, link): an acquire load (epoch schemes, none), or publish + full fence +
 *      acquire re-load (hp). Pairs with the CASes (4), (5), (6) that wrote the link: the node it
 *      reaches is fully initialized (key, value, next written with plain stores before (4)).
 *  (2) acquire load of the predecessor link, the validation; ordered after (1)'s (re-)load by
 *      (1)'s acquire. Pairs with (4), (6) and the mark (5) on the predecessor's next word.
 *  (3) plain load of cur.key: immutable, published by (4) and acquired by (1).
 *  (4) volatile CAS of the predecessor link from cur to the new node: publishes the new node's
 *      plain initialization stores (key, value, next).
 *  (5) volatile CAS of cur.next from next to next | 1 (the mark). Expects the exact unmarked word.
 *  (6) volatile CAS of the predecessor link from cur to next (unmarked): the unlink. Expects the
 *      exact unmarked word (cur), so it fails if the predecessor is marked or was relinked.
 *  (7) acquire load of the value word; pairs with (4) (first value), (8) and (9).
 *  (8) volatile compare-and-exchange of the value word (old -> new, old != tombstone).
 *  (9) volatile get-and-set of the value word to the tombstone, after (5) in program order; both
 *      are volatile, so whoever reads the tombstone (7)/(8) also sees the mark in its next Find.
 *  Linearizability is argued on the hardware's (multi-copy atomic) coherence order of each word,
 *  as for java.util.concurrent: volatile writes, acquire reads.
 *
 * Reclamation and ABA: a node is retired exactly once, by the thread whose unlinking CAS (6)
 * succeeded (in Find, or in remove's direct unlink); never-linked nodes are freed directly. Every
 * pointer dereferenced is protected by (1) before use, and (1) plus the validation (2) show it
 * reachable after its protection was published: cur was linked when (2) ran, so the next read in
 * (1) before it was cur's successor while cur was linked (a linked node is unmarked and its
 * successor linked, or marked and its next frozen), hence not yet retired. A protected node is
 * not freed, so not reused: the CASes (4), (5), (6) that expect a protected node's address cannot
 * succeed on a recycled record (ABA), and they expect the exact unmarked predecessor word, so a
 * marked (removed) predecessor is never modified. The head word lives outside the domain's records
 * and is freed only by close(), after every operation has ended (OffHeapStructure's in-flight
 * count).
 *
 * Neutralization (Guard, "Neutralization"): Find is the read phase; it catches Restart at any
 * protect and starts over from the head. Its helping unlink (6) is a write phase of its own:
 * reserve prev's node, cur and next, beginWrite (a poll: Restart before anything is written),
 * CAS, retire, endWrite; the traversal then goes on from the reserved nodes. put reserves the
 * window and calls beginWrite before (4) or (8), so a value it returns or replaces was read from
 * a node that was safe; remove does the same before (5) and stays in its write phase through (9)
 * and (6), so that a restart can never repeat a write after its linearization point. get,
 * contains, size and a remove that finds nothing confirm their answer with a poll after the last
 * read (restart: search again). Links are written through the guard: initLink for a new node's
 * next, store for a relink on retry, cas for (4), (5) and (6).
 * }</pre>
 *
 * <p>Keys are ordered by signed comparison; {@link #RESERVED_KEY} is rejected as a key and
 * {@link #RESERVED} as a value. The set view ({@link #insert}) maps its keys to 0.
 */
public final class HarrisMichaelList extends OffHeapStructure {

    /** Protection slots one operation needs: prev, cur, next. */
    static final int SLOTS = 3;
    /** The deletion mark: bit 0 of a next word. */
    static final long MARK = 1;
    /** The value word of a removed node. Equal to RESERVED, so a read of it means absent. */
    static final long TOMBSTONE = RESERVED;

    /** {@link Guard#locals()} index: the address of the link that points to the window's node. */
    static final int W_PREV = 0;
    /** {@link Guard#locals()} index: the window's node (0: end of list). */
    static final int W_CUR = 1;
    /** {@link Guard#locals()} index: the window node's successor, unmarked. */
    static final int W_NEXT = 2;
    /** {@link Guard#locals()} index: unmarked nodes passed (for size). */
    static final int W_COUNT = 3;

    private final long head;

    /**
     * A list over {@code domain}, which needs records of at least 24 bytes and at least 3
     * protection slots.
     *
     * @throws IllegalArgumentException if the domain's records or slots are too few
     */
    public HarrisMichaelList(final ReclaimDomain domain) {
        super(domain, SLOTS, ListNodeLayout.SIZE);
        domain.declareLinks(NEXT);
        this.head = domain.allocator().allocateZeroed(Layouts.PADDED);
    }

    /** Adds {@code key} to the set (mapped to 0); returns whether it was absent. */
    public boolean insert(final long key) {
        checkKey(key);
        final int op = enter();
        try (Guard g = domain.pin()) {
            return put(g, domain, head, key, 0L, false) == RESERVED;
        } finally {
            exit(op);
        }
    }

    /**
     * Maps {@code key} to {@code value} if it is absent; returns the value already mapped, or
     * {@link #RESERVED} if this call inserted it.
     */
    public long putIfAbsent(final long key, final long value) {
        checkKey(key);
        checkValue(value);
        final int op = enter();
        try (Guard g = domain.pin()) {
            return put(g, domain, head, key, value, false);
        } finally {
            exit(op);
        }
    }

    /**
     * Maps {@code key} to {@code value}, replacing the value of a present key in place; returns the
     * previous value, or {@link #RESERVED} if the key was absent.
     */
    public long put(final long key, final long value) {
        checkKey(key);
        checkValue(value);
        final int op = enter();
        try (Guard g = domain.pin()) {
            return put(g, domain, head, key, value, true);
        } finally {
            exit(op);
        }
    }

    /** The value mapped to {@code key}, or {@link #RESERVED} if absent. */
    public long get(final long key) {
        checkKey(key);
        final int op = enter();
        try (Guard g = domain.pin()) {
            return get(g, head, key);
        } finally {
            exit(op);
        }
    }

    /** Whether {@code key} is present. */
    public boolean contains(final long key) {
        checkKey(key);
        final int op = enter();
        try (Guard g = domain.pin()) {
            return contains(g, head, key);
        } finally {
            exit(op);
        }
    }

    /** Removes {@code key}; returns the value it had, or {@link #RESERVED} if it was absent. */
    public long remove(final long key) {
        checkKey(key);
        final int op = enter();
        try (Guard g = domain.pin()) {
            return remove(g, head, key);
        } finally {
            exit(op);
        }
    }

    /**
     * The number of keys, counted by a traversal: approximate while other threads update the list
     * (neither a snapshot nor linearizable), exact when it is quiescent. O(n).
     */
    public long size() {
        final int op = enter();
        try (Guard g = domain.pin()) {
            return count(g, head);
        } finally {
            exit(op);
        }
    }

    @Override
    void freeNodes() {
        freeAll(this, head);
        domain.allocator().free(head);
    }

    /** Quiescent inspection for tests: every linked node as {key, value, next word, address}, in order. */
    List<long[]> nodesQuiescent() {
        return nodesQuiescent(head);
    }

    // ---------------------------------------------------------------- the algorithm, per head word

    /**
     * Michael's Find: positions the window of {@code g.locals()} on the first node whose key is at
     * least {@code key}, unlinking (and retiring) the marked nodes it meets. Returns whether that
     * node's key is {@code key}. On return, the predecessor node, cur and next stay protected.
     */
    static boolean find(final Guard g, final long head, final long key) {
        retry:
        while (true) {
            try {
                int sPrev = 0;
                int sCur = 1;
                int sNext = 2;
                long count = 0;
                long prev = head;
                long cur = g.protect(sCur, prev); // (1) the head word is never marked
                while (true) {
                    if (cur == 0) {
                        return window(g, prev, 0, 0, count, false);
                    }
                    final long next = g.protect(sNext, cur + NEXT); // (1)
                    final long ckey = Words.lp(cur + KEY); // (3)
                    if (Words.la(prev) != cur) { // (2)
                        continue retry;
                    }
                    if ((next & MARK) == 0) {
                        if (ckey >= key) {
                            return window(g, prev, cur, next, count, ckey == key);
                        }
                        count++;
                        prev = cur + NEXT;
                        final int free = sPrev; // prev's node is left behind: its slot takes the next successor
                        sPrev = sCur;
                        sCur = sNext;
                        sNext = free;
                    } else {
                        reserveWindow(g, prev, cur, next);
                        g.beginWrite();
                        if (!g.cas(prev, cur, next & ~MARK)) { // (6)
                            g.endWrite();
                            continue retry;
                        }
                        g.retire(cur);
                        g.endWrite();
                        final int free = sCur; // cur is gone: its slot takes the next successor
                        sCur = sNext;
                        sNext = free;
                    }
                    cur = next & ~MARK;
                }
            } catch (final Restart neutralized) {
                // the read phase starts over from the head (Guard, "Neutralization")
            }
        }
    }

    /** Reserves a window for the write phase that follows: the predecessor's link (inside its node), cur, next. */
    private static void reserveWindow(final Guard g, final long prev, final long cur, final long next) {
        g.reserve(0, prev);
        g.reserve(1, cur);
        g.reserve(2, next);
    }

    /** Contains under {@code g}: a Find whose answer is confirmed by a poll. */
    static boolean contains(final Guard g, final long head, final long key) {
        while (true) {
            final boolean found = find(g, head, key);
            try {
                g.poll();
                return found;
            } catch (final Restart neutralized) {
                // the answer may rest on freed nodes: search again
            }
        }
    }

    private static boolean window(final Guard g, final long prev, final long cur, final long next,
                                  final long count, final boolean found) {
        final long[] w = g.locals();
        w[W_PREV] = prev;
        w[W_CUR] = cur;
        w[W_NEXT] = next;
        w[W_COUNT] = count;
        return found;
    }

    /**
     * Insert-or-get ({@code replace} false) or insert-or-replace ({@code replace} true) under
     * {@code g}; returns the previous value, or RESERVED if a node was inserted.
     */
    static long put(final Guard g, final ReclaimDomain domain, final long head, final long key, final long value,
                    final boolean replace) {
        final long[] w = g.locals();
        long node = 0;
        while (true) {
            try {
                if (find(g, head, key)) {
                    final long cur = w[W_CUR];
                    long old = Words.la(cur + VALUE); // (7)
                    g.reserve(1, cur);
                    g.beginWrite();
                    while (old != TOMBSTONE) {
                        if (!replace) {
                            g.endWrite();
                            return discard(domain, node, old);
                        }
                        final long witness = Words.cae(cur + VALUE, old, value); // (8)
                        if (witness == old) {
                            g.endWrite();
                            return discard(domain, node, old);
                        }
                        old = witness;
                    }
                    g.endWrite();
                    // cur was removed (marked before the tombstone): the next Find unlinks it
                } else {
                    final long prev = w[W_PREV];
                    final long cur = w[W_CUR];
                    if (node == 0) {
                        node = g.allocate();
                        Words.sp(node + KEY, key);
                        Words.sp(node + VALUE, value);
                        g.initLink(node + NEXT, cur);
                    } else {
                        g.store(node + NEXT, cur); // unpublished still: a retry relinks it
                    }
                    g.reserve(0, prev);
                    g.reserve(1, cur);
                    g.beginWrite();
                    final boolean linked = g.cas(prev, cur, node); // (4)
                    g.endWrite();
                    if (linked) {
                        return RESERVED;
                    }
                }
            } catch (final Restart neutralized) {
                // the window may rest on freed nodes: search again (the node, unpublished, is kept)
            }
        }
    }

    /** Frees a node that was allocated but never linked (no other thread saw it). */
    private static long discard(final ReclaimDomain domain, final long node, final long result) {
        if (node != 0) {
            domain.freeExclusive(node);
        }
        return result;
    }

    /** Get under {@code g}. */
    static long get(final Guard g, final long head, final long key) {
        while (true) {
            final long value = find(g, head, key) ? Words.la(g.locals()[W_CUR] + VALUE) : RESERVED; // (7) the tombstone is RESERVED: absent
            try {
                g.poll();
                return value;
            } catch (final Restart neutralized) {
                // the value may have been read from a freed node: search again
            }
        }
    }

    /** Remove under {@code g}; returns the removed value or RESERVED. */
    static long remove(final Guard g, final long head, final long key) {
        final long[] w = g.locals();
        while (true) {
            final boolean found = find(g, head, key);
            final long prev = w[W_PREV];
            final long cur = w[W_CUR];
            final long next = w[W_NEXT];
            try {
                if (!found) {
                    g.poll();
                    return RESERVED;
                }
                reserveWindow(g, prev, cur, next);
                g.beginWrite();
            } catch (final Restart neutralized) {
                continue; // the window may rest on freed nodes: search again
            }
            if (!g.cas(cur + NEXT, next, next | MARK)) { // (5)
                g.endWrite();
                continue;
            }
            final long value = Words.xchg(cur + VALUE, TOMBSTONE); // (9)
            final boolean unlinked = g.cas(prev, cur, next); // (6)
            if (unlinked) {
                g.retire(cur);
            }
            g.endWrite();
            if (!unlinked) {
                find(g, head, key); // unlinks cur, unless another thread did
            }
            return value;
        }
    }

    /** Unmarked nodes reachable from {@code head}, unlinking marked ones on the way (size). */
    static long count(final Guard g, final long head) {
        while (true) {
            find(g, head, RESERVED_KEY);
            try {
                g.poll();
                return g.locals()[W_COUNT];
            } catch (final Restart neutralized) {
                // counted over freed nodes: count again
            }
        }
    }

    /** Frees every node linked from {@code head} and clears it: {@code owner}'s teardown, no operation may run. */
    static void freeAll(final OffHeapStructure owner, final long head) {
        long cur = Words.lp(head) & ~MARK;
        Words.sp(head, 0L);
        while (cur != 0) {
            final long next = Words.lp(cur + NEXT) & ~MARK;
            owner.freeNode(cur);
            cur = next;
        }
    }

    /** Quiescent inspection: every node linked from {@code head} as {key, value, next word, address}. */
    static List<long[]> nodesQuiescent(final long head) {
        final List<long[]> nodes = new ArrayList<>();
        for (long cur = Words.lv(head) & ~MARK; cur != 0; ) {
            final long next = Words.lv(cur + NEXT);
            nodes.add(new long[] {Words.lv(cur + KEY), Words.lv(cur + VALUE), next, cur});
            cur = next & ~MARK;
        }
        return nodes;
    }
}
