package dev.limbo.structures;

import dev.limbo.core.Participants;
import dev.limbo.core.Words;
import dev.limbo.reclaim.rc.Cdrc;
import dev.limbo.reclaim.rc.RcType;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.WeakHashMap;

/**
 * An off-heap lock-free ordered {@code long -> long} map: the Natarajan-Mittal external binary
 * search tree (Natarajan and Mittal, "Fast concurrent lock-free binary search trees", PPoPP 2014)
 * written with counted pointers ({@link Cdrc}, Anderson, Blelloch and Wei, PLDI 2021): its nodes
 * are counted objects that free themselves when the last reference to them goes, so the tree
 * retires nothing. The same operations and semantics as {@link NatarajanMittalTree}.
 *
 * <pre>{@code
 * try (Cdrc rc = new Cdrc(allocator);
 *      CdrcNatarajanMittalTree tree = new CdrcNatarajanMittalTree(rc, true)) {
 *     tree.insert(7, 70);
 *     long v = tree.get(7);            // 70, or RESERVED when absent
 * }
 * }</pre>
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm: the paper's §3 and Figures 3-5 (seek, search, insert, delete, cleanup), exactly as in
 * NatarajanMittalTree (its implementation notes describe the external tree, the FLAG and TAG marks
 * on child edges, the seek record ancestor / successor / parent / leaf, the sentinels R, S, inf0,
 * inf1, inf2 with key Long.MAX_VALUE, and the deviation that get and insert look at the leaf edge's
 * FLAG). What changes is memory management, after the CDRC paper's §5 (Figure 2) and §7 (digest
 * §4.5, §5):
 *  - A node is a counted object of type NODE: the 16-byte Cdrc header, then TreeNodeLayout's key,
 *    value, left, right; left and right are its counted fields. Every child edge holds one count
 *    on its child; the tree holds one count on R.
 *  - seek reads each child edge with rc.snapshot (snapshots = true: no count change, an
 *    announcement slot protects the node) or rc.load (snapshots = false, the benchmarks' cdrc-rc:
 *    a counted reference per visited node). It holds one protection per distinct node of the seek
 *    record plus the child being read: at most SNAPSHOTS = 5 at once (digest §4.5), below the 7
 *    snapshot slots, so nothing is evicted. A node leaving the record is released at once. R and S
 *    are never removed (R is held by the tree, S by R's left edge, which never changes) and take
 *    no protection.
 *  - insert: casMove (3) the parent's edge from the clean leaf to a new internal node whose counted
 *    fields hold the new leaf (its allocation count moved in) and a copy of the leaf's reference
 *    (rc.retain while the leaf is protected). On success the edge's reference to the leaf is
 *    retired by casMove and the internal node's own count moved into the edge.
 *  - delete: casMark (4) flags the leaf's edge; cleanup tags the sibling edge with casMark (6) and
 *    swings the ancestor's edge from successor to the sibling with rc.cas (7) (a copy: the parent's
 *    frozen sibling edge keeps its reference until the parent dies). cas retires successor; when
 *    its count drops to zero it dies and retires its children, so the whole chain successor ..
 *    parent with its flagged leaves dies transitively, a deferred decrement at a time: no retire
 *    walk, and no way to forget a node of the chain (the NM bug the CDRC paper's §8 lists).
 * A thread's scratch seek record is a long[] per participant id, shared by all trees: operations never nest.
 *
 * Invariants: those of NatarajanMittalTree (external BST, sentinels, FLAG only on leaf edges, TAG
 * only on a node whose other edge is flagged, marks never cleared, disjoint removed regions), plus:
 *  - Counts (Cdrc, Theorem 1): the count of a reachable node is 1 (its parent's edge) plus the
 *    delayed retires of its references and the counts operations hold; R's is the tree's 1. After
 *    quiescence and a flush every reachable node's count is exactly 1 (checkCounts).
 *  - The record holds exactly one protection (a snapshot, or a count in cdrc-rc mode) for each
 *    distinct node among ancestor, successor, parent, leaf and the child being read, R and S
 *    excepted; between operations it is empty (every path, exceptions included, ends with
 *    releaseRecord in a finally block).
 *  - A protected node is not dead: its references from edges are dropped only through retires,
 *    which the protection holds back (a snapshot), or it holds a count itself (cdrc-rc). So its
 *    child edges still hold their references, and a child read through any edge of it, marked or
 *    not, is alive when protected: the "HP + marking" problem of NatarajanMittalTree (a child of a
 *    removed node may already be retired) does not arise, and seeks never restart.
 *  - An unpublished internal node (an insert between its attempts) holds its two children's
 *    counts, which are the inserting thread's own: a retry releases the old leaf's copy eagerly
 *    (nobody else can read that field), and an insert that ends without publishing releases the
 *    node, whose death releases both.
 *
 * Linearization points: those of NatarajanMittalTree: insert / putIfAbsent that inserts, the casMove
 * (3); remove that returns a value, its flagging casMark (4); get, contains and the operations that
 * find the key present or absent, the read (1) of the final leaf edge in seek; size is not
 * linearizable (a sequence of seeks).
 *
 * Progress: lock-free, as NatarajanMittalTree: every retry follows another thread's successful CAS
 * on an edge the operation depends on, and an operation that meets a marked edge it must change
 * completes the pending cleanup itself. Snapshot and load are lock-free (acquire retries while the
 * edge changes); the count operations are wait-free up to the allocator and amortized ejects.
 *
 * Memory ordering (each non-plain access carries its number):
 *  (0) construction: plain stores of the sentinels, then a release fence; threads receive the tree
 *      through a happens-before edge, as any object.
 *  (1) rc.snapshot / rc.load of a child edge: acquire-retire's announce, full fence and acquire
 *      re-read (Cdrc's (1)-(6)); pairs with (3) and (7), which published the node, so its key,
 *      value and leafness (immutable once published, read plain) are visible.
 *  (2) plain stores initializing a new node (key, value, children whose counts are the inserter's
 *      own), before (3); the header was written by rc.allocate.
 *  (3) casMove of the parent's edge (volatile CAS); publishes the new nodes; pairs with (1), (5).
 *  (4) flagging casMark (volatile CAS); pairs with (1), (5).
 *  (5) acquire loads of edges after a failed CAS and in cleanup; pair with (3), (4), (6), (7).
 *  (6) tag: acquire load, then a casMark loop (volatile), a fetch-or: an ABA of the edge word
 *      between load and CAS is harmless, the CAS sets TAG on the word the edge holds then.
 *  (7) rc.cas of the ancestor's edge (volatile CAS; the sibling announced before it, Cdrc's rule);
 *      pairs with (1), (5). It precedes the retire of successor, hence every free of the chain.
 * Teardown and the quiescent checks use plain loads.
 *
 * Reclamation: automatic. A node dies when its count reaches zero (Cdrc), which happens only once
 * it is unreachable and no thread protects it: the unlink CAS (7) retires successor, and the
 * chain follows transitively; an insert's replaced leaf edge reference is retired by (3) while the
 * new internal node holds another; close() drops the tree's count on R and flushes, so every
 * node still reachable dies on the closing thread; what other threads' retires still hold goes at
 * their next ejects or at Cdrc.close(). Cycles cannot form (a tree).
 *
 * ABA: every CAS that swings an edge expects a node the operation protects (the leaf for (3) and
 * (4), successor for (7)), so it cannot be freed and its address reused before the CAS. remove's
 * cleanup mode compares its victim, no longer protected, with later seeks' leaves: as in
 * NatarajanMittalTree it also requires the edge to be flagged, so a reused address is either
 * another leaf (this one is gone) or another remover's, whose helping is harmless.
 * }</pre>
 *
 * <p>Keys are any {@code long} but {@link #RESERVED_KEY}; values any but {@link #RESERVED}. Close
 * the tree before its {@link Cdrc} domain.
 */
