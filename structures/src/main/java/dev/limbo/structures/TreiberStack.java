package dev.limbo.structures;

import dev.limbo.core.Layouts;
import dev.limbo.core.Words;
import dev.limbo.reclaim.Guard;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Restart;

import static dev.limbo.structures.LinkedNodeLayout.NEXT;
import static dev.limbo.structures.LinkedNodeLayout.VALUE;

/**
 * A lock-free LIFO stack of {@code long} values with nodes in off-heap memory.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm: Treiber's stack (R. K. Treiber, "Systems programming: coping with parallelism", IBM
 * RJ 5118, 1986), with hazard-pointer-style protection of the top node (Michael, TPDS 2004, §4.1),
 * and a pop in two steps, claim then unlink, so that contains can traverse the stack under every
 * scheme. The claim is Harris's logical deletion (DISC 2001) applied to the top: bit 0 (MARK) of
 * the top word says "the top node is being popped", bit 0 of a node's next says "this node was
 * claimed".
 *  push(v): node = {v, next}; w = top (4), helping first while it is marked; next = w; CAS(top, w,
 *      node) (1); retry with a fresh w.
 *  pop(): w = protect(0, top) (2); 0: empty; marked: help, retry. next = w.next (3);
 *      claim: CAS(top, w, w | MARK) (1); mark: w.next = next | MARK (5); unlink:
 *      CAS(top, w | MARK, next) (1), which fails only if a helper did it; read the value (3) and
 *      retire w. A failed claim retries.
 *  help (a push or pop that reads a marked top w | MARK): protect(0, top) (2) validates it; mark
 *      w.next as the claimer would (5), then unlink (1). Helpers never retire.
 *  contains(v): w = protect(0, top) (2); cur = w unmarked, its value skipped if w is marked (popped
 *      already). Step: next = protect(s, cur.next) (6), alternating slots 0 and 1; if cur is the
 *      claimed top, re-read top (4): changed -> restart from top; else next marked -> restart
 *      (cur was claimed: its successor may be popped). Confirm the answer with a poll.
 *  isEmpty(): w = top (4); unmarked: w == 0. Marked (a pop in progress): w = protect(0, top) (2):
 *      0, or marked with w.next (3) unmarked 0.
 *
 * Invariants: top points to a chain of nodes linked through next (marks ignored), ending in 0; a
 * node's value never changes, and its next only from unmarked to marked, by a claim. top is marked
 * only between a pop's claim and the unlink of the same node (one claim at a time: a claim expects
 * an unmarked top, a push never links onto a marked one); a node's next is marked only after top
 * was marked to it, and before top moves past it. So a node whose next is unmarked at time T is
 * linked at T (if it was ever linked before T): it can leave the stack only after its claim and
 * mark; and nodes below a linked node are linked (LIFO: a node is unlinked only from the top).
 * The stack's abstract content is the chain from top, without the top node if top is marked.
 *
 * Linearization points: push - its successful CAS (1). pop - its successful claim (1), or the
 * protect (2) that read 0. contains - its last (successful pass's) read of top (2): the chain from
 * there is immutable but for marks, so it reads exactly the content at that moment. isEmpty - its
 * load (4) if unmarked, else its protect (2) (an abstract content that is empty: 0, or a marked
 * top whose node's next is 0; that next was read after, but it never changes from 0).
 *
 * Progress: lock-free; a CAS fails only if another operation's CAS succeeded; a marked top is
 * unlinked by whoever meets it (help), so a claimer that stalls blocks nobody. contains restarts
 * only when top moved past a claimed node or a node was claimed, i.e. after other pops' progress.
 *
 * Memory ordering:
 *  (1) volatile CAS of top: a pushed node's plain initialization (value, next) happens-before any
 *      thread that reads the node through (2); the claim and the unlink order the mark (5) before
 *      the node leaves the stack.
 *  (2) protect(0, top): an acquire load (epoch schemes) or publish + fence + re-load (hp), so the
 *      node read is initialized and safe: it was linked at the re-load.
 *  (3) plain loads of a protected node's value and next: immutable but for the mark, which a
 *      claimed node's reader tolerates (it only reads the address).
 *  (4) acquire load of top (push's expected word; isEmpty's first read; contains' validation of
 *      a claimed top).
 *  (5) release store of next | MARK into a claimed node's next (Guard.store), by the claimer
 *      and by helpers: all write the same word, which holds next or next | MARK only, so no write
 *      is lost. After the claim (1); before the unlink (1), whose volatile CAS orders it first, so
 *      that whoever sees the node unlinked (a pop of its successor, and the scan that frees that
 *      successor) is ordered after the mark.
 *  (6) protect(s, cur.next): as (2). Under a scheme that needs validation (hp), the word it
 *      returns was re-read after the protection was published; unmarked, it shows cur not
 *      claimed then, so cur and its successor next were still linked: next had not been retired.
 *      For a claimed top, (4) after (6) finding top unchanged shows the same.
 *
 * Reclamation and ABA: pop retires the node it claimed, after its unlink (its own, or a
 * helper's); a node is claimed once (a claim expects the unmarked top, and a claimed node never
 * becomes the unmarked top again), so retired once. The ABA problem of Treiber's stack (top read
 * as A, A popped and freed, reused and pushed again, the stale CAS succeeding with a stale next)
 * cannot happen: A is protected from the read (2) to the CASes, so it is not freed and so not
 * reused meanwhile. A traversal never follows next out of a node that may be unlinked (see (6)):
 * without the claim, a popped node's successor could be popped and freed while a traversal still
 * stands on the popped node, and hp's validation could not tell (next never changes). close()
 * frees the chain and the top word only after every operation has ended (OffHeapStructure's
 * in-flight count).
 *
 * Neutralization (Guard, "Neutralization"): pop's and help's protect and their read of next are
 * the read phase; they reserve the node and call beginWrite before the CASes (1) and the store
 * (5), so that next came from a node that was safe (a restart starts over), and pop reads the
 * value in the write phase. push's fast path reads no node, so it has no read phase, nor has
 * isEmpty's. contains and isEmpty's slow path are read phases, confirmed by a poll. Links go
 * through the guard (initLink, store on retry, cas); the top that push links its node to is not
 * protected (push never dereferences it), so a counting scheme must count a target it did not
 * protect (LFRC's type-stable records allow it).
 * }</pre>
 */
