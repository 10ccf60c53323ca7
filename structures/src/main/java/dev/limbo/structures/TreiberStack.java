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
 * RJ 5118, 1986), with hazard-pointer-style protection of the top node (Michael, TPDS 2004, §4.1).
 *
 * Invariants: top (a word alone in a 128-byte line) points to a chain of nodes linked through
 * next, ending in 0; a node's value and next never change while it is linked.
 *
 * Linearization points: push - its successful CAS of top (1); pop - its successful CAS of top (1),
 * or the protected load of top (2) that returned 0 (empty).
 *
 * Progress: lock-free; a CAS fails only if another operation's CAS succeeded.
 *
 * Memory ordering: (1) CAS of top (volatile): a pushed node's plain initialization (value, next)
 * happens-before any thread that reads the node through (2). (2) protect(0, top): an acquire load
 * (epoch schemes) or publish-fence-validate (hp), so the node read is initialized and safe.
 * (3) plain loads of the protected node's next and value: the node is immutable while linked, and
 * protected after it is popped.
 *
 * Reclamation and ABA: pop retires the node it unlinked; only the thread whose CAS (1) succeeded
 * does. The ABA problem of Treiber's stack (top read as A, A popped and freed, reused and pushed
 * again, the stale CAS succeeding with a stale next) cannot happen: A is protected from the read
 * (2) to the CAS, so it is not freed and so not reused meanwhile. close() frees the chain and the
 * top word only after every operation has ended (OffHeapStructure's in-flight count).
 *
 * Neutralization (Guard, "Neutralization"): pop's protect and its read of t.next are the read
 * phase; it reserves t and calls beginWrite before (1), so that next came from a node that was
 * safe (a restart starts the pop over), and reads the value in the write phase. push reads no
 * node, so it has no read phase. Links go through the guard (initLink, store on retry, cas); the
 * top that push links its node to is not protected (push never dereferences it), so a counting
 * scheme must count a target it did not protect (LFRC's type-stable records allow it).
 * }</pre>
 */
public final class TreiberStack extends OffHeapStructure {

    private final long top;

    /** A stack over {@code domain} (records of at least 16 bytes, at least 1 slot). */
    public TreiberStack(final ReclaimDomain domain) {
        super(domain, 1, LinkedNodeLayout.SIZE);
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
            long t = Words.la(top);
            g.initLink(node + NEXT, t);
            while (!g.cas(top, t, node)) { // (1)
                t = Words.la(top);
                g.store(node + NEXT, t); // unpublished still: a retry relinks it
            }
        } finally {
            exit(op);
        }
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
                    next = Words.lp(t + NEXT); // (3)
                    g.reserve(0, t);
                    g.beginWrite();
                } catch (final Restart neutralized) {
                    continue; // next may have been read from a freed node
                }
                final boolean popped = g.cas(top, t, next); // (1)
                final long value = popped ? Words.lp(t + VALUE) : RESERVED; // (3)
                if (popped) {
                    g.retire(t);
                }
                g.endWrite();
                if (popped) {
                    return value;
                }
            }
        } finally {
            exit(op);
        }
    }

    /** Whether the stack looked empty at some moment during the call. */
    public boolean isEmpty() {
        final int op = enter();
        try (Guard g = domain.pin()) {
            return Words.la(top) == 0;
        } finally {
            exit(op);
        }
    }

    @Override
    void freeNodes() {
        long node = Words.la(top);
        while (node != 0) {
            final long next = Words.lp(node + NEXT);
            freeNode(node);
            node = next;
        }
        domain.allocator().free(top);
    }
}