public final class CdrcNatarajanMittalTree extends StructureLifecycle {

    /** Snapshots (or counted references) one operation holds at most: the seek record's four nodes and the child being read. */
    public static final int SNAPSHOTS = 5;
    /** Bytes of a node: the counted-object header and {@link TreeNodeLayout}. */
    public static final long NODE_BYTES = Cdrc.HEADER + TreeNodeLayout.SIZE;

    static final long KEY = Cdrc.HEADER + TreeNodeLayout.KEY;
    static final long VALUE = Cdrc.HEADER + TreeNodeLayout.VALUE;
    static final long LEFT = Cdrc.HEADER + TreeNodeLayout.LEFT;
    static final long RIGHT = Cdrc.HEADER + TreeNodeLayout.RIGHT;

    /** The node type: internal nodes and leaves, with two counted child edges. */
    public static final RcType NODE = new RcType("natarajan-mittal-node", NODE_BYTES, LEFT, RIGHT);

    /** Edge mark: the edge's leaf is being deleted. */
    static final long FLAG = NatarajanMittalTree.FLAG;
    /** Edge mark: the edge must not change (its node is being removed). */
    static final long TAG = NatarajanMittalTree.TAG;
    static final long MARKS = FLAG | TAG;
    private static final long INF = RESERVED_KEY;