public final class TreiberStack extends OffHeapStructure {

    /** Protection slots one operation needs: contains' cur and next. */
    static final int SLOTS = 2;
    /** The claim mark, bit 0 of the top word and of a claimed node's next. */
    static final long MARK = 1;

    private final long top;

    /** A stack over {@code domain} (records of at least 16 bytes, at least 2 slots). */
    public TreiberStack(final ReclaimDomain domain) {
        super(domain, SLOTS, LinkedNodeLayout.SIZE);
        domain.declareLinks(NEXT);
        this.top = domain.allocator().allocateZeroed(Layouts.PADDED);
    }

    /** Pushes {@code value} ({@link #RESERVED} is rejected). */
    public void push(final long value) {
        checkValue(value);
        final int op = enter();
        try (Guard g = domain.pin()) {
            final long node = g.allocate();
            Words.sp(node + VALUE, value);
            long t = unmarkedTop(g);
            g.initLink(node + NEXT, t);
            while (!g.cas(top, t, node)) { // (1)
                t = unmarkedTop(g);
                g.store(node + NEXT, t); // unpublished still: a retry relinks it
            }
        } finally {
            exit(op);
        }
    }

    /** The top word, once unmarked: a pending pop is helped first. */
    private long unmarkedTop(final Guard g) {
        long t = Words.la(top); // (4)
        while ((t & MARK) != 0) {
            help(g);
            t = Words.la(top); // (4)
        }
        return t;
    }

