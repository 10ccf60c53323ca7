package dev.limbo.structures;

import dev.limbo.core.StripedCounter;
import dev.limbo.core.Words;
import dev.limbo.reclaim.Capability;
import dev.limbo.reclaim.Guard;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Restart;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * An off-heap lock-free ordered {@code long -> long} map: Brown's relaxed (a,b)-tree (Brown's PhD
 * thesis, 2017; the ABtree of the Token-EBR paper), built from LLX/SCX (Brown, Ellen and Ruppert,
 * "Pragmatic primitives for non-blocking data structures", PODC 2013) with the tree update
 * template (Brown, Ellen and Ruppert, "A general technique for non-blocking trees", PPoPP 2014).
 * Nodes and SCX records live off-heap in one {@link ReclaimDomain} and are reclaimed through it.
 * Every {@code long} is a valid key and a valid value.
 *
 * <pre>{@code
 * ReclaimDomain domain = ReclaimDomain.builder(Scheme.DEBRA).allocator(allocator)
 *         .recordBytes(BrownAbTree.recordBytes(BrownAbTree.DEFAULT_DEGREE)).slots(BrownAbTree.SLOTS).build();
 * try (BrownAbTree tree = new BrownAbTree(domain)) {
 *     tree.put(7, 70, -1);
 *     long v = tree.get(7, -1);        // 70, or -1 when absent
 * }
 * }</pre>
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm and source: the relaxed (a,b)-tree of Brown's thesis (its chapter on the relaxed
 * (a,b)-tree, and the artifact brown_ext_abtree_lf that the Token-EBR paper measures), implemented
 * from the published descriptions, over LLX/SCX (PODC'13, the LLX, SCX and Help pseudocode of its
 * §4) used through the tree update template (PPoPP'14 §3: LLX the nodes a change depends on, top
 * down, then one SCX that swings one child link to a fresh copy of the changed subtree and
 * finalizes the nodes it replaces). Leaf-oriented (external): keys and values live in leaves, of
 * at most b keys; internal nodes hold up to b children and size - 1 routing keys (child i holds
 * the keys k with keys[i-1] <= k < keys[i]). Nodes are copy-on-update: a node's keys, values,
 * size and flags never change after publication; only an internal node's child links do, and only
 * through an SCX that froze it. b is the degree (DEFAULT_DEGREE 14: the node is 16 + 16 b = 240
 * bytes, the artifact's node size, and with the domain's 8-byte trailer fills the allocator's
 * 256-byte class exactly; b = 16 would need 280 bytes, a 320-byte block), a = max(b / 4, 2) as in
 * the artifact (b >= 2a - 1, so a join of two underfull siblings fits in one node).
 *
 * Entry: a sentinel internal node of size 1 whose only child is the root; it has no routing key,
 * so no key is reserved. It is never replaced; root changes are SCXs on its child link.
 *
 * LLX/SCX (PODC'13), with the info field and the marked bit merged into one word per node
 * (record | MARK): LLX(r) reads r's word w; if MARK is set r is finalized (FAIL, after helping the
 * record's SCX if it may be in progress); if w names a record U whose state is IN_PROGRESS, r is
 * frozen: help U and FAIL; otherwise (no record, U committed and r unmarked, or U aborted) r is not
 * frozen, and LLX re-reads the word (the paper's second read of marked) and returns w, the
 * snapshot's witness. Callers read the child links they use after their LLX. SCX(V, R, fld, new),
 * V in tree order, creates a record U and Help(U): for each r in V, freeze CAS (F) r.word from
 * the LLX's w to U; if it fails and r.word is neither U nor U | MARK (marked for U, so frozen:
 * marks follow allFrozen), then if U.allFrozen someone finished U (return true), else abort:
 * state CAS (S) IN_PROGRESS -> ABORTED (return false). Then allFrozen = 1 (A);
 * mark CAS (M) r.word U -> U | MARK for r in R; the update CAS (U) of fld from old to new;
 * commit: state CAS (S) IN_PROGRESS -> COMMITTED. A node is frozen for U while its word is U and
 * U is in progress, or forever once its word is U | MARK. Merging the mark into the word makes
 * every change of a node's word one CAS: a stale LLX that missed a mark fails at the freeze CAS. The
 * price: a word leaves U (for U | MARK) while U is still in progress, so Help must take U | MARK
 * as frozen for U where the paper tests r.info = U (the paper's "r.info != U and allFrozen, so U
 * is done" holds only for a word that left U after the commit; the stalled-SCX test found the
 * livelock that the unchanged test causes when a creator stalls after its marks).
 *
 * The operations (each one SCX; V top down, R = the nodes the new subtree replaces):
 *  - leaf update (put, putIfAbsent, replace, remove, both conditional forms): search key's leaf l
 *    with parent p; LLX(p), check p.child[i] == l, LLX(l); V = {p, l}, R = {l}, the new subtree: a
 *    copy of l with the change. An insert into a full leaf (b keys) builds two leaves of the b + 1
 *    keys under a new internal node of size 2, TAGGED unless p is the entry (a new root).
 *  - Rebalancing (the thesis' steps; after an update that made a violation, the updater searches
 *    its key again and fixes the first violation on the path, top down, until there is none):
 *    * root untag: the root (entry's child) is tagged: V = {entry, n}, R = {n}, an untagged copy.
 *    * absorb: n tagged, parent p (untagged), p.size + n.size - 1 <= b: V = {gp, p, n},
 *      R = {p, n}: p' has n's children in n's place; p' is untagged.
 *    * split (overflow): the same, more than b children: the children and keys split into two
 *      untagged halves under a new node of size 2, tagged unless gp is the entry; the tag moves up.
 *    * root absorb: the root is internal with one child: V = {entry, root}, R = {root}, the child
 *      (not a copy) becomes the root.
 *    * join: n underfull (size < a, not the root), sibling s (left one if any; a tagged sibling is
 *      fixed first), together fewer than 2a: V = {gp, p, left, right}, R = {p, left, right}: one
 *      merged node m; p' is p with m for the pair (one child fewer; p' may be underfull: the loop
 *      fixes it next), or, when p is the root with two children, m becomes the root.
 *    * redistribute: together at least 2a: the same V and R; the merged entries split evenly into
 *      left', right', under p' with the new routing key.
 *  Deviations: (a) the marked bit is merged into the info word (above). (b) SCX records are
 *  reclaimed (the paper leaks them), by reference counts (below). (c) A helper first checks that
 *  the record is still in progress and that V[0] is frozen for it (below). (d) A failed freeze does
 *  not help the witness: the retry's LLX helps it.
 *
 * Invariants (when no update is in progress; the relaxed form always): keys ascend within a leaf;
 * every leaf reached through child i of an internal node n holds keys in [n.keys[i-1], n.keys[i]);
 * a child link of n changes only by the update CAS of an SCX that froze n; removed nodes are
 * exactly the R nodes of committed SCXs, marked before their update CAS, and never relinked; every
 * root-to-leaf path has the same number of untagged nodes (so tags are the only height excess);
 * quiescent and with every violation fixed (checkInvariants): no tagged node, every non-root node
 * has at least a (and at most b) keys or children, the root has at least 2 children if internal,
 * all leaves are at one depth h, and h <= 1 + log_a(n / 2) for n >= 2 keys (the thesis' height
 * bound for a tree without violations). Routing keys are never Long.MIN_VALUE (each is the least
 * key of a nonempty right part when made).
 *
 * Non-invariants: a searched leaf may be removed already (it was on the key's path during the
 * search, the lemma of PPoPP'14); while updates run there may be tagged and underfull nodes (at
 * most one per update in progress or not yet cleaned up: the relaxed height bound).
 *
 * Linearization points: a leaf update that changes the map: its SCX's update CAS (U) (whoever
 * performs it). get, containsKey, an update that finds nothing to change, and each leaf copy of a
 * scan or navigation: a time during the search when the leaf was on the key's search path; leaves
 * are immutable, so what it read of the leaf is the map's state for its range then. size(): a
 * striped counter of committed inserts minus removes, exact when quiescent. Scans: weakly
 * consistent (one leaf copy per step, each linearizable; see copyLeaf).
 *
 * Progress: lock-free. An SCX fails only when another SCX froze one of its nodes first; LLX helps
 * any SCX in progress it meets, and V is always in tree order, so some SCX completes (PODC'13
 * §5's progress property). The cleanup loop of an update ends when its key's path has no
 * violation; each round fixes one or follows another thread's change.
 *
 * Memory reclamation and ABA. Nodes: the thread whose commit CAS (S) succeeds retires R (each R
 * node is unreachable after the update CAS: R holds the replaced node and all of its descendants
 * that the new subtree does not relink), exactly once. SCX records: refs counts holders; the drop
 * to 0 retires the record, exactly once (acquires are increment-if-not-zero, (H)): (i) the creator,
 * from creation until it is done with the resolved SCX; (ii) each node whose word is exactly U
 * (unmarked): the thread about to freeze acquires first and drops if its freeze CAS fails; the
 * freeze CAS winner drops the replaced word's record; the mark CAS winner drops U's; (iii) the
 * creator holds the record of every word its LLXs returned until U is resolved: the ABA guard of
 * the freeze CAS, whose expected word another thread (a helper) may compare with later. A word
 * never repeats on a node while anyone may compare with it: records are not reused while held or
 * protected, a node's word starts at 0 only when the node is new, and a helper checks (after it
 * protected U's nodes and words, or reserved them) that U is in progress and that V[0]'s word is
 * U: U's creator froze V[0] while it protected it, so V[0] and, through its frozen links, the
 * rest of V (frozen top down) were not removed before the helper's protections; then the update
 * CAS's old and the nodes it marks cannot be reused under it. Marked words hold no reference; a
 * record read from a marked word is in use while its node is reachable (until the commit, which
 * the creator's hold (i) outlasts): epoch schemes reached the node in the section, validating
 * schemes re-read the node's parent link and the parent's unmarked word after protecting the
 * record. Unpublished records (new subtrees of failed SCXs, a record whose LLX witness was
 * released) go back with freeExclusive. close() frees the reachable nodes and, by their words,
 * the records they still hold, after every operation ended.
 *
 * Schemes. Schemes with Capability.PROTECTION_NEEDS_VALIDATION (tested once, field validates):
 * the search validates every step (after protecting child c of n, it re-reads n's word (V): if n
 * is unmarked, n was in the tree, so c was reachable after its hazard was published; if marked, it
 * helps n's SCX when n's parent still links n and is unmarked, and restarts from the entry).
 * Neutralizing schemes: the search and the LLXs are the read phase (Restart starts over); an
 * update reserves V and the LLX words, then beginWrite, then allocates, builds and runs its SCX;
 * a helper reserves U, U's nodes and words before its own write phase. Slots: the path (gp, p, n)
 * rotate over 0..2, the sibling 3, the LLX words 4..7, a marked word's record 8, a helped
 * record's words 9..12 (its nodes reuse 0..3, no longer needed by then): SLOTS = 13. Epoch
 * schemes protect all a section reaches. Links: the nodes and records have two layouts, so the
 * tree declares no links (like EllenBst) and cannot run under a counting scheme.
 *
 * Memory ordering (each non-plain access carries its number):
 *  (0) construction and bulk load: plain stores, then a release fence; the tree reaches other
 *      threads through a happens-before edge.
 *  (1) protect of a child link: acquire (hp: publish, full fence, acquire re-read); pairs with (U)
 *      and (0), which published the plain-initialized node.
 *  (2) protect of a node word (LLX): acquire; pairs with (F), (M), which published the record's
 *      plain-initialized fields, and with (S) through the record's state read (3).
 *  (3) acquire loads of a record's state and allFrozen, and LLX's re-read of the word; pair with
 *      (S), (A), (F), (M).
 *  (F) freeze CAS, (M) mark CAS, (U) update CAS: volatile through the guard; (S) state CAS and (A)
 *      the allFrozen volatile store; (H) refs increment-if-not-zero CAS and get-and-add -1: every
 *      holder's use precedes its drop, the drop to 0 precedes the retire.
 *  (V) validating schemes: acquire re-read of a node's word or a parent link after protect's full
 *      fence; pairs with (M), (U).
 * Keys, values, sizes, flags and a record's immutable fields are read plain: read after the
 * acquire that reached them. Teardown and the quiescent checks use plain loads.
 * }</pre>
 */
public final class BrownAbTree extends OffHeapStructure {

    /** Protection slots one operation needs: see the implementation notes. */
    public static final int SLOTS = 13;
    /** The default degree b: a 240-byte node. */
    public static final int DEFAULT_DEGREE = 14;
    /** The smallest degree. */
    public static final int MIN_DEGREE = 4;
    /** The largest degree. */
    public static final int MAX_DEGREE = 256;

    static final long MARK = 1;
    static final long LEAF = 1L << 16;
    static final long TAGGED = 1L << 17;
    static final long SIZE_MASK = 0xFFFF;

    static final long IN_PROGRESS = 0;
    static final long COMMITTED = 1;
    static final long ABORTED = 2;
    /** LLX's failure: not a word (words are 8-aligned record offsets, possibly | MARK). */
    private static final long FAIL = 2;

    private static final long WORD = AbTreeNodeLayout.WORD;
    private static final long META = AbTreeNodeLayout.META;
    private static final long KEYS = AbTreeNodeLayout.KEYS;
    private static final long REFS = ScxRecordLayout.REFS;
    private static final long STATE = ScxRecordLayout.STATE;
    private static final long ALL_FROZEN = ScxRecordLayout.ALL_FROZEN;
    private static final long SHAPE = ScxRecordLayout.SHAPE;
    private static final long FLD = ScxRecordLayout.FLD;
    private static final long OLD = ScxRecordLayout.OLD;
    private static final long NEW = ScxRecordLayout.NEW;
    private static final long NODES = ScxRecordLayout.NODES;
    private static final long WORDS = ScxRecordLayout.WORDS;

    /** Search record in {@link Guard#locals()}. */
    private static final int GP = 0;
    private static final int P = 1;
    private static final int N = 2;
    private static final int IXP = 3;
    private static final int IXN = 4;
    private static final int LO = 5;
    private static final int HI = 6;
    /** Bit 0: LO valid; bit 1: HI valid; bits 8..: the violation the search stopped at. */
    private static final int FLAGS = 7;
    /** A leaf update's result: the key's old value, in the search record once the update is done. */
    private static final int OLD_VALUE = 1;

    private static final long HAS_LO = 1;
    private static final long HAS_HI = 2;
    private static final int NO_VIOLATION = 0;
    private static final int TAG_VIOLATION = 1;
    private static final int UNDERFULL = 2;

    /** Leaf update modes. */
    private static final int PUT = 0;
    private static final int PUT_IF_ABSENT = 1;
    private static final int REPLACE = 2;
    private static final int REPLACE_IF = 3;
    private static final int REMOVE = 4;
    private static final int REMOVE_IF = 5;

    private static final int SIB_SLOT = 3;
    private static final int WORD_SLOT = 4;
    private static final int HELP_U_SLOT = 8;
    private static final int HELP_WORD_SLOT = 9;

    /** b: the most keys of a leaf, children of an internal node. */
    final int degree;
    /** a: the fewest keys or children of a node other than the root. */
    final int minSize;
    /** Offset of the values (children) array. */
    private final long vals;
    /** Whether searches validate (the domain needs reachability validation). */
    final boolean validates;
    /** The entry sentinel: an internal node of size 1 over the root. */
    private final long entry;
    /** Committed inserts minus removes (and the bulk load). */
    private final StripedCounter entries = new StripedCounter();
    /** Records allocated minus records freed or retired by the tree: its live records. */
    private final StripedCounter records = new StripedCounter();
    /** Test hook ({@link #stallNextScx}): run by the next SCX's creator at step stallAt; null normally. */
    private Runnable stallHook;
    private int stallAt;

    /**
     * A tree of degree {@link #DEFAULT_DEGREE} over {@code domain}.
     *
     * @throws IllegalArgumentException if the domain's guards have fewer than {@link #SLOTS} slots
     *                                  or its records are smaller than {@link #recordBytes}
     * @throws IllegalStateException    if the domain is closed
     */
    public BrownAbTree(final ReclaimDomain domain) {
        this(domain, DEFAULT_DEGREE);
    }

    /**
     * A tree of degree {@code degree} (b: the most keys per leaf, children per internal node) over
     * {@code domain}, whose records must be at least {@link #recordBytes}{@code (degree)} bytes.
     *
     * @throws IllegalArgumentException if the degree is outside [{@value #MIN_DEGREE},
     *                                  {@value #MAX_DEGREE}], or the domain's slots or records are
     *                                  too few or too small
     * @throws IllegalStateException    if the domain is closed
     */
    public BrownAbTree(final ReclaimDomain domain, final int degree) {
        super(domain, SLOTS, recordBytes(degree));
        domain.declareLinks(); // two record layouts: no countable links
        this.degree = degree;
        this.minSize = Math.max(degree / 4, 2);
        this.vals = AbTreeNodeLayout.values(degree);
        this.validates = domain.has(Capability.PROTECTION_NEEDS_VALIDATION);
        final long root = domain.allocateExclusive();
        Words.sp(root + WORD, 0);
        Words.sp(root + META, LEAF);
        final long e = domain.allocateExclusive();
        Words.sp(e + WORD, 0);
        Words.sp(e + META, 1);
        Words.sp(e + vals, root);
        this.entry = e;
        records.add(2);
        Words.releaseFence(); // (0)
    }

    /**
     * The record size a tree of degree {@code degree} needs: the larger of its node and an SCX
     * record.
     *
     * @throws IllegalArgumentException if the degree is outside [{@value #MIN_DEGREE}, {@value #MAX_DEGREE}]
     */
    public static long recordBytes(final int degree) {
        if (degree < MIN_DEGREE || degree > MAX_DEGREE) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "the degree of a BrownAbTree must be in [%d, %d], was %d", MIN_DEGREE, MAX_DEGREE, degree));
        }
        return Math.max(AbTreeNodeLayout.bytes(degree), ScxRecordLayout.SIZE);
    }

    /** The degree b. */
    public int degree() {
        return degree;
    }

    // ---------------------------------------------------------------- node access

    private static int size(final long node) {
        return (int) (Words.lp(node + META) & SIZE_MASK);
    }

    private static boolean isLeaf(final long node) {
        return (Words.lp(node + META) & LEAF) != 0;
    }

    private static boolean isTagged(final long node) {
        return (Words.lp(node + META) & TAGGED) != 0;
    }

    private static long key(final long node, final int i) {
        return Words.lp(node + KEYS + 8L * i);
    }

    private long val(final long node, final int i) {
        return Words.lp(node + vals + 8L * i);
    }

    private long child(final long node, final int i) {
        return node + vals + 8L * i;
    }

    /** The index of the child of internal node {@code n} (of {@code size} children) whose range holds {@code key}. */
    private static int route(final long n, final int size, final long key) {
        int i = 0;
        while (i < size - 1 && key >= key(n, i)) {
            i++;
        }
        return i;
    }

    /** The index of {@code key} in leaf {@code l}, or {@code -(insertion point) - 1}. */
    private static int find(final long l, final int size, final long key) {
        for (int i = 0; i < size; i++) {
            final long k = key(l, i);
            if (k == key) {
                return i;
            }
            if (k > key) {
                return -i - 1;
            }
        }
        return -size - 1;
    }

    /** Allocates a node and writes its header; the caller fills keys and values, then publishes it. */
    private long newNode(final Guard g, final int size, final boolean leaf, final boolean tagged) {
        final long n = g.allocate();
        records.add(1);
        g.initLink(n + WORD, 0);
        Words.sp(n + META, size | (leaf ? LEAF : 0) | (tagged ? TAGGED : 0));
        return n;
    }

    private void setEntry(final long n, final int i, final long key, final long value) {
        Words.sp(n + KEYS + 8L * i, key);
        Words.sp(n + vals + 8L * i, value);
    }

    private void setChild(final Guard g, final long n, final int i, final long c) {
        g.initLink(n + vals + 8L * i, c);
    }

    private static void setKey(final long n, final int i, final long key) {
        Words.sp(n + KEYS + 8L * i, key);
    }

    /** An unpublished record goes back. */
    private void discard(final long ptr) {
        if (ptr != 0) {
            records.add(-1);
            domain.freeExclusive(ptr);
        }
    }

    private void retire(final Guard g, final long ptr) {
        records.add(-1);
        g.retire(ptr);
    }

    // ---------------------------------------------------------------- point operations

    /** The value of {@code key}, or {@code missing} if absent. */
    public long get(final long key, final long missing) {
        return lookup(key, missing, false);
    }

    /** Whether {@code key} is present. */
    public boolean containsKey(final long key) {
        return lookup(key, 0, true) != 0;
    }

    /** A search: the value of {@code key} or {@code missing}, or with {@code presence} 1 or 0. */
    private long lookup(final long key, final long missing, final boolean presence) {
        final int op = enter();
        try (Guard g = domain.pin()) {
            final long[] r = g.locals();
            while (true) {
                search(g, key, r, false);
                final long l = r[N];
                final int i = find(l, size(l), key);
                final long result = presence ? (i >= 0 ? 1 : 0) : i >= 0 ? val(l, i) : missing;
                try {
                    g.poll();
                    return result;
                } catch (final Restart neutralized) {
                    // the leaf may have been freed before it was read: search again
                }
            }
        } finally {
            exit(op);
        }
    }

    /** Maps {@code key} to {@code value}; returns the previous value, or {@code missing} if absent. */
    public long put(final long key, final long value, final long missing) {
        return apply(key, PUT, value, 0, missing, false);
    }

    /** Maps {@code key} to {@code value} if absent; returns the value present, or {@code missing} if it inserted. */
    public long putIfAbsent(final long key, final long value, final long missing) {
        return apply(key, PUT_IF_ABSENT, value, 0, missing, false);
    }

    /** Maps {@code key} to {@code value} if absent; returns whether it did. */
    public boolean putIfAbsent(final long key, final long value) {
        return apply(key, PUT_IF_ABSENT, value, 0, 0, true) != 0;
    }

    /** Replaces the value of {@code key} if present; returns whether it was. */
    public boolean replace(final long key, final long value) {
        return apply(key, REPLACE, value, 0, 0, true) != 0;
    }

    /** Replaces the value of {@code key} if it is {@code expected}; returns whether it did. */
    public boolean replace(final long key, final long expected, final long value) {
        return apply(key, REPLACE_IF, value, expected, 0, true) != 0;
    }

    /** Removes {@code key}; returns its value, or {@code missing} if absent. */
    public long remove(final long key, final long missing) {
        return apply(key, REMOVE, 0, 0, missing, false);
    }

    /** Removes {@code key} if its value is {@code expected}; returns whether it did. */
    public boolean removeIfEquals(final long key, final long expected) {
        return apply(key, REMOVE_IF, 0, expected, 0, true) != 0;
    }

    /**
     * The number of keys: exact when no update runs; otherwise the committed inserts minus
     * removes summed over stripes while they change. Not linearizable.
     */
    public long size() {
        final int op = enter();
        try {
            return entries.sum();
        } finally {
            exit(op);
        }
    }

    /**
     * The records the tree holds: nodes and the SCX records they name, plus those of updates in
     * progress; exact when quiescent.
     */
    public long liveRecords() {
        return records.sum();
    }

    /**
     * Runs one leaf update. Returns the old value or {@code missing} (key absent), or with
     * {@code asFlag} 1 if the mode's condition held (and the change was made), else 0.
     */
    private long apply(final long key, final int mode, final long value, final long expected, final long missing,
                       final boolean asFlag) {
        final int op = enter();
        try (Guard g = domain.pin()) {
            final long[] r = g.locals();
            final boolean found = update(g, key, mode, value, expected, r);
            final long old = r[OLD_VALUE];
            if (!asFlag) {
                return found ? old : missing;
            }
            return switch (mode) {
                case PUT_IF_ABSENT -> found ? 0 : 1;
                case REPLACE_IF, REMOVE_IF -> found && old == expected ? 1 : 0;
                default -> found ? 1 : 0;
            };
        } finally {
            exit(op);
        }
    }

    /** Whether an update in {@code mode} must change a leaf that has the key ({@code found}) with {@code old}. */
    private static boolean changes(final int mode, final boolean found, final long old, final long value,
                                   final long expected) {
        return switch (mode) {
            case PUT -> !found || old != value;
            case PUT_IF_ABSENT -> !found;
            case REPLACE -> found && old != value;
            case REPLACE_IF -> found && old == expected && old != value;
            default -> found && (mode == REMOVE || old == expected);
        };
    }

    /**
     * The leaf update: one SCX on {p, l} (see the notes), then the cleanup of a violation it made.
     * Returns whether the key was present (the linearized state), its value in r[OLD_VALUE].
     */
    private boolean update(final Guard g, final long key, final int mode, final long value, final long expected,
                           final long[] r) {
        while (true) {
            long p = 0;
            long l = 0;
            long wp = 0;
            long wl = 0;
            int ixL = 0;
            int size = 0;
            int i = 0;
            try {
                search(g, key, r, false);
                p = r[P];
                l = r[N];
                ixL = (int) r[IXN];
                wp = llx(g, WORD_SLOT, p, r[GP], (int) r[IXP]);
                if (wp == FAIL || Words.la(child(p, ixL)) != l) { // (3)
                    continue;
                }
                wl = llx(g, WORD_SLOT + 1, l, p, ixL);
                if (wl == FAIL) {
                    continue;
                }
                size = size(l);
                i = find(l, size, key);
                final boolean found = i >= 0;
                final long old = found ? val(l, i) : 0;
                if (!changes(mode, found, old, value, expected)) {
                    g.poll();
                    r[OLD_VALUE] = old;
                    return found;
                }
                beginScx(g, p, wp, l, wl, 0, 0, 0, 0);
            } catch (final Restart neutralized) {
                continue; // what the read phase found may rest on freed records: search again
            }
            final boolean found = i >= 0;
            final long old = found ? val(l, i) : 0;
            long n1 = 0;
            long n2 = 0;
            long n3 = 0;
            final boolean ok;
            boolean violation = false;
            try {
                if (found && (mode == REMOVE || mode == REMOVE_IF)) {
                    n1 = newNode(g, size - 1, true, false);
                    for (int j = 0, k = 0; j < size; j++) {
                        if (j != i) {
                            setEntry(n1, k++, key(l, j), val(l, j));
                        }
                    }
                    violation = size - 1 < minSize && p != entry;
                } else if (found) {
                    n1 = newNode(g, size, true, false);
                    for (int j = 0; j < size; j++) {
                        setEntry(n1, j, key(l, j), j == i ? value : val(l, j));
                    }
                } else if (size < degree) {
                    final int at = -i - 1;
                    n1 = newNode(g, size + 1, true, false);
                    for (int j = 0; j < at; j++) {
                        setEntry(n1, j, key(l, j), val(l, j));
                    }
                    setEntry(n1, at, key, value);
                    for (int j = at; j < size; j++) {
                        setEntry(n1, j + 1, key(l, j), val(l, j));
                    }
                } else { // split the b + 1 entries under a new (tagged) node
                    final int at = -i - 1;
                    final int left = (size + 2) / 2;
                    n2 = newNode(g, left, true, false);
                    n3 = newNode(g, size + 1 - left, true, false);
                    for (int j = 0; j <= size; j++) {
                        final long k = j < at ? key(l, j) : j == at ? key : key(l, j - 1);
                        final long v = j < at ? val(l, j) : j == at ? value : val(l, j - 1);
                        setEntry(j < left ? n2 : n3, j < left ? j : j - left, k, v);
                    }
                    final boolean tag = p != entry;
                    n1 = newNode(g, 2, false, tag);
                    setKey(n1, 0, key(n3, 0));
                    setChild(g, n1, 0, n2);
                    setChild(g, n1, 1, n3);
                    violation = tag;
                }
                ok = scx(g, 2, 0b10, p, wp, l, wl, 0, 0, 0, 0, child(p, ixL), l, n1);
            } finally {
                g.endWrite();
            }
            if (!ok) {
                discard(n1);
                discard(n2);
                discard(n3);
                continue;
            }
            if (!found || mode == REMOVE || mode == REMOVE_IF) {
                entries.add(found ? -1 : 1);
            }
            if (violation) {
                cleanup(g, key, r);
            }
            r[OLD_VALUE] = old;
            return found;
        }
    }

    // ---------------------------------------------------------------- search

    /**
     * Fills {@code r} with the path's last three nodes (gp, p, n: n a leaf, or with
     * {@code stopAtViolation} the first node on the path that violates balance), the indices of p
     * in gp and of n in p, and the bounds of n's key range that the path shows (LO, HI, FLAGS).
     * On return gp, p and n are protected, and with validation gp and p were unmarked after their
     * child was protected. Read phase: restarts itself on {@link Restart}.
     */
    private void search(final Guard g, final long key, final long[] r, final boolean stopAtViolation) {
        while (true) {
            try {
                searchFromEntry(g, key, r, stopAtViolation);
                return;
            } catch (final Restart neutralized) {
                // the read phase starts over from the entry (Guard, "Neutralization")
            }
        }
    }

    private void searchFromEntry(final Guard g, final long key, final long[] r, final boolean stopAtViolation) {
        restart:
        while (true) {
            long gp = 0;
            long p = 0;
            long n = entry;
            int ixP = 0;
            int ixN = 0;
            int slotP = 1;
            int slotN = 2; // the entry is never freed: its slot is a placeholder
            long lo = 0;
            long hi = 0;
            long flags = 0;
            int violation = NO_VIOLATION;
            while (true) {
                final long meta = Words.lp(n + META); // plain: immutable
                if (stopAtViolation && n != entry) {
                    final int size = (int) (meta & SIZE_MASK);
                    if ((meta & TAGGED) != 0) {
                        violation = TAG_VIOLATION;
                        break;
                    }
                    if (p == entry ? (meta & LEAF) == 0 && size == 1 : size < minSize) {
                        violation = UNDERFULL;
                        break;
                    }
                }
                if ((meta & LEAF) != 0) {
                    break;
                }
                final int size = (int) (meta & SIZE_MASK);
                final int i = route(n, size, key);
                if (i > 0) {
                    lo = key(n, i - 1);
                    flags |= HAS_LO;
                }
                if (i < size - 1) {
                    hi = key(n, i);
                    flags |= HAS_HI;
                }
                final int slotC = 3 - slotP - slotN; // the slot of {0, 1, 2} that gp held
                final long c = g.protect(slotC, child(n, i)); // (1) acquire; pairs with (U), (0)
                if (validates) {
                    final long w = Words.la(n + WORD); // (V)
                    if ((w & MARK) != 0) {
                        helpMarkedInSearch(g, p, ixN, n, w);
                        continue restart;
                    }
                }
                gp = p;
                p = n;
                n = c;
                ixP = ixN;
                ixN = i;
                slotP = slotN;
                slotN = slotC;
            }
            r[GP] = gp;
            r[P] = p;
            r[N] = n;
            r[IXP] = ixP;
            r[IXN] = ixN;
            r[LO] = lo;
            r[HI] = hi;
            r[FLAGS] = flags | (long) violation << 8;
            return;
        }
    }

    /**
     * Validating schemes: the search found {@code n} (child {@code ix} of {@code q}) marked with
     * word {@code w}. Helps its SCX if the record is still in use: protected, and n still linked
     * from an unmarked q (so n is in the tree and its SCX not committed).
     */
    private void helpMarkedInSearch(final Guard g, final long q, final int ix, final long n, final long w) {
        if (q != 0 && g.protectIfEqual(HELP_U_SLOT, n + WORD, w) && linked(q, ix, n)) {
            helpOther(g, w & ~MARK);
        }
    }

    /** Whether {@code q} links {@code n} as child {@code ix} and is unmarked, in that order (V). */
    private boolean linked(final long q, final int ix, final long n) {
        return Words.la(child(q, ix)) == n && (Words.la(q + WORD) & MARK) == 0; // (V)
    }

    // ---------------------------------------------------------------- LLX / SCX

    /**
     * LLX of {@code node} (child {@code ix} of {@code parent}, or parent 0 if unknown), its word's
     * record protected in {@code slot}: the word (the snapshot's witness), or FAIL after helping
     * an SCX that froze the node. Read phase.
     */
    private long llx(final Guard g, final int slot, final long node, final long parent, final int ix) {
        final long w = g.protect(slot, node + WORD); // (2) acquire; pairs with (F), (M)
        if ((w & MARK) != 0) {
            if (!validates || parent != 0 && linked(parent, ix, node)) {
                helpOther(g, w & ~MARK);
            }
            return FAIL;
        }
        if (w == 0) {
            return w;
        }
        if (Words.la(w + STATE) == IN_PROGRESS) { // (3)
            helpOther(g, w);
            return FAIL;
        }
        return Words.la(node + WORD) == w ? w : FAIL; // (3) the paper's second read of marked
    }

    /**
     * Helps the SCX of record {@code u}, protected and in use (see the notes), from a read phase:
     * protects its nodes and words, checks that it is in progress and froze V[0], reserves them,
     * and helps in a write phase of its own.
     */
    private void helpOther(final Guard g, final long u) {
        final int n = (int) (Words.lp(u + SHAPE) & 0xFF); // plain: immutable, published by (F)
        for (int i = 0; i < n; i++) {
            g.protect(i, u + NODES + 8L * i);
            g.protect(HELP_WORD_SLOT + i, u + WORDS + 8L * i);
        }
        final long v0 = Words.lp(u + NODES);
        if (Words.la(u + STATE) != IN_PROGRESS || Words.la(v0 + WORD) != u) { // (3)
            return; // resolved, or not in use: nothing to help
        }
        g.reserve(0, u);
        for (int i = 0; i < n; i++) {
            g.reserve(1 + i, Words.lp(u + NODES + 8L * i));
            g.reserve(5 + i, Words.lp(u + WORDS + 8L * i));
        }
        g.beginWrite();
        try {
            help(g, u);
        } finally {
            g.endWrite();
        }
    }

    /**
     * SCX of the creator, in its write phase: V = the first {@code n} of (v0, v1, v2, v3) with the
     * words their LLXs returned, R = the nodes of V in {@code rmask}, and the update of link
     * {@code fld} from {@code old} to {@code nw}. Returns whether it committed; on false nothing
     * changed in the tree (the caller discards its new nodes).
     */
    private boolean scx(final Guard g, final int n, final int rmask, final long v0, final long w0, final long v1,
                        final long w1, final long v2, final long w2, final long v3, final long w3, final long fld,
                        final long old, final long nw) {
        final long u = g.allocate();
        records.add(1);
        Words.sp(u + REFS, 1); // holder (i): the creator
        Words.sp(u + STATE, IN_PROGRESS);
        Words.sp(u + ALL_FROZEN, 0);
        Words.sp(u + SHAPE, n | (long) rmask << 8);
        g.initLink(u + FLD, fld);
        g.initLink(u + OLD, old);
        g.initLink(u + NEW, nw);
        setV(g, u, 0, v0, w0);
        setV(g, u, 1, v1, w1);
        setV(g, u, 2, v2, w2);
        setV(g, u, 3, v3, w3);
        int held = 0;
        for (; held < n; held++) { // holders (iii): the LLX words' records
            final long e = Words.lp(u + WORDS + 8L * held);
            if (e != 0 && !RecordRefs.acquire(e)) {
                break;
            }
        }
        if (held < n) { // a witness's record was released: its node changed, the SCX would fail
            for (int i = 0; i < held; i++) {
                dropRef(g, Words.lp(u + WORDS + 8L * i));
            }
            discard(u);
            return false;
        }
        final Runnable stall = stallHook;
        if (stall != null) {
            stallHook = null; // once: the operations it runs do not stall
        }
        final boolean committed = help(g, u, stall, stallAt);
        for (int i = 0; i < n; i++) {
            dropRef(g, Words.lp(u + WORDS + 8L * i));
        }
        dropRef(g, u);
        return committed;
    }

    /**
     * Ends an SCX's read phase: reserves V (nodes 0..3, 0 for none) and the words their LLXs
     * returned (their records), then begins the write phase, which throws {@link Restart} if the
     * thread was neutralized meanwhile (nothing written yet: the caller reads again).
     */
    private static void beginScx(final Guard g, final long v0, final long w0, final long v1, final long w1,
                                 final long v2, final long w2, final long v3, final long w3) {
        g.reserve(0, v0);
        g.reserve(1, v1);
        g.reserve(2, v2);
        g.reserve(3, v3);
        g.reserve(4, w0);
        g.reserve(5, w1);
        g.reserve(6, w2);
        g.reserve(7, w3);
        g.beginWrite();
    }

    private static void setV(final Guard g, final long u, final int i, final long node, final long word) {
        g.initLink(u + NODES + 8L * i, node);
        g.initLink(u + WORDS + 8L * i, word);
    }

    /** The paper's Help(U): freeze V, then mark R, update, commit. Write phase. */
    private boolean help(final Guard g, final long u) {
        return help(g, u, null, 0);
    }

    /**
     * {@link #help(Guard, long)}; a creator under test runs {@code stall} (if not null) at step
     * {@code stallAt}: before freezing V[stallAt], after the freezes (|V|), or after the marks (|V| + 1).
     */
    private boolean help(final Guard g, final long u, final Runnable stall, final int stallAt) {
        final long shape = Words.lp(u + SHAPE);
        final int n = (int) (shape & 0xFF);
        final int rmask = (int) (shape >>> 8);
        for (int i = 0; i < n; i++) {
            if (stall != null && stallAt == i) {
                stall.run();
            }
            final long node = Words.lp(u + NODES + 8L * i);
            final long e = Words.lp(u + WORDS + 8L * i);
            if (!RecordRefs.acquire(u)) { // holder (ii) in advance; 0: resolved and released
                return Words.la(u + STATE) == COMMITTED; // (3)
            }
            if (g.cas(node + WORD, e, u)) { // (F) freeze; pairs with (2), (3)
                if (e != 0) {
                    dropRef(g, e);
                }
            } else {
                dropRef(g, u);
                if ((Words.la(node + WORD) & ~MARK) != u) { // (3) U | MARK: frozen and marked for U
                    if (Words.la(u + ALL_FROZEN) != 0) { // (3) pairs with (A)
                        return true;
                    }
                    Words.cas(u + STATE, IN_PROGRESS, ABORTED); // (S)
                    return false;
                }
            }
        }
        Words.sv(u + ALL_FROZEN, 1); // (A)
        if (stall != null && stallAt == n) {
            stall.run();
        }
        for (int i = 0; i < n; i++) {
            if ((rmask & 1 << i) != 0 && g.cas(Words.lp(u + NODES + 8L * i) + WORD, u, u | MARK)) { // (M)
                dropRef(g, u);
            }
        }
        if (stall != null && stallAt > n) {
            stall.run();
        }
        g.cas(Words.lp(u + FLD), Words.lp(u + OLD), Words.lp(u + NEW)); // (U) pairs with (1)
        if (Words.cas(u + STATE, IN_PROGRESS, COMMITTED)) { // (S)
            for (int i = 0; i < n; i++) {
                if ((rmask & 1 << i) != 0) {
                    retire(g, Words.lp(u + NODES + 8L * i));
                }
            }
        }
        return true;
    }

    /** Drops one hold on record {@code u} (0: none); the last one retires it. */
    private void dropRef(final Guard g, final long u) {
        if (u != 0 && Words.xadd(u + REFS, -1) == 1) { // (H)
            retire(g, u);
        }
    }

    // ---------------------------------------------------------------- rebalancing

    /** Fixes the first violation on {@code key}'s path, top down, until the path has none. */
    private void cleanup(final Guard g, final long key, final long[] r) {
        while (true) {
            search(g, key, r, true);
            final int violation = (int) (r[FLAGS] >>> 8);
            if (violation == NO_VIOLATION) {
                return;
            }
            try {
                if (violation == TAG_VIOLATION) {
                    fixTagged(g, r[GP], r[P], r[N], (int) r[IXP], (int) r[IXN]);
                } else {
                    fixUnderfull(g, r[GP], r[P], r[N], (int) r[IXP], (int) r[IXN]);
                }
            } catch (final Restart neutralized) {
                // search again
            }
        }
    }

    /** One attempt at tagged node {@code n}, child {@code ixN} of {@code p}, child {@code ixP} of {@code gp}. */
    private void fixTagged(final Guard g, final long gp, final long p, final long n, final int ixP, final int ixN) {
        if (p == entry) {
            fixRoot(g, n, true);
            return;
        }
        if (isTagged(p)) {
            return; // the search stops at the topmost violation: p changed under us
        }
        final long wg = llx(g, WORD_SLOT, gp, 0, 0);
        if (wg == FAIL || Words.la(child(gp, ixP)) != p) { // (3)
            return;
        }
        final long wp = llx(g, WORD_SLOT + 1, p, gp, ixP);
        if (wp == FAIL || Words.la(child(p, ixN)) != n) { // (3)
            return;
        }
        final long wn = llx(g, WORD_SLOT + 2, n, p, ixN);
        if (wn == FAIL) {
            return;
        }
        beginScx(g, gp, wg, p, wp, n, wn, 0, 0);
        long m = 0;
        long left = 0;
        long right = 0;
        boolean ok = false;
        try {
            final int pSize = size(p);
            final int nSize = size(n);
            final int c = pSize + nSize - 1;
            if (c <= degree) { // absorb
                m = newNode(g, c, false, false);
                for (int i = 0; i < c; i++) {
                    setChild(g, m, i, absorbedChild(p, n, ixN, nSize, i));
                }
                for (int i = 0; i < c - 1; i++) {
                    setKey(m, i, absorbedKey(p, n, ixN, nSize, i));
                }
            } else { // split
                final int l = c / 2;
                left = newNode(g, l, false, false);
                right = newNode(g, c - l, false, false);
                for (int i = 0; i < c; i++) {
                    setChild(g, i < l ? left : right, i < l ? i : i - l, absorbedChild(p, n, ixN, nSize, i));
                }
                for (int i = 0; i < c - 1; i++) {
                    if (i != l - 1) {
                        setKey(i < l ? left : right, i < l ? i : i - l, absorbedKey(p, n, ixN, nSize, i));
                    }
                }
                m = newNode(g, 2, false, gp != entry);
                setKey(m, 0, absorbedKey(p, n, ixN, nSize, l - 1));
                setChild(g, m, 0, left);
                setChild(g, m, 1, right);
            }
            ok = scx(g, 3, 0b110, gp, wg, p, wp, n, wn, 0, 0, child(gp, ixP), p, m);
        } finally {
            g.endWrite();
            if (!ok) {
                discard(m);
                discard(left);
                discard(right);
            }
        }
    }

    /**
     * One attempt at the root {@code n}: V = {entry, n}, R = {n}; with {@code untag} (root untag)
     * n is replaced by an untagged copy, otherwise (root absorb: n internal with one child) by its
     * child, read after n's LLX (the freeze checks that it stayed).
     */
    private void fixRoot(final Guard g, final long n, final boolean untag) {
        final long wp = llx(g, WORD_SLOT, entry, 0, 0);
        if (wp == FAIL || Words.la(child(entry, 0)) != n) { // (3)
            return;
        }
        final long wn = llx(g, WORD_SLOT + 1, n, entry, 0);
        if (wn == FAIL) {
            return;
        }
        final long onlyChild = untag ? 0 : Words.la(child(n, 0)); // (3)
        beginScx(g, entry, wp, n, wn, 0, 0, 0, 0);
        long m = 0;
        boolean ok = false;
        try {
            if (untag) {
                final int size = size(n);
                m = newNode(g, size, false, false);
                copyInternal(g, n, 0, m, 0, size);
            }
            ok = scx(g, 2, 0b10, entry, wp, n, wn, 0, 0, 0, 0, child(entry, 0), n, untag ? m : onlyChild);
        } finally {
            g.endWrite();
            if (!ok) {
                discard(m);
            }
        }
    }

    /** Child {@code i} of p with n's children in place of n (child {@code ixN}, {@code nSize} children). */
    private long absorbedChild(final long p, final long n, final int ixN, final int nSize, final int i) {
        if (i < ixN) {
            return Words.lp(child(p, i));
        }
        return i < ixN + nSize ? Words.lp(child(n, i - ixN)) : Words.lp(child(p, i - nSize + 1));
    }

    /** Routing key {@code i} of p with n's keys in place of n. */
    private static long absorbedKey(final long p, final long n, final int ixN, final int nSize, final int i) {
        if (i < ixN) {
            return key(p, i);
        }
        return i < ixN + nSize - 1 ? key(n, i - ixN) : key(p, i - nSize + 1);
    }

    private void copyInternal(final Guard g, final long from, final int fromIx, final long to, final int toIx,
                              final int children) {
        for (int i = 0; i < children; i++) {
            setChild(g, to, toIx + i, Words.lp(child(from, fromIx + i)));
        }
        for (int i = 0; i < children - 1; i++) {
            setKey(to, toIx + i, key(from, fromIx + i));
        }
    }

    /** One attempt at underfull node {@code n}, child {@code ixN} of {@code p}, child {@code ixP} of {@code gp}. */
    private void fixUnderfull(final Guard g, final long gp, final long p, final long n, final int ixP,
                              final int ixN) {
        if (p == entry) {
            fixRoot(g, n, false);
            return;
        }
        final int pSize = size(p);
        if (pSize < 2 || isTagged(p)) {
            return; // p changed under us: the next search finds it
        }
        final int ixS = ixN > 0 ? ixN - 1 : ixN + 1;
        final long s = g.protect(SIB_SLOT, child(p, ixS)); // (1)
        if (validates && (Words.la(p + WORD) & MARK) != 0) { // (V)
            return;
        }
        if (isTagged(s)) {
            fixTagged(g, gp, p, s, ixP, ixS);
            return;
        }
        final int ixL = Math.min(ixN, ixS);
        final long left = ixL == ixN ? n : s;
        final long right = ixL == ixN ? s : n;
        final long wg = llx(g, WORD_SLOT, gp, 0, 0);
        if (wg == FAIL || Words.la(child(gp, ixP)) != p) { // (3)
            return;
        }
        final long wp = llx(g, WORD_SLOT + 1, p, gp, ixP);
        if (wp == FAIL || Words.la(child(p, ixL)) != left || Words.la(child(p, ixL + 1)) != right) { // (3)
            return;
        }
        final long wl = llx(g, WORD_SLOT + 2, left, p, ixL);
        if (wl == FAIL) {
            return;
        }
        final long wr = llx(g, WORD_SLOT + 3, right, p, ixL + 1);
        if (wr == FAIL || isLeaf(left) != isLeaf(right)) {
            return;
        }
        beginScx(g, gp, wg, p, wp, left, wl, right, wr);
        long m = 0;
        long l2 = 0;
        long r2 = 0;
        long top = 0;
        boolean ok = false;
        try {
            final boolean leaf = isLeaf(left);
            final int ls = size(left);
            final int c = ls + size(right);
            if (c < 2 * minSize) { // join
                m = merged(g, leaf, left, right, p, ixL, 0, c, c);
                if (gp == entry && pSize == 2) {
                    top = m;
                } else {
                    top = newNode(g, pSize - 1, false, false);
                    for (int i = 0, j = 0; i < pSize; i++) {
                        if (i != ixL + 1) {
                            setChild(g, top, j++, i == ixL ? m : Words.lp(child(p, i)));
                        }
                    }
                    for (int i = 0, j = 0; i < pSize - 1; i++) {
                        if (i != ixL) {
                            setKey(top, j++, key(p, i));
                        }
                    }
                }
            } else { // redistribute
                final int half = c / 2;
                l2 = merged(g, leaf, left, right, p, ixL, 0, half, c);
                r2 = merged(g, leaf, left, right, p, ixL, half, c, c);
                top = newNode(g, pSize, false, false);
                copyInternal(g, p, 0, top, 0, pSize);
                setChild(g, top, ixL, l2);
                setChild(g, top, ixL + 1, r2);
                setKey(top, ixL, leaf ? key(r2, 0) : mergedKey(left, right, p, ixL, ls, half - 1));
            }
            ok = scx(g, 4, 0b1110, gp, wg, p, wp, left, wl, right, wr, child(gp, ixP), p, top);
        } finally {
            g.endWrite();
            if (!ok) {
                discard(m);
                discard(l2);
                discard(r2);
                if (top != m) {
                    discard(top);
                }
            }
        }
    }

    /**
     * A new node holding entries (or children) [from, to) of the concatenation of siblings left
     * and right ({@code c} in all; for internal nodes with p's routing key {@code ixL} between).
     */
    private long merged(final Guard g, final boolean leaf, final long left, final long right, final long p,
                        final int ixL, final int from, final int to, final int c) {
        final int ls = size(left);
        final long m = newNode(g, to - from, leaf, false);
        for (int i = from; i < to; i++) {
            final long src = i < ls ? left : right;
            final int j = i < ls ? i : i - ls;
            if (leaf) {
                setEntry(m, i - from, key(src, j), val(src, j));
            } else {
                setChild(g, m, i - from, Words.lp(child(src, j)));
            }
        }
        if (!leaf) {
            for (int i = from; i < to - 1; i++) {
                setKey(m, i - from, mergedKey(left, right, p, ixL, ls, i));
            }
        }
        return m;
    }

    /** Routing key {@code i} of the concatenation of internal siblings left and right, p's key ixL between. */
    private static long mergedKey(final long left, final long right, final long p, final int ixL, final int ls,
                                  final int i) {
        if (i < ls - 1) {
            return key(left, i);
        }
        return i == ls - 1 ? key(p, ixL) : key(right, i - ls);
    }

    // ---------------------------------------------------------------- navigation and scans

    /**
     * Copies the leaf on {@code key}'s search path, with its range's bounds, into {@code out}.
     * Linearizable: the copy is the map's content of the leaf's range at a time during the call
     * when the leaf was on the path. A scan that moves from one leaf to the next by
     * {@link AbTreeLeafCopy#above()} (or {@link AbTreeLeafCopy#below()} - 1) is weakly consistent:
     * it sees every key present for its whole duration and none absent for its whole duration.
     */
    public void copyLeaf(final long key, final AbTreeLeafCopy out) {
        if (out.keys.length < degree) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "the AbTreeLeafCopy holds %d entries; this tree's leaves hold up to %d", out.keys.length, degree));
        }
        final int op = enter();
        try (Guard g = domain.pin()) {
            final long[] r = g.locals();
            while (true) {
                search(g, key, r, false);
                final long l = r[N];
                final int size = size(l);
                for (int i = 0; i < size; i++) {
                    out.keys[i] = key(l, i);
                    out.values[i] = val(l, i);
                }
                try {
                    g.poll();
                } catch (final Restart neutralized) {
                    continue; // the leaf may have been freed while it was copied
                }
                out.size = size;
                out.lo = r[LO];
                out.hi = r[HI];
                out.hasLo = (r[FLAGS] & HAS_LO) != 0;
                out.hasHi = (r[FLAGS] & HAS_HI) != 0;
                return;
            }
        } finally {
            exit(op);
        }
    }

    /**
     * Finds the least key {@code >= key}: fills {@code into} with the leaf that holds it and
     * returns its index there, or -1 if there is none. Weakly consistent, like a scan: the key
     * was present at a time during the call, and no key between {@code key} and it was present
     * for the whole call.
     */
    public int ceiling(final long key, final AbTreeLeafCopy into) {
        long k = key;
        while (true) {
            copyLeaf(k, into);
            final int i = into.ceilingIndex(k);
            if (i < into.size()) {
                return i;
            }
            if (!into.hasAbove()) {
                return -1;
            }
            k = into.above();
        }
    }

    /** Finds the greatest key {@code <= key}, as {@link #ceiling} finds the least key {@code >= key}. */
    public int floor(final long key, final AbTreeLeafCopy into) {
        long k = key;
        while (true) {
            copyLeaf(k, into);
            final int i = into.floorIndex(k);
            if (i >= 0) {
                return i;
            }
            if (!into.hasBelow()) {
                return -1;
            }
            k = into.below() - 1; // below() > Long.MIN_VALUE: a routing key
        }
    }

    // ---------------------------------------------------------------- bulk load

    /**
     * Loads strictly ascending {@code keys} with their {@code values} into this empty tree,
     * building full nodes (every leaf and internal node holds b entries or children, but the last
     * two of a level, which share what is left evenly so that both hold at least a). Call it
     * before the tree is shared, with no other operation running.
     *
     * @throws IllegalArgumentException if the arrays differ in length or the keys are not strictly
     *                                  ascending
     * @throws IllegalStateException    if the tree is not empty, or closed
     */
    public void bulkLoad(final long[] keys, final long[] values) {
        Objects.requireNonNull(keys, "keys must not be null");
        Objects.requireNonNull(values, "values must not be null");
        if (keys.length != values.length) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "bulk load: %d keys but %d values", keys.length, values.length));
        }
        for (int i = 1; i < keys.length; i++) {
            if (keys[i] <= keys[i - 1]) {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                        "bulk load: keys must be strictly ascending; key %d at index %d follows %d",
                        keys[i], i, keys[i - 1]));
            }
        }
        final int op = enter();
        try (Guard g = domain.pin()) {
            final long oldRoot = Words.lp(child(entry, 0));
            if (!isLeaf(oldRoot) || size(oldRoot) != 0) {
                throw new IllegalStateException("bulk load needs an empty tree");
            }
            if (keys.length == 0) {
                return;
            }
            int count = chunks(keys.length);
            long[] nodes = new long[count];
            long[] mins = new long[count];
            for (int c = 0, from = 0; c < count; c++) {
                final int len = chunk(keys.length, c, count);
                final long leaf = newNode(g, len, true, false);
                for (int i = 0; i < len; i++) {
                    setEntry(leaf, i, keys[from + i], values[from + i]);
                }
                nodes[c] = leaf;
                mins[c] = keys[from];
                from += len;
            }
            while (count > 1) {
                final int parents = chunks(count);
                final long[] up = new long[parents];
                final long[] upMins = new long[parents];
                for (int c = 0, from = 0; c < parents; c++) {
                    final int len = chunk(count, c, parents);
                    final long node = newNode(g, len, false, false);
                    for (int i = 0; i < len; i++) {
                        setChild(g, node, i, nodes[from + i]);
                        if (i > 0) {
                            setKey(node, i - 1, mins[from + i]);
                        }
                    }
                    up[c] = node;
                    upMins[c] = mins[from];
                    from += len;
                }
                nodes = up;
                mins = upMins;
                count = parents;
            }
            Words.releaseFence(); // (0)
            Words.sp(child(entry, 0), nodes[0]);
            discard(oldRoot);
            entries.add(keys.length);
        } finally {
            exit(op);
        }
    }

    /** The number of nodes for {@code n} entries or children: full ones, the last two balanced. */
    private int chunks(final int n) {
        return (n + degree - 1) / degree;
    }

    /** The size of chunk {@code c} of {@code count} for {@code n}: b, but the last two share the rest evenly. */
    private int chunk(final int n, final int c, final int count) {
        if (count == 1) {
            return n;
        }
        final int lastTwo = n - (count - 2) * degree;
        if (c < count - 2) {
            return degree;
        }
        return c == count - 2 ? lastTwo - lastTwo / 2 : lastTwo / 2;
    }

    // ---------------------------------------------------------------- test hooks

    /**
     * Test hook: the next SCX that this tree's operations create stalls its creator at step
     * {@code at} (before freezing V[at]; |V|: after every freeze; |V| + 1: after the marks, before
     * the update CAS) while {@code meanwhile} runs on the creator's thread, nested in its pinned
     * section (so the stalled creator keeps its protections, as a preempted one does). Lets tests
     * leave frozen and marked nodes for other operations to meet and help. Single-threaded tests
     * only.
     */
    void stallNextScx(final int at, final Runnable meanwhile) {
        stallAt = at;
        stallHook = meanwhile;
    }

    // ---------------------------------------------------------------- teardown and checks

    @Override
    void freeNodes() {
        final Map<Long, Long> heldRecords = new HashMap<>();
        long[] stack = new long[64];
        int n = 0;
        stack[n++] = entry;
        while (n > 0) {
            final long node = stack[--n];
            final long w = Words.lp(node + WORD);
            if (w != 0) {
                heldRecords.merge(w & ~MARK, 1L, Long::sum);
            }
            if (!isLeaf(node)) {
                final int size = size(node);
                if (n + size > stack.length) {
                    stack = Arrays.copyOf(stack, Math.max(2 * stack.length, n + size));
                }
                for (int i = 0; i < size; i++) {
                    stack[n++] = Words.lp(child(node, i));
                }
            }
            freeNode(node);
        }
        for (final Map.Entry<Long, Long> e : heldRecords.entrySet()) {
            final long u = e.getKey();
            if (Words.lp(u + REFS) == e.getValue()) { // every hold is a reachable node's: the last ones
                freeNode(u);
            } else {
                Words.sp(u + REFS, Words.lp(u + REFS) - e.getValue());
            }
        }
    }

    /**
     * Checks the tree while no other thread modifies it and every update has ended (so every
     * violation was fixed): ascending keys within every leaf and within the routing bounds of its
     * path; no tagged node; every node but the root with at least a and at most b keys or
     * children; an internal root with at least two children; all leaves at one depth h; h within
     * the thesis' bound 1 + log_a(n / 2) (n >= 2 keys); no marked word on a reachable node, every
     * record a reachable word names not in progress, with refs equal to the words naming it; and
     * {@link #size()} equal to the keys found. Returns h (1: the root is a leaf).
     *
     * @throws IllegalStateException naming the first violation found
     */
    int checkInvariants() {
        final long root = Words.lp(child(entry, 0));
        final int[] leafDepth = {-1};
        final long[] keys = {0};
        final Map<Long, Long> words = new HashMap<>();
        countWord(entry, words);
        check(root, true, 1, Long.MIN_VALUE, false, 0, false, leafDepth, keys, words);
        for (final Map.Entry<Long, Long> e : words.entrySet()) {
            final long u = e.getKey();
            require(Words.lp(u + STATE) != IN_PROGRESS, "record 0x%x in progress", u);
            require(Words.lp(u + REFS) == e.getValue(), "record 0x%x has %d refs, %d words name it", u,
                    Words.lp(u + REFS), e.getValue());
        }
        require(size() == keys[0], "size() is %d, the leaves hold %d keys", size(), keys[0]);
        final int h = leafDepth[0];
        if (keys[0] >= 2) {
            final double bound = 1 + Math.log(keys[0] / 2.0) / Math.log(minSize);
            require(h <= bound + 1e-9, "height %d over the bound %.2f for %d keys, a = %d", h, bound, keys[0],
                    minSize);
        }
        return h;
    }

    private void check(final long node, final boolean isRoot, final int depth, final long lo, final boolean hasLo,
                       final long hi, final boolean hasHi, final int[] leafDepth, final long[] keys,
                       final Map<Long, Long> words) {
        countWord(node, words);
        final int size = size(node);
        require(!isTagged(node), "tagged node at depth %d", depth);
        require(size <= degree, "node of size %d over b = %d", size, degree);
        if (isLeaf(node)) {
            require(isRoot || size >= minSize, "leaf of %d keys under a = %d at depth %d", size, minSize, depth);
            require(leafDepth[0] < 0 || leafDepth[0] == depth, "leaves at depths %d and %d", leafDepth[0], depth);
            leafDepth[0] = depth;
            for (int i = 0; i < size; i++) {
                final long k = key(node, i);
                require(i == 0 || k > key(node, i - 1), "leaf keys not ascending: %d after %d", k,
                        i == 0 ? 0 : key(node, i - 1));
                require((!hasLo || k >= lo) && (!hasHi || k < hi), "key %d outside its routing range", k);
            }
            keys[0] += size;
            return;
        }
        require(isRoot ? size >= 2 : size >= minSize, "internal node of %d children at depth %d", size, depth);
        for (int i = 0; i < size; i++) {
            final boolean cHasLo = i > 0 || hasLo;
            final long cLo = i > 0 ? key(node, i - 1) : lo;
            final boolean cHasHi = i < size - 1 || hasHi;
            final long cHi = i < size - 1 ? key(node, i) : hi;
            require(i == 0 || i == size - 1 || key(node, i) > key(node, i - 1), "routing keys not ascending");
            check(Words.lp(child(node, i)), false, depth + 1, cLo, cHasLo, cHi, cHasHi, leafDepth, keys, words);
        }
    }

    private static void countWord(final long node, final Map<Long, Long> words) {
        final long w = Words.lp(node + WORD);
        require((w & MARK) == 0, "reachable node 0x%x is marked", node);
        if (w != 0) {
            words.merge(w, 1L, Long::sum);
        }
    }

    private static void require(final boolean ok, final String format, final Object... args) {
        if (!ok) {
            throw new IllegalStateException(String.format(Locale.ROOT, format, args));
        }
    }
}
