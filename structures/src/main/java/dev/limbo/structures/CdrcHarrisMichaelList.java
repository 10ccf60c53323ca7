package dev.limbo.structures;

import dev.limbo.core.Participants;
import dev.limbo.core.Words;
import dev.limbo.reclaim.rc.Cdrc;
import dev.limbo.reclaim.rc.RcType;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A lock-free ordered set of {@code long} keys, and map from them to {@code long} values, whose
 * off-heap nodes are reclaimed by concurrent deferred reference counting ({@link Cdrc}): Harris's
 * linked list with Michael's search, as {@link HarrisMichaelList}, with counted links and no
 * retire call anywhere.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm and source: Michael, "High performance dynamic lock-free hash tables and list-based
 * sets", SPAA 2002, §3 Fig. 4/5, the algorithm of HarrisMichaelList (read its notes: the value
 * tombstone, the linearization points and the invariants are the same), written with counted
 * pointers as in the CDRC paper's evaluation (Anderson, Blelloch, Wei, PLDI 2021, §7.2; digest §4.5,
 * §6.3: at most 3 snapshots per operation). A node is a counted object (type NODE): Cdrc.HEADER,
 * key, value, next (a strong counted field; bit 0 of the word is the deletion mark). The list's
 * head word is the one counted field of a root object (type ROOT), never marked; a hash map's
 * heads are the fields of its bucket root (CdrcMichaelHashMap), and Ops runs the algorithm on any
 * head word. Mode: protect = rc.snapshot (cdrc) or rc.load (cdrc-rc); unprotect =
 * rc.releaseSnapshot or rc.release.
 *
 * Find(key): prevNode = 0 (the head's owner, alive until close), prev = head, cur = protect(head)
 * (1). Loop: cur == 0: stop. next = protect(cur.next) (1); ckey = cur.key (3); if load(prev) !=
 * cur (2), drop the window and restart. next unmarked: stop if ckey >= key, else unprotect
 * prevNode and slide (prevNode = cur, prev = &cur.next, cur = next). next marked: rc.cas(prev, cur,
 * next unmarked) (6): on success cur's unlink retires prev's reference to it and next gains one;
 * unprotect cur, cur = next (still protected); on failure drop the window and restart. Three
 * protections at most at any time (prevNode, cur, next: SNAPSHOTS); the window [prevNode, prev,
 * cur, next] stays protected until the operation ends it. The validation (2) is not needed for
 * memory safety here (a protected node's fields stay readable and its next holds a count on its
 * successor), but it keeps Michael's linearization argument: a window ends on a node seen linked.
 *
 * Operations: put / putIfAbsent / insert - Find; found: read the value (7), replace it by CAS (8)
 * if put (tombstone: retry). Not found: allocate the node once (count 1, ours), write key and value,
 * node.next = cur with a plain store, and CAS(prev, cur, node) (4): the CAS moves two references,
 * ours to the node into prev and prev's to cur into node.next, so no count changes; on failure
 * retry, rewriting node.next (it holds no reference until the CAS succeeds). A node never linked
 * (the key turned up on a retry) is released after clearing its next: it dies at once, never seen.
 * remove - Find; rc.casMark(cur.next, next, next | 1) (5) (failure: retry); swap the value to the
 * tombstone (9); rc.cas(prev, cur, next) (6), or, if it fails, one more Find, which unlinks cur.
 * get / contains - Find (get reads the value (7)). size - a Find for RESERVED_KEY counting the
 * unmarked nodes it passes.
 *
 * Invariants: HarrisMichaelList's, plus the counts (Cdrc's Theorem 1): a linked node is referenced
 * by its predecessor's next (or the head); an unlinked node by the delayed retire of the CAS (6)
 * that unlinked it, by the next of marked nodes unlinked with it that still point to it, and by the
 * operations that protect it with a counted load. A node's key never changes; its next changes
 * only by (4) (an unpublished node's, or an unmarked link), (5) and (6).
 *
 * Linearization points: HarrisMichaelList's: insert - the CAS (4); putIfAbsent finding the key -
 * the value read (7); put replacing - the CAS (8); remove - the mark (5); an absent answer - the
 * last Find step's read (1) of an unmarked link, validated by (2); get / contains that find the
 * key - the read (1) of cur.next unmarked. size: not linearizable, exact when quiescent.
 *
 * Progress: lock-free. Find restarts only after another operation's CAS (4), (5) or (6) changed a
 * link it validated; a protection's acquire loops only while the word keeps changing.
 *
 * Memory ordering:
 *  (1) rc.snapshot / rc.load: acquire-retire's announce + fence + validating acquire load
 *      (AcquireRetire (1)-(3)); pairs with (4), (5), (6): the node reached is initialized.
 *  (2) acquire load of the predecessor link, the validation; after (1).
 *  (3) plain load of cur.key: immutable, published by (4), acquired by (1).
 *  (4) volatile CAS of the predecessor link from cur to the new node (Words.cas, count-neutral):
 *      publishes its plain initialization (key, value, next) and header.
 *  (5) rc.casMark: volatile CAS of cur.next from next to next | 1, no count change.
 *  (6) rc.cas of the predecessor link from cur to next: volatile (Cdrc's (9)); on success it
 *      increments next (announced, or snapshotted by this thread) and retires cur (deferred).
 *  (7) acquire load of the value; pairs with (4), (8) and (9).
 *  (8) volatile compare-and-exchange of the value (old -> new, old != tombstone).
 *  (9) volatile get-and-set of the value to the tombstone, after (5).
 *
 * Reclamation and ABA: automatic: a node unlinked by (6) loses the predecessor's reference through
 * a deferred retire; it dies once no snapshot announces it and no count remains, and its death
 * retires its next's reference. No retire call, and no node is retired twice (only a successful
 * CAS drops a link's reference). A protected node is never freed, so never reused: the CASes (4),
 * (5), (6) expect protected nodes (or 0), and (4) and (6) expect the exact unmarked word, so a
 * marked predecessor is never modified. The head words live in a root object that close() alone
 * releases, after every operation ended.
 * }</pre>
 *
 * <p>Keys are ordered by signed comparison; {@link #RESERVED_KEY} is rejected as a key and
 * {@link #RESERVED} as a value. The set view ({@link #insert}) maps its keys to 0. The caller owns
 * the {@link Cdrc} domain, which may serve other structures too, and closes it after them.
 */
public final class CdrcHarrisMichaelList extends StructureLifecycle {

    /** Offset of a node's key. */
    static final long KEY = Cdrc.HEADER;
    /** Offset of a node's value. */
    static final long VALUE = KEY + Long.BYTES;
    /** Offset of a node's counted next field (bit 0: the deletion mark). */
    static final long NEXT = VALUE + Long.BYTES;
    /** The node type: key, value, then the counted next. */
    public static final RcType NODE = new RcType("CdrcHarrisMichaelList.node", NEXT + Long.BYTES, NEXT);
    /** The root type of a list: one counted field, the head word. */
    public static final RcType ROOT = new RcType("CdrcHarrisMichaelList.root", Cdrc.HEADER + Long.BYTES, Cdrc.HEADER);
    /** The most protections (snapshots, or counted loads) one operation holds at once: prev, cur, next. */
    public static final int SNAPSHOTS = 3;
    /** The deletion mark: bit 0 of a next word. */
    static final long MARK = 1;
    /** The value word of a removed node. Equal to RESERVED, so a read of it means absent. */
    static final long TOMBSTONE = RESERVED;

    private final Ops ops;
    private final long root;
    private final long head;

    /**
     * An empty list whose nodes live in {@code rc}.
     *
     * @param rc        the domain (shared with other structures, closed by the caller after them)
     * @param snapshots whether operations protect nodes with snapshots (true) or counted loads only
     * @throws NullPointerException  if {@code rc} is null
     * @throws IllegalStateException if {@code rc} is closed
     */
    public CdrcHarrisMichaelList(final Cdrc rc, final boolean snapshots) {
        this.ops = new Ops(rc, snapshots);
        this.root = rc.allocate(CdrcTypes.id(rc, ROOT));
        this.head = root + Cdrc.HEADER;
    }

    /** Whether operations protect nodes with snapshots (true) or with counted loads. */
    public boolean snapshots() {
        return ops.snapshots;
    }

    /** Adds {@code key} to the set (mapped to 0); returns whether it was absent. */
    public boolean insert(final long key) {
        checkKey(key);
        final int op = enter();
        try {
            return ops.put(head, key, 0L, false) == RESERVED;
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
        try {
            return ops.put(head, key, value, false);
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
        try {
            return ops.put(head, key, value, true);
        } finally {
            exit(op);
        }
    }

    /** The value mapped to {@code key}, or {@link #RESERVED} if absent. */
    public long get(final long key) {
        checkKey(key);
        final int op = enter();
        try {
            return ops.get(head, key);
        } finally {
            exit(op);
        }
    }

    /** Whether {@code key} is present. */
    public boolean contains(final long key) {
        checkKey(key);
        final int op = enter();
        try {
            return ops.contains(head, key);
        } finally {
            exit(op);
        }
    }

    /** Removes {@code key}; returns the value it had, or {@link #RESERVED} if it was absent. */
    public long remove(final long key) {
        checkKey(key);
        final int op = enter();
        try {
            return ops.remove(head, key);
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
        try {
            return ops.count(head);
        } finally {
            exit(op);
        }
    }

    /** Drops the root (its death retires the head's reference, and with it the chain) and flushes. */
    @Override
    void freeNodes() {
        ops.rc.release(root);
        ops.rc.flush();
    }

    /** Quiescent inspection for tests: every linked node as {key, value, next word, address}, in order. */
    List<long[]> nodesQuiescent() {
        return nodesQuiescent(head);
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

    /** The algorithm on any head word, in one protection mode (shared with CdrcMichaelHashMap). */
    static final class Ops {

        /** Window index: the node that owns the predecessor link (0: the head). */
        private static final int W_PREV_NODE = 0;
        /** Window index: the address of the link that points to cur. */
        private static final int W_PREV = 1;
        /** Window index: the window's node (0: end of list). */
        private static final int W_CUR = 2;
        /** Window index: cur's successor, unmarked. */
        private static final int W_NEXT = 3;
        /** Window index: unmarked nodes passed (size). */
        private static final int W_COUNT = 4;
        /** Per participant id, the window of its current operation (an operation never nests another). */
        private static final long[][] WINDOWS = new long[Participants.CAPACITY][];

        final Cdrc rc;
        final boolean snapshots;
        private final int nodeType;

        Ops(final Cdrc rc, final boolean snapshots) {
            this.rc = Objects.requireNonNull(rc, "rc");
            this.snapshots = snapshots;
            this.nodeType = CdrcTypes.id(rc, NODE);
        }

        private long protect(final Cdrc.Local c, final long field) {
            return snapshots ? rc.snapshot(c, field) : rc.load(c, field);
        }

        private void unprotect(final Cdrc.Local c, final long p) {
            if (snapshots) {
                rc.releaseSnapshot(c, p);
            } else {
                rc.release(c, p);
            }
        }

        private static long[] window(final Cdrc.Local c) {
            final int id = c.id();
            long[] w = WINDOWS[id];
            if (w == null) {
                w = new long[W_COUNT + 1];
                WINDOWS[id] = w;
            }
            return w;
        }

        /** Ends the protections of the window Find left. */
        private void drop(final Cdrc.Local c, final long[] w) {
            unprotect(c, w[W_NEXT]);
            unprotect(c, w[W_CUR]);
            unprotect(c, w[W_PREV_NODE]);
        }

        /**
         * Michael's Find: leaves in {@code w} the window on the first node whose key is at least
         * {@code key}, unlinking the marked nodes it meets; returns whether that node's key is
         * {@code key}. The window's nodes stay protected until {@link #drop}.
         */
        private boolean find(final Cdrc.Local c, final long head, final long key, final long[] w) {
            retry:
            while (true) {
                long prevNode = 0;
                long prev = head;
                long count = 0;
                long cur = protect(c, head); // (1) the head word is never marked
                while (true) {
                    if (cur == 0) {
                        return window(w, prevNode, prev, 0, 0, count, false);
                    }
                    final long next = protect(c, cur + NEXT); // (1)
                    final long ckey = Words.lp(cur + KEY); // (3)
                    if (Words.la(prev) != cur) { // (2)
                        unprotect(c, next);
                        unprotect(c, cur);
                        unprotect(c, prevNode);
                        continue retry;
                    }
                    if ((next & MARK) == 0) {
                        if (ckey >= key) {
                            return window(w, prevNode, prev, cur, next, count, ckey == key);
                        }
                        count++;
                        unprotect(c, prevNode);
                        prevNode = cur;
                        prev = cur + NEXT;
                    } else {
                        if (!rc.cas(prev, cur, next & ~MARK)) { // (6)
                            unprotect(c, next);
                            unprotect(c, cur);
                            unprotect(c, prevNode);
                            continue retry;
                        }
                        unprotect(c, cur);
                    }
                    cur = next & ~MARK;
                }
            }
        }

        private static boolean window(final long[] w, final long prevNode, final long prev, final long cur,
                                      final long next, final long count, final boolean found) {
            w[W_PREV_NODE] = prevNode;
            w[W_PREV] = prev;
            w[W_CUR] = cur;
            w[W_NEXT] = next;
            w[W_COUNT] = count;
            return found;
        }

        /**
         * Insert-or-get ({@code replace} false) or insert-or-replace ({@code replace} true); returns
         * the previous value, or RESERVED if a node was inserted.
         */
        long put(final long head, final long key, final long value, final boolean replace) {
            final Cdrc.Local c = rc.local();
            final long[] w = window(c);
            long node = 0;
            while (true) {
                if (find(c, head, key, w)) {
                    final long cur = w[W_CUR];
                    long old = Words.la(cur + VALUE); // (7)
                    while (old != TOMBSTONE) {
                        if (!replace) {
                            drop(c, w);
                            return discard(node, old);
                        }
                        final long witness = Words.cae(cur + VALUE, old, value); // (8)
                        if (witness == old) {
                            drop(c, w);
                            return discard(node, old);
                        }
                        old = witness;
                    }
                    drop(c, w); // cur was removed (marked before the tombstone): the next Find unlinks it
                } else {
                    final long prev = w[W_PREV];
                    final long cur = w[W_CUR];
                    if (node == 0) {
                        node = rc.allocate(nodeType);
                        Words.sp(node + KEY, key);
                        Words.sp(node + VALUE, value);
                    }
                    Words.sp(node + NEXT, cur); // unpublished: the CAS moves prev's reference to cur here
                    final boolean linked = Words.cas(prev, cur, node); // (4)
                    drop(c, w);
                    if (linked) {
                        return RESERVED;
                    }
                }
            }
        }

        /** Releases a node that was allocated but never linked (no other thread saw it; its next holds no reference). */
        private long discard(final long node, final long result) {
            if (node != 0) {
                Words.sp(node + NEXT, 0L);
                rc.release(node);
            }
            return result;
        }

        /** The value mapped to {@code key}, or RESERVED. */
        long get(final long head, final long key) {
            final Cdrc.Local c = rc.local();
            final long[] w = window(c);
            final long value = find(c, head, key, w) ? Words.la(w[W_CUR] + VALUE) : RESERVED; // (7) a tombstone reads as absent
            drop(c, w);
            return value;
        }

        /** Whether {@code key} is present. */
        boolean contains(final long head, final long key) {
            final Cdrc.Local c = rc.local();
            final long[] w = window(c);
            final boolean found = find(c, head, key, w);
            drop(c, w);
            return found;
        }

        /** Removes {@code key}; returns its value, or RESERVED if absent. */
        long remove(final long head, final long key) {
            final Cdrc.Local c = rc.local();
            final long[] w = window(c);
            while (true) {
                if (!find(c, head, key, w)) {
                    drop(c, w);
                    return RESERVED;
                }
                final long prev = w[W_PREV];
                final long cur = w[W_CUR];
                final long next = w[W_NEXT];
                if (!rc.casMark(cur + NEXT, next, next | MARK)) { // (5)
                    drop(c, w);
                    continue;
                }
                final long value = Words.xchg(cur + VALUE, TOMBSTONE); // (9)
                final boolean unlinked = rc.cas(prev, cur, next); // (6)
                drop(c, w);
                if (!unlinked) {
                    find(c, head, key, w); // unlinks cur, unless another thread did
                    drop(c, w);
                }
                return value;
            }
        }

        /** Unmarked nodes reachable from {@code head}, unlinking marked ones on the way (size). */
        long count(final long head) {
            final Cdrc.Local c = rc.local();
            final long[] w = window(c);
            find(c, head, RESERVED_KEY, w);
            drop(c, w);
            return w[W_COUNT];
        }
    }
}
