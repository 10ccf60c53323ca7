package dev.limbo.structures;

import dev.limbo.core.Words;
import dev.limbo.reclaim.rc.Cdrc;
import dev.limbo.reclaim.rc.RcType;

import java.util.Objects;

/**
 * A lock-free LIFO stack of {@code long} values whose off-heap nodes are reclaimed by concurrent
 * deferred reference counting ({@link Cdrc}): no operation retires or frees anything by hand.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm and source: Treiber's stack (IBM RJ 5118, 1986) as the CDRC paper writes it (Anderson,
 * Blelloch, Wei, PLDI 2021, §2 Figure 1a; digest §5): counted nodes {value, counted next}, a counted
 * top word, pop = snapshot of top + CAS of top to the node's next. contains is the paper's find, a
 * traversal with hand-over-hand protection. Mode: with snapshots (the benchmarks' cdrc) a node is
 * protected by a snapshot (an announcement, no count change); without (cdrc-rc) by a counted load
 * (rc.load / rc.release: an increment and a decrement per node).
 *
 * Layout: a node is a counted object of type NODE: Cdrc.HEADER, value (8), next (8, a strong
 * counted field, never marked). The top word is the one counted field of a root object of type
 * ROOT, allocated by the constructor and owned by the stack until close.
 *
 * Operations:
 *  push(v) - allocate a node (count 1, ours), write its value; w = top (2); next = w (plain store,
 *      the node is unpublished); CAS(top, w, node) (1), retried with a fresh w. The CAS moves two
 *      references at once: ours to the node goes into top, and top's to w goes into node.next, so
 *      no count changes (departure from Figure 1a, whose push takes a counted load of top and
 *      retires it on success: +1 and -1 on w). The word CAS compares is whatever top holds, so no
 *      ABA: if w's object died and its block was reused, top's reference to the new object is the
 *      one that moves.
 *  pop() - t = protect(top) (3) (snapshot or counted load); 0: empty. next = t.next (4);
 *      rc.cas(top, t, next) (5): it announces next before the compare, and on success gives next
 *      the reference top gains and retires top's reference to t; read the value (4); drop t.
 *  contains(v) - cur = protect(top) (3); while cur != 0: its value (4) equal to v: true; next =
 *      protect(cur.next) (6); drop cur; cur = next. At most 2 protections at once (SNAPSHOTS).
 *  isEmpty - an acquire load of top (2). size - a traversal like contains that counts.
 *
 * Invariants: top (in the root) points to a chain of nodes linked by next, ending in 0; a node's
 * value and next never change after its publication by (1). Counts (Cdrc's Theorem 1): a linked node is referenced
 * by top or by its predecessor's next; a popped node by the delayed retire of (5) until ejected,
 * and by the next word of no node (its predecessor, if any, was popped before it).
 *
 * Linearization points: push - its successful CAS (1). pop - its successful cas (5), or the
 * protecting load of top (3) that read 0. contains - its protecting load of top (3): the chain from
 * that node is immutable, so the traversal reads exactly the stack's content at that moment (the
 * nodes stay alive because each protected node's next holds a count on its successor). isEmpty -
 * its load (2). size - as contains (the length of the chain it read at its load of top).
 *
 * Progress: push and pop are lock-free (a CAS fails only if another push or pop succeeded; the
 * acquire behind a snapshot or a load loops only while top keeps changing); contains is lock-free,
 * wait-free once it holds the top node (its fields never change); isEmpty is wait-free.
 *
 * Memory ordering:
 *  (1) volatile CAS of top: publishes the new node's plain initialization (value, next) and its
 *      header (Cdrc.allocate's opaque stores), to (3) and to (2) followed by a protection.
 *  (2) acquire load of top (push's expected value; isEmpty).
 *  (3) rc.snapshot / rc.load of top: acquire-retire's announce + fence + validating acquire load
 *      (AcquireRetire (1)-(3)); pairs with (1) and (5).
 *  (4) plain loads of a protected node's value and next: written before its publication (1),
 *      which (3)/(6) acquired; never written again.
 *  (5) rc.cas(top, t, next): Cdrc's (9), volatile; its retire of t pairs with the protections (3)
 *      of other threads through the acquire-retire scan (AcquireRetire (4)-(6)).
 *  (6) rc.snapshot / rc.load of cur.next: as (3); the word never changes, so it validates at once.
 *
 * Reclamation and ABA: automatic. Whoever drops the last reference to a node (top's, via the
 * deferred retire of (5); a node's next, when that node dies; a traversal's counted load) makes
 * it die, and its death retires its next's reference in turn, so a popped chain is freed a node
 * at a time without recursion. A node is never freed while protected: a snapshot holds back the
 * retires of it (acquire-retire), a counted load holds a count. pop's CAS (5) expects t, which its
 * protection keeps alive, so the address cannot be reused in between (the ABA of the manual stack
 * cannot happen); next is alive during (5) because t, alive, still references it. close() drops
 * the root's reference (the root dies, retiring top's reference) and flushes the closing
 * thread's delayed decrements; decrements other threads still delay are applied by their next
 * flush or ejects, or by Cdrc.close().
 * }</pre>
 *
 * <p>{@link #RESERVED} is rejected as a value and returned by {@link #pop} on an empty stack. The
 * caller owns the {@link Cdrc} domain, which may serve other structures too, and closes it after
 * the structures (a closed domain refuses their allocations).
 */