    /** Seek record: the protected nodes first (released by {@link #releaseRecord}), then plain words. */
    private static final int ANCESTOR = 0;
    private static final int SUCCESSOR = 1;
    private static final int PARENT = 2;
    private static final int LEAF = 3;
    /** The child being read during seek; 0 otherwise. */
    private static final int CHILD = 4;
    /** The word of the edge parent -> leaf, marks included. */
    private static final int LEAF_EDGE = 5;
    /** The key of the deepest node where the seek went left (INF if none below S). */
    private static final int LEFT_TURN = 6;

    private static final long[][] RECORDS = new long[Participants.CAPACITY][];
    /** The node type's id in each domain, registered once per domain. */
    private static final Map<Cdrc, Integer> TYPE_IDS = new WeakHashMap<>();

    private final Cdrc rc;
    private final boolean snapshots;
    private final int type;
    /** Sentinel R; the tree owns one count on it. */
    private final long root;
    /** Sentinel S, R's left child. */
    private final long top;

    /**
     * A tree over {@code rc}.
     *
     * @param rc        the domain of the nodes
     * @param snapshots whether seeks protect nodes with snapshots (CDRC) or with counted loads
     *                  (the benchmarks' {@code cdrc-rc})
     * @throws NullPointerException  if {@code rc} is null
     * @throws IllegalStateException if {@code rc} is closed
     */
    public CdrcNatarajanMittalTree(final Cdrc rc, final boolean snapshots) {
        this.rc = Objects.requireNonNull(rc, "rc");
        this.snapshots = snapshots;
        this.type = typeIn(rc);
        final long inf0 = node(INF, 0, 0);
        final long inf1 = node(INF, 0, 0);
        final long inf2 = node(INF, 0, 0);
        this.top = node(INF, inf0, inf1);
        this.root = node(INF, top, inf2);
        Words.releaseFence(); // (0)
    }

    private static int typeIn(final Cdrc rc) {
        synchronized (TYPE_IDS) {
            return TYPE_IDS.computeIfAbsent(rc, d -> d.register(NODE));
        }
    }

    /** A new node owned by the caller; its children's counts move in. (2) plain stores: unpublished. */
    private long node(final long key, final long left, final long right) {
        final long n = rc.allocate(type);
        Words.sp(n + KEY, key);
        Words.sp(n + LEFT, left);
        Words.sp(n + RIGHT, right);
        return n;
    }

    /** The domain of the nodes. */
    public Cdrc rc() {
        return rc;
    }

    /** Whether seeks use snapshots (true) or counted loads (false). */
    public boolean snapshots() {
        return snapshots;
    }

    // ---------------------------------------------------------------- protection

    /** Protects the child at {@code edge} (1); returns the edge word, marks kept. */
    /** The calling thread's seek record (an operation never nests another). */
    private static long[] record(final Cdrc.Local local) {
        long[] r = RECORDS[local.id()];
        if (r == null) {
            r = new long[7];
            RECORDS[local.id()] = r;
        }
        return r;
    }

    private long read(final Cdrc.Local local, final long edge) {
        return snapshots ? rc.snapshot(local, edge) : rc.load(local, edge);
    }

    /** Ends the protection of {@code node} (unmarked), unless it is R, S or 0. */
    private void drop(final Cdrc.Local local, final long node) {
        if (node == root || node == top || node == 0) {
            return;
        }
        if (snapshots) {
            rc.releaseSnapshot(local, node);
        } else {
            rc.release(local, node);
        }
    }