    /** Finishes the pop whose claim marked top, if it still does: marks the node's next, unlinks it. */
    private void help(final Guard g) {
        final long w;
        final long next;
        try {
            w = g.protect(0, top); // (2)
            if ((w & MARK) == 0) {
                return;
            }
            next = Words.lp((w & ~MARK) + NEXT); // (3)
            g.reserve(0, w);
            g.beginWrite();
        } catch (final Restart neutralized) {
            return; // the caller reads top again
        }
        if ((next & MARK) == 0) {
            g.store((w & ~MARK) + NEXT, next | MARK); // (5) the claimer writes the same word
        }
        g.cas(top, w, next & ~MARK); // (1)
        g.endWrite();
    }

    /** Pops the top value, or returns {@link #RESERVED} if the stack is empty. */
    public long pop() {
        final int op = enter();
        try (Guard g = domain.pin()) {
            while (true) {
                final long t;
                final long next;
                try {
                    t = g.protect(0, top); // (2)
                    if (t == 0) {
                        return RESERVED;
                    }
                    if ((t & MARK) != 0) {
                        help(g);
                        continue;
                    }
                    next = Words.lp(t + NEXT); // (3) unmarked: t is unclaimed (see the notes)
                    g.reserve(0, t);
                    g.beginWrite();
                } catch (final Restart neutralized) {
                    continue; // next may have been read from a freed node
                }
                if (!g.cas(top, t, t | MARK)) { // (1) the claim
                    g.endWrite();
                    continue;
                }
                g.store(t + NEXT, next | MARK); // (5) a helper writes the same word
                g.cas(top, t | MARK, next); // (1) fails only if a helper did it
                final long value = Words.lp(t + VALUE); // (3)
                g.retire(t);
                g.endWrite();
                return value;
            }
        } finally {
            exit(op);
        }
    }

    /**
     * Whether {@code value} is in the stack (linearizable: the stack's content when the call last
     * read its top). O(n).
     */
    public boolean contains(final long value) {
        final int op = enter();
        try (Guard g = domain.pin()) {
            while (true) {
                try {
                    final boolean found = find(g, value);
                    g.poll();
                    return found;
                } catch (final Restart neutralized) {
                    // the answer may rest on freed nodes: search again
                }
            }
        } finally {
            exit(op);
        }
    }

    /** The traversal of contains, restarted from top while a node it stands on is claimed. */
    private boolean find(final Guard g, final long value) {
        retry:
        while (true) {
            final long w = g.protect(0, top); // (2)
            boolean claimedTop = (w & MARK) != 0;
            long cur = w & ~MARK;
            int slot = 1;
            while (cur != 0) {
                if (!claimedTop && Words.lp(cur + VALUE) == value) { // (3)
                    return true;
                }
                final long next = g.protect(slot, cur + NEXT); // (6)
                if (claimedTop ? Words.la(top) != w : (next & MARK) != 0) { // (4)
                    continue retry; // cur may have left the stack, and next with it
                }
                claimedTop = false;
                cur = next & ~MARK;
                slot ^= 1;
            }
            return false;
        }
    }

    /** Whether the stack was empty at some moment during the call. */
    public boolean isEmpty() {
        final int op = enter();
        try (Guard g = domain.pin()) {
            final long unprotected = Words.la(top); // (4)
            if ((unprotected & MARK) == 0) {
                return unprotected == 0; // no pop in progress: the word alone answers
            }
            while (true) {
                try {
                    final long w = g.protect(0, top); // (2)
                    final boolean empty = w == 0 || (w & MARK) != 0 && (Words.lp((w & ~MARK) + NEXT) & ~MARK) == 0; // (3)
                    g.poll();
                    return empty;
                } catch (final Restart neutralized) {
                    // read from a node that may have been freed: again
                }
            }
        } finally {
            exit(op);
        }
    }

    /** The top word's address (tests). */
    long topAddress() {
        return top;
    }

    @Override
    void freeNodes() {
        long node = Words.la(top) & ~MARK;
        while (node != 0) {
            final long next = Words.lp(node + NEXT) & ~MARK;
            freeNode(node);
            node = next;
        }
        domain.allocator().free(top);
    }
}
