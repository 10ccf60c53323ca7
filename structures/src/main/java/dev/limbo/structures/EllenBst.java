package dev.limbo.structures;

import dev.limbo.core.Words;
import dev.limbo.reclaim.Capability;
import dev.limbo.reclaim.Guard;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Restart;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * An off-heap lock-free ordered {@code long -> long} map: the non-blocking external binary search
 * tree of Ellen, Fatourou, Ruppert and van Breugel ("Non-blocking binary search trees", PODC 2010),
 * with its info records off-heap and memory reclamation of nodes and info records through a
 * {@link ReclaimDomain}.
 *
 * <pre>{@code
 * ReclaimDomain domain = ReclaimDomain.builder(Scheme.DEBRA).allocator(allocator)
 *         .recordBytes(EllenBst.RECORD_BYTES).slots(EllenBst.SLOTS).build();
 * try (EllenBst tree = new EllenBst(domain)) {
 *     tree.insert(7, 70);
 *     long v = tree.get(7);            // 70, or RESERVED when absent
 * }
 *
 * Neutralization (Guard, "Neutralization"): search is the read phase and starts over from the
 * root on Restart. Everything after it that writes (helping, the info holds (9), the flag CASes
 * (4) and (5) and what follows them) runs in one write phase, begun by reserving gp, p, l and the
 * info records of their update words; beginWrite may throw Restart only before the first write,
 * and the operation then searches again. A validating search's help of a marked node is a write
 * phase of its own. get, an insert that finds its key, a remove that finds nothing and size
 * confirm their answer with a poll. The helpers' reads of info records and of the nodes they name
 * are covered by the section's protections (epoch schemes) or the helper's own protects (hp); a
 * scheme that frees on neutralization must also honour the reservations of records that a
 * helper reaches through an info record, which the structure does not reserve: state this when
 * such a scheme arrives (NBR's own papers leave helping structures out for the same reason).
 * Links are written through the guard; the tree declares an empty set of links
 * (ReclaimDomain.declareLinks), since its records have two layouts, so it cannot run under a
 * counting scheme nor share its domain with a structure that declares links.
 * }</pre>
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm and source: the paper's algorithm section (§3) and its pseudocode (Search, Find,
 * Insert, HelpInsert, Delete, HelpDelete, HelpMarked, Help, CAS-Child); the correctness argument
 * cited below (the search-path lemma, the flag/mark discipline) is its §4, with the full proof in
 * the authors' technical report. Implemented from the published pseudocode. An external BST:
 * keys live in leaves, internal nodes only route (key < node.key: left, else right), every
 * internal node has two children. Each internal node has an update word: an info record pointer with a state in its
 * two low bits, CLEAN, IFLAG, DFLAG or MARK (the paper's Update field, one CAS-able word here).
 *  - insert(k): search k's leaf l and parent p; if p.update is not CLEAN, help and retry. Else build
 *    a new leaf k, a copy of l, and an internal node (key max(k, l.key)) over the two, and an IInfo
 *    (p, l, newInternal); iflag CAS p.update from the CLEAN word read by the search to <IFLAG, I>;
 *    then HelpInsert: ichild CAS p's child l -> newInternal, iunflag CAS <IFLAG, I> -> <CLEAN, I>.
 *  - remove(k): search; if gp.update or p.update is not CLEAN, help and retry. Else a DInfo
 *    (gp, p, pupdate); dflag CAS gp.update -> <DFLAG, D>; then HelpDelete: mark CAS p.update from
 *    pupdate to <MARK, D>; if it (or a helper's) succeeded, HelpMarked: dchild CAS gp's child p ->
 *    l's sibling, dunflag CAS gp.update <DFLAG, D> -> <CLEAN, D>; otherwise backtrack CAS
 *    <DFLAG, D> -> <CLEAN, D> and retry.
 *  - Help(w): IFLAG: HelpInsert; DFLAG: HelpDelete; MARK: HelpMarked.
 *  Deviations, none of which changes what is linearized: (a) a failed flag CAS retries through a
 *  new search (which helps what it finds) instead of helping the CAS's witness, and HelpDelete
 *  backtracks without first helping the operation that blocked its mark: the next search helps
 *  it. Both keep helping to words that were read with protection. (b) The direction of each child
 *  CAS is stored in bit 0 of the info record's node pointer instead of being recomputed from the
 *  new child's key (CAS-Child), so helpers never read a node they did not protect. (c) Under
 *  schemes that need validation the search validates and may restart (below). (d) Reclamation.
 *
 * Sentinels: root, an internal node, with two leaves; all three have key Long.MAX_VALUE (the
 * paper's inf1 = inf2 is allowed: every user key is smaller, so every user key goes left at the
 * root, the right leaf is never reached, and no user key equals a sentinel's). Insert copies the
 * inf leaf like any leaf; a user leaf's parent is never the root, so a remove always has a gp.
 *
 * Invariants:
 *  - External BST: leaves under n.left have keys < n.key, under n.right keys >= n.key. Leaves have
 *    left = right = update = 0; internal nodes have two non-zero children. Key, value and
 *    leafness are immutable once a node is published.
 *  - A child link of internal node n changes only by the child CAS of the operation whose info is
 *    installed with a flag in n.update (ichild under <IFLAG, I>, dchild under <DFLAG, D>): a node's
 *    children are stable while its update word is CLEAN, and frozen once it is MARK. MARK is
 *    final. A node removed from the tree is never linked again (insert copies the leaf it
 *    replaces, the paper's reason for the copy).
 *  - An internal node is removed only by the dchild CAS of the DInfo that marked it; so an
 *    unmarked internal node that was ever reachable is reachable, and a removed internal node is
 *    marked with frozen links.
 *  - Flags nest: an IInfo or DInfo installed with a flag stays until that operation's unflag or
 *    backtrack; once resolved it never returns (see ABA). Every creator leaves its operation
 *    resolved before it returns.
 *
 * Non-invariants: a node a search reaches may already be removed (its links frozen); a reachable
 * node may be flagged by an operation whose creator is stalled (anyone may finish or back it
 * out); a removed node's MARK word keeps naming its DInfo after that record was retired (no
 * validating search follows a MARK word); a leaf's key can sit in the tree while its removal is
 * decided (marked, before the dchild); the tree is not balanced (ascending inserts make a spine).
 *
 * Linearization points:
 *  - insert / putIfAbsent that inserts: the successful ichild CAS (3) of its IInfo (whoever
 *    performs it); a successful iflag always leads to it.
 *  - remove that returns a value: the successful dchild CAS (7) of its DInfo; the successful mark
 *    (6) decided it, and the deleter returns the leaf's value, read while it protected the leaf.
 *  - get, contains, and insert/remove that find the key present/absent: a time during the search
 *    when the leaf it ended at was on the key's search path (the paper's Lemma: every node a search
 *    visits was on its search path at some time during the search; removed nodes' frozen links
 *    keep that true). A leaf stays in the map until its dchild or ichild, so no flag or mark makes
 *    a present key read as absent.
 *  - size(): not linearizable; a sequence of searches (see its Javadoc).
 *
 * Progress: lock-free. A retry follows a CAS of another thread that changed a word the operation
 * read (a flag, a mark, an unflag, a child), and every flag is resolved by whoever meets it (help),
 * so a stalled operation never blocks others. Searches restart only under validating schemes,
 * each time after another thread's mark (below).
 *
 * Schemes with Capability.PROTECTION_NEEDS_VALIDATION (tested once, in the validates field; never
 * the scheme): a child read through a removed node's frozen link may already be retired (the
 * DEBRA digest §3: the HP + marking problem). The search therefore validates every step: after
 * protecting child c of node n (protect re-reads n's link equal to c after publishing), it
 * re-reads n.update (10); if n is not marked at that time, n was reachable when its link still
 * held c, so c was reachable after its hazard was published. If n is marked, the search helps
 * n's delete when the update word it read from n's parent (protected) is <DFLAG, D> with the same
 * D (then D's gp is that parent), and restarts from the root. A restart either completes a
 * pending delete (it helped) or follows another thread's dflag on the parent after the search read
 * the parent's word, so the search stays lock-free. Hence a search under these schemes never
 * returns a marked p or gp. Info records read from an update word by protect are valid when read
 * with a flag or CLEAN (installed, hence not retired: see Reclamation); a MARK word keeps naming D
 * after D is retired, which is why the search never follows one. Helpers of an info record
 * (HelpInsert, HelpDelete from an update word) protect the nodes and info it names (slots 5, 6)
 * and then check that the operation is still pending (its flag still in the word they read it
 * from); a resolved operation needs no help, and a pending one has not retired what it names.
 * Slots: gp, p, l and the child being read rotate over 0..2, the info records of gpupdate and
 * pupdate over 3..4, helping uses 5..6: SLOTS = 7. Epoch schemes (none, ebr, debra, *-af) protect
 * all a section reaches; protect is an acquire load and no validation runs.
 *
 * Reclamation (not in the paper, which leaks) and ABA. Nodes: the thread whose iunflag CAS (8)
 * succeeds retires the replaced leaf l; the thread whose dunflag CAS (8) succeeds retires p and l
 * (read from p's frozen links). Each CAS succeeds once per info record, so each node is retired
 * exactly once, and only after its operation is resolved: a helper that read the flag while it
 * was installed either runs in a section pinned before that retire (epoch schemes) or holds a
 * hazard it published before it saw the flag still installed (validating schemes), so the nodes
 * an info record names (its expected values l and p) cannot be freed and reused while a helper
 * may still CAS with them. Info records: refs counts holders; the record is retired by whoever
 * drops it to 0, exactly once (it never rises from 0: acquires are increment-if-not-zero).
 * Holders: (i) being installed in a node's update word with a flag or CLEAN; dropped by the
 * thread whose CAS overwrites the CLEAN word (a flag or mark CAS: exactly one winner); (ii) its
 * creator, until the operation is resolved and the creator is done with it (so the creator reads
 * its own record and CASes with <XFLAG, I> without ABA, under every scheme); (iii) per pending
 * DInfo D whose pupdate names it: D's creator acquires the record of pupdate before its dflag
 * and drops it after D is resolved. (iii) is the ABA guard of the mark CAS, the one CAS whose
 * expected value was read by another thread: a stale helper of D must never find p.update equal
 * to pupdate through a reused info record. Pupdate's record X is retired only after D is resolved;
 * a helper that read <DFLAG, D> did so before that (epoch schemes: it is pinned across X's retire,
 * so X is not reused while it runs), or protected X and then saw D still pending (validating
 * schemes: X not yet retired when the hazard was visible). A CLEAN word with no record (<CLEAN, 0>,
 * a new internal node) never recurs on a node. The update words' values therefore never repeat on
 * a node while anyone can compare with them, which is the paper's no-reuse assumption.
 * A record read from a MARK word (p removed) is only followed by epoch schemes, whose reader
 * reached p before p's retire, which precedes D's.
 * Unpublished records (an insert or remove that finds its answer after allocating, a failed flag
 * CAS's records, reused in the retry) go back with freeExclusive. close() frees the reachable
 * nodes and the info records in their update words after every operation ended.
 *
 * Memory ordering (each non-plain access carries its number):
 *  (0) construction: plain stores of the sentinels, then a release fence; threads must receive the
 *      tree through a happens-before edge.
 *  (1) protect of a child link: acquire load (hp: publish, full fence, acquire re-read); pairs with
 *      (3) and (7), which published the node (its plain-initialized key, value, links, update).
 *  (2) protect of an update word: acquire; pairs with (4), (5) (which published the info record's
 *      plain-initialized fields), (6) and (8).
 *  (3) ichild CAS (volatile, through the guard); pairs with (1), (11).
 *  (4) iflag CAS; (5) dflag CAS; (6) mark CAS; (8) iunflag, dunflag and backtrack CAS: volatile,
 *      through the guard; pair with (2), (10).
 *  (7) dchild CAS; pairs with (1), (11).
 *  (9) refs: increment-if-not-zero CAS and get-and-add -1 (volatile); the drop to 0 precedes the
 *      retire, and every holder's use precedes its drop.
 *  (10) validating schemes: acquire re-read of an update word after protect's full fence; pairs
 *      with (4), (5), (6), (8). Also the creator's and helpers' acquire re-read of p.update after a
 *      failed mark CAS.
 *  (11) acquire load of p's frozen sibling link in HelpMarked; pairs with (3), (7).
 * Key, value, leafness and info fields are read plain: immutable once published, and read after
 * the acquire that reached them. Teardown and the quiescent checks use plain loads.
 *
 * Notation for locals: gp, p, l, gpupdate, pupdate as in the paper (a search's last three nodes and
 * the update words of gp and p, read before their child); pd and gd are an info record's p | dir and
 * gp | dir; info is the IInfo or DInfo at hand; pupdateInfo the record a CLEAN pupdate names.
 * }</pre>
 *
 * <p>Keys are any {@code long} but {@link #RESERVED_KEY}; values any but {@link #RESERVED}. Close
 * the tree before its domain: operations over a closed domain throw (closing the tree still frees
 * its records).
 */
public final class EllenBst extends OffHeapStructure {

    /** Protection slots one operation needs: gp, p, l, child; two info records; two while helping. */
    public static final int SLOTS = 7;
    /** Bytes per record (nodes and info records share the domain): the smallest {@code recordBytes}. */
    public static final long RECORD_BYTES = Math.max(EllenNodeLayout.SIZE, EllenInfoLayout.SIZE);

    /** Update word states (two low bits). */
    static final long CLEAN = 0;
    static final long IFLAG = 1;
    static final long DFLAG = 2;
    static final long MARK = 3;
    static final long STATE = 3;
    /** Bit 0 of an info record's node pointer: the child is the right one. */
    static final long DIR = 1;

    private static final long KEY = EllenNodeLayout.KEY;
    private static final long VALUE = EllenNodeLayout.VALUE;
    private static final long LEFT = EllenNodeLayout.LEFT;
    private static final long RIGHT = EllenNodeLayout.RIGHT;
    private static final long UPDATE = EllenNodeLayout.UPDATE;
    private static final long REFS = EllenInfoLayout.REFS;
    private static final long INFO_A = EllenInfoLayout.A;
    private static final long INFO_B = EllenInfoLayout.B;
    private static final long INFO_C = EllenInfoLayout.C;
    private static final long INF = RESERVED_KEY;

    /** Search record in {@link Guard#locals()}. */
    private static final int GP = 0;
    private static final int P = 1;
    private static final int L = 2;
    private static final int GPUPDATE = 3;
    private static final int PUPDATE = 4;
    /** The key of the deepest node where the search went left (INF if none below the root). */
    private static final int LEFT_TURN = 5;

    /** First info slot of the search, and the two helping slots. */
    private static final int INFO_SLOT = 3;
    private static final int HELP_A = 5;
    private static final int HELP_B = 6;
    /** "No slot": a bit outside the node slots, so it never blocks a free one. */
    private static final int NO_SLOT = 31;

    /** Whether searches and helpers validate (the domain needs reachability validation). */
    final boolean validates;
    /** Sentinel root (internal). */
    private final long root;

    /**
     * A tree over {@code domain}.
     *
     * @throws IllegalArgumentException if the domain's guards have fewer than {@link #SLOTS} slots
     *                                  or its records are smaller than {@link #RECORD_BYTES}
     * @throws IllegalStateException    if the domain is closed
     */
    public EllenBst(final ReclaimDomain domain) {
        super(domain, SLOTS, RECORD_BYTES);
        domain.declareLinks(); // two record layouts: no countable links
        this.validates = domain.has(Capability.PROTECTION_NEEDS_VALIDATION);
        final long inf1 = domain.allocateExclusive();
        final long inf2 = domain.allocateExclusive();
        final long r = domain.allocateExclusive();
        initSentinel(inf1, 0, 0);
        initSentinel(inf2, 0, 0);
        initSentinel(r, inf1, inf2);
        this.root = r;
        Words.releaseFence(); // (0)
    }

    private static void initSentinel(final long node, final long left, final long right) {
        Words.sp(node + KEY, INF);
        Words.sp(node + VALUE, 0);
        Words.sp(node + LEFT, left);
        Words.sp(node + RIGHT, right);
        Words.sp(node + UPDATE, 0);
    }

    /** Plain stores: the node is not yet published. */
    private static void initNode(final Guard g, final long node, final long key, final long value, final long left,
                                 final long right) {
        Words.sp(node + KEY, key);
        Words.sp(node + VALUE, value);
        g.initLink(node + LEFT, left);
        g.initLink(node + RIGHT, right);
        g.initLink(node + UPDATE, 0);
    }

    /** Plain stores: the info record is not yet published; two holders (installed, creator). */
    private static void initInfo(final Guard g, final long info, final long a, final long b, final long c) {
        Words.sp(info + REFS, 2);
        g.initLink(info + INFO_A, a);
        g.initLink(info + INFO_B, b);
        g.initLink(info + INFO_C, c);
    }

    // ---------------------------------------------------------------- operations

    /** The value mapped to {@code key}, or {@link #RESERVED} if absent. */
    public long get(final long key) {
        checkKey(key);
        final int op = enter();
        try (Guard g = domain.pin()) {
            final long[] r = g.locals();
            while (true) {
                search(g, key, r);
                final long l = r[L];
                final long value = Words.lp(l + KEY) == key ? Words.lp(l + VALUE) : RESERVED;
                try {
                    g.poll();
                    return value;
                } catch (final Restart neutralized) {
                    // the leaf may have been freed before it was read: search again
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
            long leaf = 0;
            long sibling = 0;
            long internal = 0;
            long info = 0;
            while (true) {
                search(g, key, r);
                final long l = r[L];
                final long leafKey = Words.lp(l + KEY);
                final long leafValue = Words.lp(l + VALUE);
                try {
                    if (leafKey != key) {
                        beginWrite(g, r);
                    } else {
                        g.poll();
                    }
                } catch (final Restart neutralized) {
                    continue; // what the search found may rest on freed records: search again
                }
                if (leafKey == key) {
                    if (leaf != 0) { // never published
                        domain.freeExclusive(leaf);
                        domain.freeExclusive(sibling);
                        domain.freeExclusive(internal);
                        domain.freeExclusive(info);
                    }
                    return leafValue;
                }
                final long p = r[P];
                final long pupdate = r[PUPDATE];
                if ((pupdate & STATE) != CLEAN) {
                    help(g, pupdate);
                    g.endWrite();
                    continue;
                }
                if (leaf == 0) {
                    leaf = g.allocate();
                    sibling = g.allocate();
                    internal = g.allocate();
                    info = g.allocate();
                    initNode(g, leaf, key, value, 0, 0);
                }
                initNode(g, sibling, leafKey, leafValue, 0, 0);
                if (key < leafKey) {
                    initNode(g, internal, leafKey, 0, leaf, sibling);
                } else {
                    initNode(g, internal, key, 0, sibling, leaf);
                }
                initInfo(g, info, p | (key < Words.lp(p + KEY) ? 0 : DIR), l, internal);
                if (g.cas(p + UPDATE, pupdate, info | IFLAG)) { // (4) iflag; pairs with (2), (10)
                    dropInstalled(g, pupdate);
                    helpInsert(g, info, false);
                    dropRef(g, info); // the creator's hold
                    g.endWrite();
                    return RESERVED;
                }
                g.endWrite();
                // not published: the records are reused by the retry
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
            long info = 0;
            while (true) {
                search(g, key, r);
                final long l = r[L];
                final boolean found = Words.lp(l + KEY) == key;
                try {
                    if (found) {
                        beginWrite(g, r);
                    } else {
                        g.poll();
                    }
                } catch (final Restart neutralized) {
                    continue; // what the search found may rest on freed records: search again
                }
                if (!found) {
                    if (info != 0) {
                        domain.freeExclusive(info); // never published
                    }
                    return RESERVED;
                }
                final long gp = r[GP];
                final long p = r[P];
                final long gpupdate = r[GPUPDATE];
                final long pupdate = r[PUPDATE];
                if ((gpupdate & STATE) != CLEAN) {
                    help(g, gpupdate);
                    g.endWrite();
                    continue;
                }
                if ((pupdate & STATE) != CLEAN) {
                    help(g, pupdate);
                    g.endWrite();
                    continue;
                }
                final long pupdateInfo = pupdate & ~STATE;
                if (pupdateInfo != 0 && !RecordRefs.acquire(pupdateInfo)) {
                    g.endWrite();
                    continue; // p.update was overwritten meanwhile: a mark could not succeed
                }
                if (info == 0) {
                    info = g.allocate();
                }
                initInfo(g, info, gp | (key < Words.lp(gp + KEY) ? 0 : DIR),
                        p | (key < Words.lp(p + KEY) ? 0 : DIR), pupdate);
                if (g.cas(gp + UPDATE, gpupdate, info | DFLAG)) { // (5) dflag; pairs with (2), (10)
                    dropInstalled(g, gpupdate);
                    final long value = Words.lp(l + VALUE); // still protected by the search
                    helpDelete(g, info, false);
                    // resolved now; p is protected and the held info cannot be reused: no ABA
                    final boolean removed = Words.la(p + UPDATE) == (info | MARK); // (10)
                    if (pupdateInfo != 0) {
                        dropRef(g, pupdateInfo);
                    }
                    dropRef(g, info); // the creator's hold
                    g.endWrite();
                    if (removed) {
                        return value;
                    }
                    info = 0; // published: the retry needs a new one
                    continue;
                }
                if (pupdateInfo != 0) {
                    dropRef(g, pupdateInfo);
                }
                g.endWrite();
                // not published: reused by the retry
            }
        } finally {
            exit(op);
        }
    }

    /**
     * The number of keys, approximately: a walk from the smallest key upwards, one search per key
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
                final long leftTurn;
                try (Guard g = domain.pin()) {
                    final long[] r = g.locals();
                    search(g, k, r);
                    leafKey = Words.lp(r[L] + KEY);
                    leftTurn = r[LEFT_TURN];
                    g.poll();
                } catch (final Restart neutralized) {
                    continue; // the leaf may have been freed before its key was read: search again
                }
                if (leafKey >= k) { // the leaf on k's path is the smallest key >= k
                    if (leafKey == INF) {
                        return count;
                    }
                    count++;
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
     * The paper's Search: fills {@code r} with gp, p, l, gp's and p's update words as read before
     * their child, and the last left-turn key. On return gp, p, l and the info records of both
     * update words are protected; with validation neither update word is MARK.
     */
    private void search(final Guard g, final long key, final long[] r) {
        while (true) {
            try {
                searchFromRoot(g, key, r);
                return;
            } catch (final Restart neutralized) {
                // the read phase starts over from the root (Guard, "Neutralization")
            }
        }
    }

    /**
     * Ends the read phase that filled {@code r}: reserves gp, p, l and the info records of their
     * update words, then begins the write phase (throws {@link Restart} if neutralized meanwhile).
     * Everything an operation does after its search (helping, info holds, the flag CASes) runs in
     * the write phase that this begins.
     */
    private static void beginWrite(final Guard g, final long[] r) {
        g.reserve(0, r[GP]);
        g.reserve(1, r[P]);
        g.reserve(2, r[L]);
        g.reserve(3, r[GPUPDATE] & ~STATE);
        g.reserve(4, r[PUPDATE] & ~STATE);
        g.beginWrite();
    }

    /** {@link #search}'s read phase: starts over from the root after helping a marked node; throws {@link Restart}. */
    private void searchFromRoot(final Guard g, final long key, final long[] r) {
        restart:
        while (true) {
            long gp = 0;
            long p = 0;
            long l = root;
            long gpupdate = 0;
            long pupdate = 0;
            int slotP = NO_SLOT;
            int slotL = NO_SLOT; // the root is never freed: no slot
            int infoP = INFO_SLOT + 1;
            long leftTurn = INF;
            while (Words.lp(l + LEFT) != 0) { // plain: leafness is immutable
                final int slotC = Integer.numberOfTrailingZeros(~(1 << slotP | 1 << slotL));
                final int infoC = infoP == INFO_SLOT ? INFO_SLOT + 1 : INFO_SLOT;
                final long lupdate = g.protect(infoC, l + UPDATE); // (2) acquire; pairs with (4), (5), (6), (8)
                final long lKey = Words.lp(l + KEY);
                final boolean left = key < lKey;
                final long child = g.protect(slotC, l + (left ? LEFT : RIGHT)); // (1) acquire; pairs with (3), (7)
                if (validates) {
                    final long now = Words.la(l + UPDATE); // (10) acquire; pairs with (6)
                    if ((now & STATE) == MARK) {
                        // l is being removed; its delete holds l's parent p with DFLAG
                        if (pupdate == ((now & ~STATE) | DFLAG)) {
                            g.reserve(0, p);
                            g.reserve(1, l);
                            g.reserve(2, now & ~STATE);
                            g.beginWrite();
                            helpDelete(g, now & ~STATE, true);
                            g.endWrite();
                        }
                        continue restart;
                    }
                }
                if (left) {
                    leftTurn = lKey;
                }
                gp = p;
                p = l;
                l = child;
                gpupdate = pupdate;
                pupdate = lupdate;
                slotP = slotL;
                slotL = slotC;
                infoP = infoC;
            }
            r[GP] = gp;
            r[P] = p;
            r[L] = l;
            r[GPUPDATE] = gpupdate;
            r[PUPDATE] = pupdate;
            r[LEFT_TURN] = leftTurn;
            return;
        }
    }

    /** The paper's Help, for update word {@code w} read (protected) by a search. */
    private void help(final Guard g, final long w) {
        final long info = w & ~STATE;
        switch ((int) (w & STATE)) {
            case (int) IFLAG -> helpInsert(g, info, true);
            case (int) DFLAG -> helpDelete(g, info, true);
            case (int) MARK -> {
                if (!validates) { // validating searches never return a MARK word
                    helpMarked(g, info);
                }
            }
            default -> {
            }
        }
    }

    /**
     * The paper's HelpInsert: ichild, then iunflag; the iunflag winner retires the replaced leaf.
     * A {@code helper} (not the creator) validates first under validating schemes.
     */
    private void helpInsert(final Guard g, final long info, final boolean helper) {
        final long pd = Words.lp(info + INFO_A); // plain: immutable, published by (4)
        final long p = pd & ~DIR;
        final long l;
        if (helper && validates) {
            l = g.protect(HELP_A, info + INFO_B);
            if (Words.la(p + UPDATE) != (info | IFLAG)) { // (10) resolved: nothing to help
                return;
            }
        } else {
            l = Words.lp(info + INFO_B);
        }
        g.cas(p + ((pd & DIR) != 0 ? RIGHT : LEFT), l, Words.lp(info + INFO_C)); // (3) ichild; pairs with (1), (11)
        if (g.cas(p + UPDATE, info | IFLAG, info)) { // (8) iunflag; pairs with (2), (10)
            g.retire(l);
        }
    }

    /**
     * The paper's HelpDelete: mark p, then HelpMarked; or backtrack. Returns whether p is marked
     * with this record. A {@code helper} validates first under validating schemes (returning
     * false if the operation is resolved).
     */
    private boolean helpDelete(final Guard g, final long info, final boolean helper) {
        final long gp = Words.lp(info + INFO_A) & ~DIR;
        final long pd;
        final long pupdate;
        if (helper && validates) {
            pd = g.protect(HELP_A, info + INFO_B);
            pupdate = g.protect(HELP_B, info + INFO_C); // pupdate's info record: the mark's expected value
            if (Words.la(gp + UPDATE) != (info | DFLAG)) { // (10) resolved: nothing to help
                return false;
            }
        } else {
            pd = Words.lp(info + INFO_B);
            pupdate = Words.lp(info + INFO_C);
        }
        final long p = pd & ~DIR;
        if (g.cas(p + UPDATE, pupdate, info | MARK)) { // (6) mark; pairs with (2), (10)
            dropInstalled(g, pupdate);
            helpMarked(g, info);
            return true;
        }
        if (Words.la(p + UPDATE) == (info | MARK)) { // (10) marked by another helper
            helpMarked(g, info);
            return true;
        }
        g.cas(gp + UPDATE, info | DFLAG, info); // (8) backtrack; pairs with (2), (10)
        return false;
    }

    /** The paper's HelpMarked: dchild, then dunflag; the dunflag winner retires p and l. */
    private void helpMarked(final Guard g, final long info) {
        final long gd = Words.lp(info + INFO_A);
        final long gp = gd & ~DIR;
        final long pd = Words.lp(info + INFO_B);
        final long p = pd & ~DIR;
        final boolean lRight = (pd & DIR) != 0;
        final long sibling = Words.la(p + (lRight ? LEFT : RIGHT)); // (11) acquire; frozen
        g.cas(gp + ((gd & DIR) != 0 ? RIGHT : LEFT), p, sibling); // (7) dchild; pairs with (1), (11)
        if (g.cas(gp + UPDATE, info | DFLAG, info)) { // (8) dunflag; pairs with (2), (10)
            g.retire(Words.lp(p + (lRight ? RIGHT : LEFT))); // l, from p's frozen link
            g.retire(p);
        }
    }

    /** Drops one hold on {@code info}; the last one retires it. */
    private static void dropRef(final Guard g, final long info) {
        if (Words.xadd(info + REFS, -1) == 1) { // (9)
            g.retire(info);
        }
    }

    /** Holder (i): the CLEAN word {@code w} was just overwritten by this thread's CAS. */
    private static void dropInstalled(final Guard g, final long w) {
        final long info = w & ~STATE;
        if (info != 0) {
            dropRef(g, info);
        }
    }

    // ---------------------------------------------------------------- test hooks

    /**
     * Test hook: a remove of {@code key} whose creator stalls after its dflag CAS (and, if
     * {@code mark}, after its mark CAS) while {@code meanwhile} runs on this thread, nested in the
     * creator's pinned section (so the stalled creator keeps its protection, as a preempted one
     * does), then resumes. Lets tests leave flags and marks for other operations to meet and help.
     * Returns 1 if this remove removed the key, 0 if it backed out (its mark lost to another
     * operation; the real remove would retry), -1 if it could not flag (key absent, or a flag in
     * the way).
     */
    int stalledRemove(final long key, final boolean mark, final Runnable meanwhile) {
        checkKey(key);
        final int op = enter();
        try (Guard g = domain.pin()) {
            final long[] r = g.locals(); // nested operations overwrite it: copied out first
            search(g, key, r);
            final long gp = r[GP];
            final long p = r[P];
            final long l = r[L];
            final long gpupdate = r[GPUPDATE];
            final long pupdate = r[PUPDATE];
            if (Words.lp(l + KEY) != key || (gpupdate & STATE) != CLEAN || (pupdate & STATE) != CLEAN) {
                return -1;
            }
            final long pupdateInfo = pupdate & ~STATE;
            if (pupdateInfo != 0 && !RecordRefs.acquire(pupdateInfo)) {
                return -1;
            }
            final long info = g.allocate();
            initInfo(g, info, gp | (key < Words.lp(gp + KEY) ? 0 : DIR), p | (key < Words.lp(p + KEY) ? 0 : DIR),
                    pupdate);
            if (!g.cas(gp + UPDATE, gpupdate, info | DFLAG)) { // (5)
                if (pupdateInfo != 0) {
                    dropRef(g, pupdateInfo);
                }
                domain.freeExclusive(info);
                return -1;
            }
            dropInstalled(g, gpupdate);
            if (mark && g.cas(p + UPDATE, pupdate, info | MARK)) { // (6)
                dropInstalled(g, pupdate);
            }
            meanwhile.run();
            helpDelete(g, info, false);
            final boolean removed = Words.la(p + UPDATE) == (info | MARK); // (10)
            if (pupdateInfo != 0) {
                dropRef(g, pupdateInfo);
            }
            dropRef(g, info);
            return removed ? 1 : 0;
        } finally {
            exit(op);
        }
    }

    // ---------------------------------------------------------------- teardown and checks

    @Override
    void freeNodes() {
        long[] stack = new long[64];
        int n = 0;
        stack[n++] = root;
        while (n > 0) {
            final long node = stack[--n];
            final long left = Words.lp(node + LEFT);
            if (left != 0) {
                if (n + 2 > stack.length) {
                    stack = Arrays.copyOf(stack, 2 * stack.length);
                }
                stack[n++] = left;
                stack[n++] = Words.lp(node + RIGHT);
                final long info = Words.lp(node + UPDATE) & ~STATE;
                if (info != 0) {
                    freeNode(info);
                }
            }
            freeNode(node);
        }
    }

    /** The user keys in order, by an in-order walk; only while no other thread modifies the tree. */
    long[] keysInOrder() {
        final long[][] keys = {new long[16]};
        final int[] count = {0};
        walk((node, lo, hi) -> {
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
     * Checks the structure while no other thread modifies the tree: the sentinels; every node
     * having zero or two children; routing (every leaf within the bounds of its path); strictly
     * ascending user keys; exactly one inf leaf, the rightmost, under the root's left child; every
     * update word CLEAN; every info record in one node only, held by that node alone (refs 1).
     * Returns the problems found, empty if none.
     */
    List<String> checkInvariants() {
        final List<String> problems = new ArrayList<>();
        final long inf2 = Words.lp(root + RIGHT);
        if (Words.lp(root + KEY) != INF || Words.lp(inf2 + KEY) != INF || Words.lp(inf2 + LEFT) != 0
                || (Words.lp(root + UPDATE) & STATE) != CLEAN) {
            problems.add("sentinel structure broken");
        }
        final long[] previous = {Long.MIN_VALUE};
        final int[] leaves = {0};
        final int[] infLeaves = {0};
        final Set<Long> infos = new HashSet<>();
        checkInfo(root, infos, problems);
        walk((node, lo, hi) -> {
            final long k = Words.lp(node + KEY);
            final boolean leaf = Words.lp(node + LEFT) == 0;
            if (leaf != (Words.lp(node + RIGHT) == 0)) {
                problems.add("node with one child: key " + k);
            }
            if (!leaf) {
                checkInfo(node, infos, problems);
                return;
            }
            if (Words.lp(node + UPDATE) != 0) {
                problems.add("leaf with an update word: key " + k);
            }
            if (k < lo || (k >= hi && hi != INF)) {
                problems.add(String.format(Locale.ROOT, "leaf %d outside its routing bounds [%d, %d)", k, lo, hi));
            }
            if (infLeaves[0] > 0) {
                problems.add(String.format(Locale.ROOT, "leaf %d after the inf leaf", k));
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
            problems.add("expected exactly one inf leaf under the root's left child, found " + infLeaves[0]);
        }
        return problems;
    }

    private static void checkInfo(final long node, final Set<Long> infos, final List<String> problems) {
        final long u = Words.lp(node + UPDATE);
        if ((u & STATE) != CLEAN) {
            problems.add(String.format(Locale.ROOT, "reachable node with state %d, key %d", u & STATE,
                    Words.lp(node + KEY)));
        }
        final long info = u & ~STATE;
        if (info == 0) {
            return;
        }
        if (!infos.add(info)) {
            problems.add(String.format(Locale.ROOT, "info record 0x%x in two nodes", info));
        }
        final long refs = Words.lp(info + REFS);
        if (refs != 1) {
            problems.add(String.format(Locale.ROOT, "info record of node key %d has %d holders, expected 1",
                    Words.lp(node + KEY), refs));
        }
    }

    private interface Visitor {
        /** {@code node}, whose leaves must lie in [lo, hi). */
        void visit(long node, long lo, long hi);
    }

    /** In-order walk of the root's left subtree (the user part), plain loads: quiescent use only. */
    private void walk(final Visitor v) {
        long[] stack = new long[3 * 64];
        int n = 0;
        long e = Words.lp(root + LEFT);
        long l = Long.MIN_VALUE;
        long h = INF;
        while (true) {
            while (e != 0) {
                final long node = e;
                v.visit(node, l, h);
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
