package dev.limbo.structures;

import dev.limbo.core.Words;
import dev.limbo.reclaim.Guard;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Restart;
import dev.limbo.reclaim.Capability;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * An off-heap lock-free ordered {@code long -> long} map: the Natarajan-Mittal external binary
 * search tree (Natarajan and Mittal, "Fast concurrent lock-free binary search trees", PPoPP 2014),
 * with memory reclamation through a {@link ReclaimDomain}.
 *
 * <pre>{@code
 * ReclaimDomain domain = ReclaimDomain.builder(Scheme.DEBRA).allocator(allocator)
 *         .recordBytes(NatarajanMittalTree.NODE_BYTES).slots(NatarajanMittalTree.SLOTS).build();
 * try (NatarajanMittalTree tree = new NatarajanMittalTree(domain)) {
 *     tree.insert(7, 70);
 *     long v = tree.get(7);            // 70, or RESERVED when absent
 * }
 * }</pre>
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm: the paper's §3 and its pseudocode, Figures 3-5 (seek, search, insert, delete,
 * cleanup). An external BST:
 * keys live in leaves, internal nodes only route (key < node.key: left, else right), and every
 * internal node has exactly two children. Modifications are CASes on child edges, whose two low
 * bits mark them: FLAG (1) says the edge's leaf is being deleted, TAG (2) says the edge must not
 * change because its node is being removed. Marks are never cleared: a marked edge is frozen.
 *  - seek(key) walks down the key's path and records ancestor, successor, parent and leaf: parent
 *    and leaf are the last two nodes, (ancestor, successor) the last edge into an internal node
 *    that was not tagged, so the path from successor to parent consists of tagged edges only.
 *  - insert: CAS the parent's edge from the clean leaf to a new internal node whose children are
 *    the new leaf and the old leaf (routing key: the larger of the two keys). On failure, if the
 *    edge still leads to the leaf but is marked, help (cleanup) and retry.
 *  - delete: injection CAS the edge from the clean leaf to the flagged leaf, then cleanup until the
 *    leaf is gone. cleanup: tag the sibling edge of the flagged leaf (an atomic fetch-or, a cae
 *    loop here), then CAS the ancestor's edge from the clean successor to the sibling, keeping the
 *    sibling's FLAG (a flagged sibling is a leaf being deleted by another thread; it moves up and
 *    its deleter finds it there). That one CAS removes successor .. parent and their flagged leaves.
 *
 * Invariants:
 *  - External BST: for an internal node n, leaves under n.left have keys < n.key, leaves under
 *    n.right keys >= n.key. Leaves have left = right = 0; internal nodes never have a 0 child.
 *    Key, value and "leafness" of a node are immutable once it is published.
 *  - Sentinels (the paper's): R (internal) with R.left = S and R.right = leaf inf2; S (internal)
 *    with S.left = leaf inf0 and S.right = leaf inf1. All five use key Long.MAX_VALUE: every user
 *    key is smaller, so every user key goes left at R and S, user leaves all live in S's left
 *    subtree, and no sentinel leaf ever equals a user key. Hence no seek for a user key ends with
 *    R or S as parent, the edges of R and S are never marked, and R, S and the inf leaves are never
 *    removed (they are freed by close()).
 *  - FLAG only ever marks an edge to a leaf (the injection CAS expects a clean leaf, and cleanup
 *    copies FLAG only together with the flagged leaf's address).
 *  - TAG is set only on an edge of a node whose other edge is flagged (cleanup tags the sibling of
 *    a flagged edge; when the key's edge is not flagged it is tagged, by induction its sibling is
 *    flagged). So a node being removed has both edges marked: a chain node (successor .. above
 *    parent) has a tagged path edge and a flagged leaf, the parent a flagged leaf and a tagged
 *    sibling edge. Marks are set before the unlink CAS and never cleared, so a clean edge read at
 *    time t proves that its node was not removed at t (it is reachable at t).
 *  - Regions removed by two successful unlink CASes are disjoint (an unlink CAS needs a clean edge
 *    of a reachable ancestor), and a removed node is never reinserted.
 *
 * The abstract map at time t: the (key, value) of every reachable leaf whose incoming edge is not
 * flagged. A flagged leaf is logically deleted: get() reports it absent, and insert/putIfAbsent
 * that find it help remove it and retry. (Deviation: the paper's search and insert compare only
 * the leaf's key. Then a get that starts after a remover's flagging CAS, while the remover is
 * delayed before its cleanup, still finds the key, and the flagging CAS cannot be remove's
 * linearization point; looking at the FLAG of the leaf's edge, which the seek has read anyway,
 * makes it one.)
 *
 * Linearization points:
 *  - insert / putIfAbsent that inserts: the successful edge CAS (3) (the parent's clean edge
 *    proves the parent reachable, and the leaf it replaces lies on the key's search path).
 *  - remove that returns a value: its successful flagging CAS (4); the flag decides which remover
 *    wins, and only the winner returns the value.
 *  - get, contains, and insert/putIfAbsent/remove that find the key present or absent: the read
 *    (1) of the final leaf's edge in seek. Clean edge read at t: its node is reachable at t, so the
 *    leaf is in the map at t. Flagged edge, or a leaf with another key: if the edge's node is
 *    reachable at t, the key is absent at t (a key can only be in the leaf on its search path);
 *    otherwise the node was removed at some time t' <= t inside the operation (it was reachable
 *    at some time during the seek, the paper's access-path lemma) with the same frozen edge, and
 *    the key was absent just before t'.
 *  - size(): not linearizable; a sequence of seeks (see its Javadoc).
 *
 * Progress: lock-free. Every retry follows a successful CAS of another thread (an insert, a flag,
 * a tag or an unlink) on an edge the retrying operation depends on. Reads pass through marked
 * edges; an operation that must change a marked edge (an insert or remove at a flagged or tagged
 * leaf edge, a remove that finds its key flagged) first completes the pending cleanup itself
 * (cleanup needs only the seek record, so any thread can run it), so a stalled remover never
 * blocks others. Seeks restart only under schemes that need validation, see below.
 *
 * Schemes with Capability.PROTECTION_NEEDS_VALIDATION (hazard pointers, and every pointer- or
 * era-based scheme; the tree tests the capability, never the scheme). Michael's rule "protect, then validate that the pointer is still
 * there" is not enough here: a node reached through an edge of a removed internal node may
 * already be retired, and a marked edge never changes, so re-reading it validates nothing (the
 * DEBRA digest, §3, calls this the HP + marking problem). The naive fix, restarting the seek from the
 * root whenever an edge read is marked, makes operations lock-free only as long as helping
 * completes the pending deletions that keep edges marked. This implementation instead validates
 * reachability through the anchor, so seeks never restart on a mark:
 *  - A child protected through an edge whose validated word is clean is reachable: the edge's
 *    node was protected and reachable before, and a clean edge proves it was not removed then.
 *  - A child protected through a marked edge is validated by re-reading (8), after protect's full
 *    fence, the anchor edge ancestor -> successor of the seek record: if it still holds the clean
 *    successor, the ancestor was not removed, so successor is reachable; every edge from
 *    successor down to the child was read marked (the seek moves the anchor down at each clean
 *    edge into an internal node), hence frozen, so the child is reachable at the re-read, hence
 *    not retired before it, and any scan that frees it runs after its retire and sees the hazard
 *    published before the re-read (the store-buffering pair of HazardPointers, (2)+(3) vs (4)+(5)).
 *    If the anchor changed, the seek restarts. The anchor edge leads to an internal node, so it
 *    changes only by a successful tag or unlink CAS of another thread, and each edge is tagged at
 *    most once: restarts are bounded by other threads' successful steps, so the seek stays
 *    lock-free. The anchor R -> S never changes, so the argument bottoms out at the root.
 *  - Slots: ancestor, successor, parent, leaf and the child being read are protected at once, so
 *    SLOTS = 5; the roles rotate over the slots (the child takes the lowest slot no role holds).
 *    R and S are never freed and need no slot. The chain between successor and parent loses its
 *    hazards as the seek moves down; cleanup reads it only after its own unlink CAS succeeded, and
 *    from then on only this thread can retire those nodes.
 *  - ABA on the CASes: they expect the leaf (insert, flag) or successor (unlink), which stay
 *    protected until the CAS. remove's cleanup mode asks "is my flagged leaf still on the key's
 *    path?" after seeks that no longer protect it, so a freed and reused address could match:
 *    it also requires the found edge to be flagged. A reused address with a clean edge is another
 *    leaf (this one is gone); one with a flagged edge is another remover's leaf, and helping it is
 *    harmless (this remove's leaf is gone, so it returns right after).
 * The epoch schemes (none, ebr, debra, *-af) protect everything while the operation is pinned:
 * protect is an acquire load and no validation is needed.
 *
 * Reclamation (not in the paper, which leaks): the thread whose unlink CAS (7) succeeds has
 * removed exactly successor .. parent plus one flagged leaf per removed internal node, and retires
 * them, each exactly once (regions are disjoint and only this CAS removes this region). The walk:
 * node = successor; while node != parent: the child in the key's direction is the tagged path
 * edge (the seek followed it), the other child is a flagged leaf (TAG invariant): retire that
 * leaf and node, continue down the path child. At parent: retire the flagged leaf that is not the
 * kept sibling, and parent. Every edge in the region is marked, hence frozen, so the walk reads
 * the same region the CAS removed; no other thread retires these nodes, so the walk's reads are
 * safe under every scheme. The deleters of the removed flagged leaves read their values right
 * after their flag CAS, while the leaf was protected, and then only compare addresses.
 * Unpublished nodes (an insert that finds the key after allocating) go back with freeExclusive.
 * close() frees the nodes still reachable, after every operation has ended (OffHeapStructure's
 * in-flight count); removed nodes are all retired, none is left behind.
 *
 * ABA: a CAS expects a pointer that the operation holds protected (pinned epoch, or hazard), so
 * the expected node cannot be freed and reused in between; marks are part of the compared word.
 *
 * Memory ordering (each non-plain access carries its number):
 *  (0) construction: plain stores of the sentinels, then a release fence; threads must receive
 *      the tree through a happens-before edge (Thread.start, a volatile field), as any object.
 *  (1) protect of a child edge: acquire load (hp: publish, full fence, acquire re-read); pairs
 *      with (3) and (7) (and (0) for S.left), which published the node, so its plain-initialized key, value and
 *      children are visible to the plain loads that follow. Key, value and leafness are read
 *      plain: immutable once published.
 *  (2) plain stores initializing a new node, before (3).
 *  (3) insert CAS on the parent's edge (volatile): publishes the new nodes; pairs with (1), (5).
 *  (4) flag CAS (volatile); pairs with (1), (5): readers see the flag.
 *  (5) acquire loads of edges in cleanup and after a failed CAS; pair with (3), (4), (6), (7).
 *  (6) tag: acquire load then cae loop (volatile); pairs with (1), (5).
 *  (7) unlink CAS on the ancestor's edge (volatile); pairs with (1), (5), (8). It precedes the
 *      walk's loads (9) and the retires; the schemes order retire after it (volatile CAS, then
 *      their own fences before any free).
 *  (8) validating schemes only: acquire re-read of the anchor edge, after protect's full fence; pairs with (6),
 *      (7), the only writes an edge into an internal node receives after its insert.
 *  (9) acquire loads of the removed region's frozen edges in the retire walk; pair with (4), (6).
 * Teardown and the quiescent checks (close, keysInOrder, checkInvariants) use plain loads.
 *
 * Neutralization (Guard, "Neutralization"): seek is the read phase and starts over from the root
 * on Restart. Every write is a write phase that first reserves the seek record's ancestor,
 * successor, parent and leaf and calls beginWrite: insert's CAS (3), remove's flag (4) and
 * cleanup (the tag (6), the unlink (7) and the retires; the removed chain between successor and
 * parent is retired only by the unlink's winner, so no neutralizer frees it meanwhile). A
 * restart in remove after its flag succeeded goes on in cleanup mode, never flags again. get,
 * an insert that finds the key, a remove that finds nothing and size confirm their answer with a
 * poll after reading the leaf. Links are written through the guard (initLink for new nodes,
 * store on an insert's retry, cas for (3), (4), (6), (7)).
 * }</pre>
 *
 * <p>Keys are any {@code long} but {@link #RESERVED_KEY}; values any but {@link #RESERVED}. Close
 * the tree before its domain: operations over a closed domain throw (closing the tree still frees
 * its nodes).
 */
public final class NatarajanMittalTree extends OffHeapStructure {

    /** Protection slots one operation needs: ancestor, successor, parent, leaf, child. */
    public static final int SLOTS = 5;
    /** Bytes per node: the smallest {@code recordBytes} the domain may have. */
    public static final long NODE_BYTES = TreeNodeLayout.SIZE;

    /** Edge mark: the edge's leaf is being deleted. */
    static final long FLAG = 1;
    /** Edge mark: the edge must not change (its node is being removed). */
    static final long TAG = 2;
    static final long MARKS = FLAG | TAG;

    private static final long KEY = TreeNodeLayout.KEY;
    private static final long VALUE = TreeNodeLayout.VALUE;
    private static final long LEFT = TreeNodeLayout.LEFT;
    private static final long RIGHT = TreeNodeLayout.RIGHT;
    private static final long INF = RESERVED_KEY;

    /** Seek record in {@link Guard#locals()}. */
    private static final int ANCESTOR = 0;
    private static final int SUCCESSOR = 1;
    private static final int PARENT = 2;
    private static final int LEAF = 3;
    /** The validated word of the edge parent -> leaf, marks included. */
    private static final int LEAF_EDGE = 4;
    /** The key of the deepest node where the seek went left (INF if none below S). */
    private static final int LEFT_TURN = 5;

    /** "No slot": a bit outside the slot range, so it never blocks a free slot. */
    private static final int NO_SLOT = 31;

    /** Whether seeks re-validate reachability through the anchor (see the implementation notes). */
    final boolean validates;
    /** Sentinel R. */
    private final long root;
    /** Sentinel S, R's left child. */
    private final long top;

    /**
     * A tree over {@code domain}.
     *
     * @throws IllegalArgumentException if the domain's guards have fewer than {@link #SLOTS} slots
     *                                  or its records are smaller than {@link #NODE_BYTES}
     */
    public NatarajanMittalTree(final ReclaimDomain domain) {
        super(domain, SLOTS, NODE_BYTES);
        this.validates = domain.has(Capability.PROTECTION_NEEDS_VALIDATION);
        domain.declareLinks(LEFT, RIGHT);
        try (Guard g = domain.pin()) {
            final long inf0 = sentinel(g, 0, 0);
            final long inf1 = sentinel(g, 0, 0);
            final long inf2 = sentinel(g, 0, 0);
            this.top = sentinel(g, inf0, inf1);
            this.root = sentinel(g, top, inf2);
        }
        Words.releaseFence(); // (0)
    }

    private long sentinel(final Guard g, final long left, final long right) {
        final long n = domain.allocateExclusive();
        init(g, n, INF, 0, left, right);
        return n;
    }

    /** (2) plain stores (the links through the guard): the node is not yet published. */
    private static void init(final Guard g, final long node, final long key, final long value, final long left,
                             final long right) {
        Words.sp(node + KEY, key);
        Words.sp(node + VALUE, value);
        g.initLink(node + LEFT, left);
        g.initLink(node + RIGHT, right);
    }

    /** Reserves the seek record's nodes for the write phase that follows (Guard, "Neutralization"). */
    private static void reserveSeek(final Guard g, final long[] r) {
        g.reserve(ANCESTOR, r[ANCESTOR]);
        g.reserve(SUCCESSOR, r[SUCCESSOR]);
        g.reserve(PARENT, r[PARENT]);
        g.reserve(LEAF, r[LEAF]);
    }

    // ---------------------------------------------------------------- operations

    /** The value mapped to {@code key}, or {@link #RESERVED} if absent. */
    public long get(final long key) {
        checkKey(key);
        final int op = enter();
        try (Guard g = domain.pin()) {
            final long[] r = g.locals();
            while (true) {
                seek(g, key, r);
                final long leaf = r[LEAF];
                final long value = Words.lp(leaf + KEY) == key && (r[LEAF_EDGE] & FLAG) == 0
                        ? Words.lp(leaf + VALUE) : RESERVED;
                try {
                    g.poll();
                    return value;
                } catch (final Restart neutralized) {
                    // the leaf may have been freed before its key and value were read: seek again
                }
            }
        } finally {
            exit(op);
        }
    }

    /** Whether {@code key} is present. */
    public boolean contains(final long key) {
        return get(key) != RESERVED;
    }

    /** Maps {@code key} to {@code value} if absent; returns whether it did. */
    public boolean insert(final long key, final long value) {
        return putIfAbsent(key, value) == RESERVED;
    }

    /**
     * Maps {@code key} to {@code value} if absent. Returns the value already mapped, or
     * {@link #RESERVED} if this call inserted.
     */
    public long putIfAbsent(final long key, final long value) {
        checkKey(key);
        checkValue(value);
        final int op = enter();
        try (Guard g = domain.pin()) {
            final long[] r = g.locals();
            long internal = 0;
            long fresh = 0;
            while (true) {
                try {
                    seek(g, key, r);
                    final long leaf = r[LEAF];
                    final long leafKey = Words.lp(leaf + KEY);
                    if (leafKey == key) {
                        if ((r[LEAF_EDGE] & FLAG) != 0) {
                            cleanup(g, key, r); // logically deleted: help remove it, then insert
                            continue;
                        }
                        final long present = Words.lp(leaf + VALUE);
                        g.poll();
                        if (fresh != 0) { // never published
                            domain.freeExclusive(fresh);
                            domain.freeExclusive(internal);
                        }
                        return present;
                    }
                    final long parent = r[PARENT];
                    final long edge = parent + (key < Words.lp(parent + KEY) ? LEFT : RIGHT);
                    final boolean first = fresh == 0;
                    if (first) {
                        fresh = g.allocate();
                        internal = g.allocate();
                        init(g, fresh, key, value, 0, 0);
                    }
                    final long left = key < leafKey ? fresh : leaf;
                    final long right = key < leafKey ? leaf : fresh;
                    if (first) {
                        init(g, internal, Math.max(key, leafKey), 0, left, right);
                    } else { // unpublished still: a retry relinks it
                        Words.sp(internal + KEY, Math.max(key, leafKey));
                        g.store(internal + LEFT, left);
                        g.store(internal + RIGHT, right);
                    }
                    reserveSeek(g, r);
                    g.beginWrite();
                    final boolean inserted = g.cas(edge, leaf, internal); // (3) volatile; pairs with (1), (5)
                    final long w = inserted ? 0 : Words.la(edge); // (5) acquire; pairs with (3), (4), (6), (7)
                    g.endWrite();
                    if (inserted) {
                        return RESERVED;
                    }
                    if ((w & ~MARKS) == leaf && (w & MARKS) != 0) {
                        cleanup(g, key, r);
                    }
                } catch (final Restart neutralized) {
                    // what the seek found may rest on freed nodes: seek again (fresh and internal are kept)
                }
            }
        } finally {
            exit(op);
        }
    }

    /** Removes {@code key}; returns the value it had, or {@link #RESERVED} if absent. */
    public long remove(final long key) {
        checkKey(key);
        final int op = enter();
        try (Guard g = domain.pin()) {
            final long[] r = g.locals();
            // injection mode
            long victim = 0;
            long value = RESERVED;
            while (victim == 0) {
                try {
                    seek(g, key, r);
                    final long leaf = r[LEAF];
                    if (Words.lp(leaf + KEY) != key) {
                        g.poll();
                        return RESERVED;
                    }
                    final long parent = r[PARENT];
                    final long edge = parent + (key < Words.lp(parent + KEY) ? LEFT : RIGHT);
                    reserveSeek(g, r);
                    g.beginWrite();
                    if (g.cas(edge, leaf, leaf | FLAG)) { // (4) volatile; pairs with (1), (5)
                        victim = leaf;
                        value = Words.lp(leaf + VALUE); // reserved, and protected by the seek
                        g.endWrite();
                        if (cleanup(g, key, r)) {
                            return value;
                        }
                    } else {
                        final long w = Words.la(edge); // (5) acquire; pairs with (3), (4), (6), (7)
                        g.endWrite();
                        if ((w & ~MARKS) == leaf && (w & MARKS) != 0) {
                            cleanup(g, key, r);
                        }
                    }
                } catch (final Restart neutralized) {
                    // before the flag: seek again; after it (cleanup restarted): go on in cleanup mode
                }
            }
            // cleanup mode: until the flagged leaf is gone
            while (true) {
                try {
                    seek(g, key, r);
                    if (r[LEAF] != victim || (r[LEAF_EDGE] & FLAG) == 0) {
                        g.poll();
                        return value;
                    }
                    if (cleanup(g, key, r)) {
                        return value;
                    }
                } catch (final Restart neutralized) {
                    // seek again
                }
            }
        } finally {
            exit(op);
        }
    }

    /**
     * The number of keys, approximately: a walk from the smallest key upwards, one seek per key
     * (O(n log n)), each in its own pinned section. Exact when no other thread modifies the tree;
     * under concurrent modification the count may be any value between the smallest and the
     * largest size the tree had during the walk, or off by the keys that moved across the walk's
     * position. Not linearizable.
     */
    public long size() {
        final int op = enter();
        try {
            long count = 0;
            long k = Long.MIN_VALUE;
            while (true) {
                final long leafKey;
                final long leafEdge;
                final long leftTurn;
                try (Guard g = domain.pin()) {
                    final long[] r = g.locals();
                    seek(g, k, r);
                    leafKey = Words.lp(r[LEAF] + KEY);
                    leafEdge = r[LEAF_EDGE];
                    leftTurn = r[LEFT_TURN];
                    g.poll();
                } catch (final Restart neutralized) {
                    continue; // the leaf may have been freed before its key was read: seek again
                }
                if (leafKey >= k) { // the leaf on k's path is the smallest key >= k
                    if (leafKey == INF) {
                        return count;
                    }
                    if ((leafEdge & FLAG) == 0) {
                        count++;
                    }
                    k = leafKey + 1;
                } else { // the smallest key >= k is the leftmost leaf right of the last left turn
                    if (leftTurn == INF) {
                        return count;
                    }
                    k = leftTurn;
                }
                if (k == INF) {
                    return count;
                }
            }
        } finally {
            exit(op);
        }
    }

    // ---------------------------------------------------------------- the algorithm

    /**
     * The paper's seek: fills {@code r} with ancestor, successor, parent, leaf, the leaf's edge
     * word and the last left-turn key. On return every node in {@code r} is protected.
     */
    private void seek(final Guard g, final long key, final long[] r) {
        while (true) {
            try {
                seekFromRoot(g, key, r);
                return;
            } catch (final Restart neutralized) {
                // the read phase starts over from the root (Guard, "Neutralization")
            }
        }
    }

    /** {@link #seek}'s read phase: starts over from the root when validation (8) fails; throws {@link Restart}. */
    private void seekFromRoot(final Guard g, final long key, final long[] r) {
        restart:
        while (true) {
            long ancestor = root;
            long successor = top;
            long parent = top;
            long anchorEdge = root + LEFT; // ancestor's edge to successor
            long parentEdge = top + LEFT; // parent's edge to leaf
            int slotA = NO_SLOT;
            int slotS = NO_SLOT;
            int slotP = NO_SLOT;
            int slotL = 0;
            long leafEdge = g.protect(slotL, parentEdge); // (1); S.left is never marked
            long leaf = leafEdge & ~MARKS;
            long leftTurn = INF;
            while (Words.lp(leaf + LEFT) != 0) { // plain: leafness is immutable
                final long leafKey = Words.lp(leaf + KEY);
                final boolean left = key < leafKey;
                final long edge = leaf + (left ? LEFT : RIGHT);
                final int slotC = Integer.numberOfTrailingZeros(~(1 << slotA | 1 << slotS | 1 << slotP | 1 << slotL));
                final long childEdge = g.protect(slotC, edge); // (1) acquire; pairs with (3), (7)
                if (left) {
                    leftTurn = leafKey;
                }
                if ((leafEdge & TAG) == 0) { // a clean edge into an internal node: the new anchor
                    ancestor = parent;
                    successor = leaf;
                    anchorEdge = parentEdge;
                    slotA = slotP;
                    slotS = slotL;
                }
                // a child behind a marked edge is known reachable only if the anchor holds
                if (validates && (childEdge & MARKS) != 0
                        && Words.la(anchorEdge) != successor) { // (8) acquire; pairs with (6), (7)
                    continue restart;
                }
                parent = leaf;
                parentEdge = edge;
                slotP = slotL;
                leaf = childEdge & ~MARKS;
                leafEdge = childEdge;
                slotL = slotC;
            }
            r[ANCESTOR] = ancestor;
            r[SUCCESSOR] = successor;
            r[PARENT] = parent;
            r[LEAF] = leaf;
            r[LEAF_EDGE] = leafEdge;
            r[LEFT_TURN] = leftTurn;
            return;
        }
    }

    /**
     * The paper's cleanup for the seek record in {@code r}: tags the sibling of the flagged leaf
     * under parent and swings the ancestor's edge from successor to the sibling. On success retires
     * the removed region. Returns whether this call's unlink CAS succeeded. A write phase of its
     * own: it reserves the seek record and may throw {@link Restart} before writing anything.
     */
    private boolean cleanup(final Guard g, final long key, final long[] r) {
        final long ancestor = r[ANCESTOR];
        final long successor = r[SUCCESSOR];
        final long parent = r[PARENT];
        reserveSeek(g, r);
        g.beginWrite();
        final boolean unlinked = unlink(g, key, ancestor, successor, parent);
        g.endWrite();
        return unlinked;
    }

    /** Cleanup's write phase: the tag (6), the unlink (7) and, on success, the retires. */
    private static boolean unlink(final Guard g, final long key, final long ancestor, final long successor,
                                  final long parent) {
        final long successorEdge = ancestor + (key < Words.lp(ancestor + KEY) ? LEFT : RIGHT);
        long childEdge;
        long siblingEdge;
        if (key < Words.lp(parent + KEY)) {
            childEdge = parent + LEFT;
            siblingEdge = parent + RIGHT;
        } else {
            childEdge = parent + RIGHT;
            siblingEdge = parent + LEFT;
        }
        if ((Words.la(childEdge) & FLAG) == 0) { // (5) acquire; pairs with (4)
            // the key's edge is only tagged: the flagged leaf is on the other side
            final long t = childEdge;
            childEdge = siblingEdge;
            siblingEdge = t;
        }
        final long sibling = tag(g, siblingEdge);
        if (!g.cas(successorEdge, successor, sibling & ~TAG)) { // (7) volatile; pairs with (1), (5), (8)
            return false;
        }
        retireRemoved(g, key, successor, parent, childEdge);
        return true;
    }

    /** Sets TAG on the edge at {@code edge} (a fetch-or); returns the edge word, tagged. */
    private static long tag(final Guard g, final long edge) {
        long w = Words.la(edge); // (6) acquire; pairs with (3), (4)
        while ((w & TAG) == 0) {
            if (g.cas(edge, w, w | TAG)) { // (6) volatile; pairs with (1), (5)
                return w | TAG;
            }
            w = Words.la(edge); // (6)
        }
        return w;
    }

    /**
     * Retires what the unlink CAS removed: successor .. parent and their flagged leaves;
     * {@code victimEdge} is the parent's edge that was not kept.
     */
    private static void retireRemoved(final Guard g, final long key, final long successor, final long parent,
                                      final long victimEdge) {
        long node = successor;
        while (node != parent) {
            final boolean left = key < Words.lp(node + KEY);
            final long path = Words.la(node + (left ? LEFT : RIGHT)); // (9) acquire; frozen
            final long flagged = Words.la(node + (left ? RIGHT : LEFT)); // (9)
            assert (path & TAG) != 0 && (flagged & FLAG) != 0 : "removed chain node with unmarked edges";
            g.retire(flagged & ~MARKS);
            g.retire(node);
            node = path & ~MARKS;
        }
        final long victim = Words.la(victimEdge); // (9)
        assert (victim & FLAG) != 0 : "removed parent's victim edge not flagged";
        g.retire(victim & ~MARKS);
        g.retire(parent);
    }

    // ---------------------------------------------------------------- teardown and checks

    @Override
    void freeNodes() {
        long[] stack = new long[64];
        int n = 0;
        stack[n++] = root;
        while (n > 0) {
            final long node = stack[--n];
            final long left = Words.lp(node + LEFT) & ~MARKS;
            final long right = Words.lp(node + RIGHT) & ~MARKS;
            if (left != 0) {
                if (n + 2 > stack.length) {
                    stack = Arrays.copyOf(stack, 2 * stack.length);
                }
                stack[n++] = left;
                stack[n++] = right;
            }
            freeNode(node);
        }
    }

    /**
     * Test hook: a remover of {@code key} that stalls right after its flagging CAS (and, if
     * {@code tagSibling}, after tagging the sibling edge, the first step of cleanup), so that tests
     * can build flagged leaves and chains of tagged edges deterministically and watch other
     * operations help. Returns whether it flagged the key's leaf.
     */
    boolean stalledRemove(final long key, final boolean tagSibling) {
        checkKey(key);
        final int op = enter();
        try (Guard g = domain.pin()) {
            final long[] r = g.locals();
            while (true) {
                seek(g, key, r);
                final long leaf = r[LEAF];
                final long parent = r[PARENT];
                try {
                    if (Words.lp(leaf + KEY) != key || (r[LEAF_EDGE] & MARKS) != 0) {
                        g.poll();
                        return false;
                    }
                    reserveSeek(g, r);
                    g.beginWrite();
                } catch (final Restart neutralized) {
                    continue;
                }
                final boolean left = key < Words.lp(parent + KEY);
                final boolean flagged = g.cas(parent + (left ? LEFT : RIGHT), leaf, leaf | FLAG); // (4)
                if (flagged && tagSibling) {
                    tag(g, parent + (left ? RIGHT : LEFT));
                }
                g.endWrite();
                return flagged;
            }
        } finally {
            exit(op);
        }
    }

    /**
     * The user keys in order, by an in-order walk; only while no other thread modifies the tree.
     */
    long[] keysInOrder() {
        final long[][] keys = {new long[16]};
        final int[] count = {0};
        walk((node, lo, hi, edge) -> {
            final long k = Words.lp(node + KEY);
            if (Words.lp(node + LEFT) == 0 && k != INF) {
                if (count[0] == keys[0].length) {
                    keys[0] = Arrays.copyOf(keys[0], 2 * count[0]);
                }
                keys[0][count[0]++] = k;
            }
        });
        return Arrays.copyOf(keys[0], count[0]);
    }

    /**
     * Checks the structure while no other thread modifies the tree: the sentinels, every node
     * having zero or two children, routing (every leaf within the bounds of its path), strictly
     * ascending leaf keys, exactly one inf leaf (inf0, the rightmost) under S, and no marked edge
     * reachable. Returns the problems found, empty if none.
     */
    List<String> checkInvariants() {
        final List<String> problems = new ArrayList<>();
        final long inf2 = Words.lp(root + RIGHT);
        final long inf1 = Words.lp(top + RIGHT);
        if (Words.lp(root + KEY) != INF || Words.lp(top + KEY) != INF || Words.lp(root + LEFT) != top
                || Words.lp(inf2 + KEY) != INF || Words.lp(inf2 + LEFT) != 0
                || Words.lp(inf1 + KEY) != INF || Words.lp(inf1 + LEFT) != 0) {
            problems.add("sentinel structure broken");
        }
        final long[] previous = {Long.MIN_VALUE};
        final int[] leaves = {0};
        final int[] infLeaves = {0};
        walk((node, lo, hi, edge) -> {
            if ((edge & MARKS) != 0) {
                problems.add(String.format(Locale.ROOT, "reachable marked edge (bits %d) to node 0x%x, key %d",
                        edge & MARKS, node, Words.lp(node + KEY)));
            }
            final long k = Words.lp(node + KEY);
            final boolean leaf = Words.lp(node + LEFT) == 0;
            if (leaf != (Words.lp(node + RIGHT) == 0)) {
                problems.add("node with one child: key " + k);
            }
            if (!leaf) {
                return;
            }
            if (k < lo || (k >= hi && hi != INF)) {
                problems.add(String.format(Locale.ROOT, "leaf %d outside its routing bounds [%d, %d)", k, lo, hi));
            }
            if (infLeaves[0] > 0) {
                problems.add(String.format(Locale.ROOT, "leaf %d after the inf0 sentinel", k));
            }
            if (k == INF) {
                infLeaves[0]++;
            } else {
                if (leaves[0] > 0 && k <= previous[0]) {
                    problems.add(String.format(Locale.ROOT, "leaf keys not ascending: %d after %d", k, previous[0]));
                }
                leaves[0]++;
                previous[0] = k;
            }
        });
        if (infLeaves[0] != 1) {
            problems.add("expected exactly one inf0 leaf under S, found " + infLeaves[0]);
        }
        return problems;
    }

    private interface Visitor {
        /** {@code node} reached through edge word {@code edge}; its leaves must lie in [lo, hi). */
        void visit(long node, long lo, long hi, long edge);
    }

    /** In-order walk of S's left subtree (the user part), plain loads: quiescent use only. */
    private void walk(final Visitor v) {
        walk(Words.lp(top + LEFT), Long.MIN_VALUE, INF, v);
    }

    private static void walk(final long edge, final long lo, final long hi, final Visitor v) {
        // iterative in-order walk: (edge, lo, hi) triples on an explicit stack
        long[] stack = new long[3 * 64];
        int n = 0;
        long e = edge;
        long l = lo;
        long h = hi;
        while (true) {
            while (e != 0) {
                final long node = e & ~MARKS;
                if (Words.lp(node + LEFT) == 0) { // leaf
                    v.visit(node, l, h, e);
                    e = 0;
                    break;
                }
                v.visit(node, l, h, e);
                if (n + 3 > stack.length) {
                    stack = Arrays.copyOf(stack, 2 * stack.length);
                }
                final long k = Words.lp(node + KEY);
                stack[n++] = Words.lp(node + RIGHT);
                stack[n++] = k;
                stack[n++] = h;
                e = Words.lp(node + LEFT);
                h = k;
            }
            if (n == 0) {
                return;
            }
            h = stack[--n];
            l = stack[--n];
            e = stack[--n];
        }
    }
}