public final class CdrcTreiberStack extends StructureLifecycle {

    /** Offset of a node's value. */
    static final long VALUE = Cdrc.HEADER;
    /** Offset of a node's counted next field. */
    static final long NEXT = Cdrc.HEADER + Long.BYTES;
    /** The node type: value, then the counted next. */
    public static final RcType NODE = new RcType("CdrcTreiberStack.node", NEXT + Long.BYTES, NEXT);
    /** The root type: one counted field, the top word. */
    public static final RcType ROOT = new RcType("CdrcTreiberStack.root", Cdrc.HEADER + Long.BYTES, Cdrc.HEADER);
    /** The most protections (snapshots, or counted loads) one operation holds at once: contains' cur and next. */
    public static final int SNAPSHOTS = 2;

    private final Cdrc rc;
    private final boolean snapshots;
    private final int nodeType;
    private final long root;
    private final long top;

    /**
     * An empty stack whose nodes live in {@code rc}.
     *
     * @param rc        the domain (shared with other structures, closed by the caller after them)
     * @param snapshots whether operations protect nodes with snapshots (true) or counted loads only
     * @throws NullPointerException  if {@code rc} is null
     * @throws IllegalStateException if {@code rc} is closed
     */
    public CdrcTreiberStack(final Cdrc rc, final boolean snapshots) {
        this.rc = Objects.requireNonNull(rc, "rc");
        this.snapshots = snapshots;
        this.nodeType = CdrcTypes.id(rc, NODE);
        this.root = rc.allocate(CdrcTypes.id(rc, ROOT));
        this.top = root + Cdrc.HEADER;
    }

    /** Whether operations protect nodes with snapshots (true) or with counted loads. */
    public boolean snapshots() {
        return snapshots;
    }

    /** Pushes {@code value} ({@link #RESERVED} is rejected). */
    public void push(final long value) {
        checkValue(value);
        final int op = enter();
        try {
            final long node = rc.allocate(nodeType);
            Words.sp(node + VALUE, value);
            long w = Words.la(top); // (2)
            Words.sp(node + NEXT, w);
            while (!Words.cas(top, w, node)) { // (1) top's reference to w moves into node.next
                w = Words.la(top); // (2)
                Words.sp(node + NEXT, w); // unpublished still
            }
        } finally {
            exit(op);
        }
    }

    /** Pops the top value, or returns {@link #RESERVED} if the stack is empty. */
    public long pop() {
        final int op = enter();
        try {
            while (true) {
                final long t = protect(top); // (3)
                if (t == 0) {
                    return RESERVED;
                }
                final long next = Words.lp(t + NEXT); // (4)
                final boolean popped = rc.cas(top, t, next); // (5)
                final long value = popped ? Words.lp(t + VALUE) : RESERVED; // (4)
                unprotect(t);
                if (popped) {
                    return value;
                }
            }
        } finally {
            exit(op);
        }
    }

    /** Whether {@code value} is in the stack (linearizable: the stack's content when the call read its top). */
    public boolean contains(final long value) {
        final int op = enter();
        try {
            long cur = protect(top); // (3)
            while (cur != 0) {
                if (Words.lp(cur + VALUE) == value) { // (4)
                    unprotect(cur);
                    return true;
                }
                final long next = protect(cur + NEXT); // (6)
                unprotect(cur);
                cur = next;
            }
            return false;
        } finally {
            exit(op);
        }
    }

    /** Whether the stack looked empty at some moment during the call. */
    public boolean isEmpty() {
        final int op = enter();
        try {
            return Words.la(top) == 0; // (2)
        } finally {
            exit(op);
        }
    }

    /** The number of values, counted by a traversal of the chain that top held when the call read it. O(n). */
    public long size() {
        final int op = enter();
        try {
            long n = 0;
            long cur = protect(top);
            while (cur != 0) {
                n++;
                final long next = protect(cur + NEXT);
                unprotect(cur);
                cur = next;
            }
            return n;
        } finally {
            exit(op);
        }
    }

    /** Drops the root (its death retires top's reference, and with it the chain) and flushes. */
    @Override
    void freeNodes() {
        rc.release(root);
        rc.flush();
    }

    private long protect(final long field) {
        return snapshots ? rc.snapshot(field) : rc.load(field);
    }

    private void unprotect(final long p) {
        if (snapshots) {
            rc.releaseSnapshot(p);
        } else {
            rc.release(p);
        }
    }
}