    /** Releases every node the record protects, each distinct node once, and empties it. */
    private void releaseRecord(final Cdrc.Local local, final long[] r) {
        final long a = r[ANCESTOR];
        final long s = r[SUCCESSOR];
        final long p = r[PARENT];
        final long l = r[LEAF];
        final long c = r[CHILD];
        Arrays.fill(r, ANCESTOR, CHILD + 1, 0);
        drop(local, a);
        if (s != a) {
            drop(local, s);
        }
        if (p != a && p != s) {
            drop(local, p);
        }
        if (l != a && l != s && l != p) {
            drop(local, l);
        }
        if (c != a && c != s && c != p && c != l) {
            drop(local, c);
        }
    }

    // ---------------------------------------------------------------- operations

    /** The value mapped to {@code key}, or {@link #RESERVED} if absent. */
    public long get(final long key) {
        checkKey(key);
        final int op = enter();
        final Cdrc.Local local = rc.local();
        final long[] r = record(local);
        try {
            seek(local, key, r);
            final long leaf = r[LEAF];
            return Words.lp(leaf + KEY) == key && (r[LEAF_EDGE] & FLAG) == 0 ? Words.lp(leaf + VALUE) : RESERVED;
        } finally {
            releaseRecord(local, r);
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
        final Cdrc.Local local = rc.local();
        final long[] r = record(local);
        long internal = 0; // unpublished, owned: its fields hold fresh and a copy of linked
        long fresh = 0;
        long linked = 0;
        try {
            while (true) {
                seek(local, key, r);
                final long leaf = r[LEAF];
                final long leafKey = Words.lp(leaf + KEY);
                if (leafKey == key) {
                    if ((r[LEAF_EDGE] & FLAG) != 0) {
                        cleanup(key, r); // logically deleted: help remove it, then insert
                        continue;
                    }
                    return Words.lp(leaf + VALUE);
                }
                final long parent = r[PARENT];
                final long edge = parent + (key < Words.lp(parent + KEY) ? LEFT : RIGHT);
                if (internal == 0) {
                    internal = rc.allocate(type);
                    fresh = node(key, 0, 0);
                    Words.sp(fresh + VALUE, value); // (2)
                }
                final boolean freshLeft = key < leafKey;
                Words.sp(internal + KEY, Math.max(key, leafKey)); // (2)
                Words.sp(internal + (freshLeft ? LEFT : RIGHT), fresh);
                Words.sp(internal + (freshLeft ? RIGHT : LEFT), rc.retain(leaf));
                final long old = linked;
                linked = leaf;
                rc.release(old); // the previous attempt's copy: only this thread reads the unpublished field
                if (rc.casMove(edge, leaf, internal)) { // (3) volatile; pairs with (1), (5)
                    internal = 0;
                    return RESERVED;
                }
                final long w = Words.la(edge); // (5) acquire; pairs with (3), (4), (6), (7)
                if ((w & ~MARKS) == leaf && (w & MARKS) != 0) {
                    cleanup(key, r);
                }
            }
        } finally {
            releaseRecord(local, r);
            rc.release(internal); // never published: it dies and releases its children
            exit(op);
        }
    }

    /** Removes {@code key}; returns the value it had, or {@link #RESERVED} if absent. */
    public long remove(final long key) {
        checkKey(key);
        final int op = enter();
        final Cdrc.Local local = rc.local();
        final long[] r = record(local);
        try {
            // injection mode
            long victim = 0;
            long value = RESERVED;
            while (victim == 0) {
                seek(local, key, r);
                final long leaf = r[LEAF];
                if (Words.lp(leaf + KEY) != key) {
                    return RESERVED;
                }
                final long parent = r[PARENT];
                final long edge = parent + (key < Words.lp(parent + KEY) ? LEFT : RIGHT);
                if (rc.casMark(edge, leaf, leaf | FLAG)) { // (4) volatile; pairs with (1), (5)
                    victim = leaf;
                    value = Words.lp(leaf + VALUE); // protected by the seek
                    if (cleanup(key, r)) {
                        return value;
                    }
                } else {
                    final long w = Words.la(edge); // (5) acquire; pairs with (3), (4), (6), (7)
                    if ((w & ~MARKS) == leaf && (w & MARKS) != 0) {
                        cleanup(key, r);
                    }
                }
            }
            // cleanup mode: until the flagged leaf is gone
            while (true) {
                seek(local, key, r);
                if (r[LEAF] != victim || (r[LEAF_EDGE] & FLAG) == 0) {
                    return value;
                }
                if (cleanup(key, r)) {
                    return value;
                }
            }
        } finally {
            releaseRecord(local, r);
            exit(op);
        }
    }

    /**
     * The number of keys, approximately: a walk from the smallest key upwards, one seek per key
     * (O(n log n)). Exact when no other thread modifies the tree; under concurrent modification
     * the count may be any value between the smallest and the largest size the tree had during the
     * walk, or off by the keys that moved across the walk's position. Not linearizable.
     */
    public long size() {
        final int op = enter();
        final Cdrc.Local local = rc.local();
        final long[] r = record(local);
        try {
            long count = 0;
            long k = Long.MIN_VALUE;
            while (true) {
                seek(local, k, r);
                final long leafKey = Words.lp(r[LEAF] + KEY);
                if (leafKey >= k) { // the leaf on k's path is the smallest key >= k
                    if (leafKey == INF) {
                        return count;
                    }
                    if ((r[LEAF_EDGE] & FLAG) == 0) {
                        count++;
                    }
                    k = leafKey + 1;
                } else { // the smallest key >= k is the leftmost leaf right of the last left turn
                    if (r[LEFT_TURN] == INF) {
                        return count;
                    }
                    k = r[LEFT_TURN];
                }
                if (k == INF) {
                    return count;
                }
            }
        } finally {
            releaseRecord(local, r);
            exit(op);
        }
    }

    // ---------------------------------------------------------------- the algorithm

    /**
     * The paper's seek: releases what {@code r} protects, then fills it with ancestor, successor,
     * parent, leaf (each distinct node protected once, R and S never), the leaf's edge word and
     * the last left-turn key. {@code r} stays exact at every step, so a throw leaves nothing that
     * {@link #releaseRecord} misses.
     */
    private void seek(final Cdrc.Local local, final long key, final long[] r) {
        releaseRecord(local, r);
        r[ANCESTOR] = root;
        r[SUCCESSOR] = top;
        r[PARENT] = top;
        long leafEdge = read(local, top + LEFT); // (1); S.left is never marked
        long leaf = leafEdge & ~MARKS;
        r[LEAF] = leaf;
        long leftTurn = INF;
        while (Words.lp(leaf + LEFT) != 0) { // plain: leafness is immutable
            final long leafKey = Words.lp(leaf + KEY);
            final boolean left = key < leafKey;
            final long childEdge = read(local, leaf + (left ? LEFT : RIGHT)); // (1)
            r[CHILD] = childEdge & ~MARKS;
            if (left) {
                leftTurn = leafKey;
            }
            final long parent = r[PARENT];
            if ((leafEdge & TAG) == 0) { // a clean edge into an internal node: the new anchor
                final long ancestor = r[ANCESTOR];
                final long successor = r[SUCCESSOR];
                r[ANCESTOR] = parent;
                r[SUCCESSOR] = leaf;
                r[PARENT] = leaf;
                drop(local, ancestor); // above parent
                if (successor != parent) {
                    drop(local, successor);
                }
            } else {
                r[PARENT] = leaf;
                if (parent != r[SUCCESSOR]) { // never the ancestor, which is above successor
                    drop(local, parent);
                }
            }
            leaf = childEdge & ~MARKS;
            leafEdge = childEdge;
            r[LEAF] = leaf;
            r[CHILD] = 0;
        }
        r[LEAF_EDGE] = leafEdge;
        r[LEFT_TURN] = leftTurn;
    }

    /**
     * The paper's cleanup for the seek record in {@code r}: tags the sibling of the flagged leaf
     * under parent and swings the ancestor's edge from successor to the sibling; the removed chain
     * dies by itself. Returns whether this call's unlink CAS succeeded.
     */
    private boolean cleanup(final long key, final long[] r) {
        final long ancestor = r[ANCESTOR];
        final long successor = r[SUCCESSOR];
        final long parent = r[PARENT];
        final long successorEdge = ancestor + (key < Words.lp(ancestor + KEY) ? LEFT : RIGHT);
        final boolean left = key < Words.lp(parent + KEY);
        final long childEdge = parent + (left ? LEFT : RIGHT);
        // the key's edge is flagged, or only tagged: then the flagged leaf is on the other side
        final long siblingEdge = (Words.la(childEdge) & FLAG) != 0 // (5) acquire; pairs with (4)
                ? parent + (left ? RIGHT : LEFT) : childEdge;
        // the sibling is alive: parent is protected and its tagged edge keeps its reference
        final long sibling = tag(siblingEdge);
        return rc.cas(successorEdge, successor, sibling & ~TAG); // (7) volatile; pairs with (1), (5)
    }

    /** Sets TAG on the edge at {@code edge} (a fetch-or); returns the edge word, tagged. */
    private long tag(final long edge) {
        long w = Words.la(edge); // (6) acquire; pairs with (3), (4)
        while ((w & TAG) == 0) {
            if (rc.casMark(edge, w, w | TAG)) { // (6) volatile; pairs with (1), (5)
                return w | TAG;
            }
            w = Words.la(edge); // (6)
        }
        return w;
    }

    // ---------------------------------------------------------------- teardown and checks

    /** Drops the tree's count on R: every node still reachable dies, and this thread's flush frees them. */
    @Override
    void freeNodes() {
        rc.release(root);
        rc.flush();
    }

    /**
     * Test hook: a remover of {@code key} that stalls right after its flagging CAS (and, if
     * {@code tagSibling}, after tagging the sibling edge, the first step of cleanup). Returns
     * whether it flagged the key's leaf.
     */
    boolean stalledRemove(final long key, final boolean tagSibling) {
        checkKey(key);
        final int op = enter();
        final Cdrc.Local local = rc.local();
        final long[] r = record(local);
        try {
            seek(local, key, r);
            final long leaf = r[LEAF];
            final long parent = r[PARENT];
            if (Words.lp(leaf + KEY) != key || (r[LEAF_EDGE] & MARKS) != 0) {
                return false;
            }
            final boolean left = key < Words.lp(parent + KEY);
            final boolean flagged = rc.casMark(parent + (left ? LEFT : RIGHT), leaf, leaf | FLAG); // (4)
            if (flagged && tagSibling) {
                tag(parent + (left ? RIGHT : LEFT));
            }
            return flagged;
        } finally {
            releaseRecord(local, r);
            exit(op);
        }
    }

    /** The user keys in order, by an in-order walk; only while no other thread modifies the tree. */
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
     * Checks the structure while no other thread modifies the tree, as
     * {@code NatarajanMittalTree.checkInvariants}: the sentinels, zero or two children per node,
     * routing, ascending leaf keys, exactly one inf leaf under S, no marked edge reachable.
     * Returns the problems found, empty if none.
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

    /**
     * Checks the counts while no other thread uses the domain, after every delayed decrement was
     * applied (a flush after the other threads ended): R, S and every node under S have count 1,
     * their one reference (the tree's, or a parent's edge). Returns the problems found.
     */
    List<String> checkCounts() {
        final List<String> problems = new ArrayList<>();
        countIs(root, problems);
        countIs(top, problems);
        countIs(Words.lp(root + RIGHT), problems);
        countIs(Words.lp(top + RIGHT), problems);
        walk((node, lo, hi, edge) -> countIs(node, problems));
        return problems;
    }

    private void countIs(final long node, final List<String> problems) {
        final long c = rc.count(node);
        if (c != 1) {
            problems.add(String.format(Locale.ROOT, "node 0x%x, key %d: count %d, expected 1",
                    node, Words.lp(node + KEY), c));
        }
    }

    private interface Visitor {
        /** {@code node} reached through edge word {@code edge}; its leaves must lie in [lo, hi). */
        void visit(long node, long lo, long hi, long edge);
    }

    /** In-order walk of S's left subtree (the user part), plain loads: quiescent use only. */
    private void walk(final Visitor v) {
        long[] stack = new long[3 * 64];
        int n = 0;
        long e = Words.lp(top + LEFT);
        long l = Long.MIN_VALUE;
        long h = INF;
        while (true) {
            while (e != 0) {
                final long node = e & ~MARKS;
                v.visit(node, l, h, e);
                if (Words.lp(node + LEFT) == 0) { // leaf
                    break;
                }
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
