package dev.limbo.structures;

import dev.limbo.core.Layouts;
import dev.limbo.core.Words;
import dev.limbo.reclaim.Guard;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Restart;

import static dev.limbo.structures.LinkedNodeLayout.NEXT;
import static dev.limbo.structures.LinkedNodeLayout.VALUE;

/**
 * A lock-free FIFO queue of {@code long} values with nodes in off-heap memory.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm: Michael and Scott's queue (PODC 1996, Fig. 1), with the hazard-pointer placement of
 * Michael (TPDS 2004, §4.2, Fig. 9): one slot for enqueue's tail, two for dequeue's head and next.
 *
 * Invariants: head points to a dummy node, whose successors hold the queued values in FIFO order;
 * tail points to the last node or to its predecessor (the tail lags by at most one); nodes are
 * appended only at the last node's next (0 -> node), so the chain from head is acyclic; head never
 * passes tail (dequeue swings a lagging tail before moving head past it).
 *
 * Linearization points: enqueue - the CAS (1) that links the node to the last node's next;
 * dequeue - the CAS (2) of head from the dummy to its successor, or, for an empty queue, the
 * protected read (3) of the dummy's next that returned 0.
 *
 * Progress: lock-free; a thread that sees a lagging tail helps swing it (4) before retrying.
 *
 * Memory ordering: (1) the linking CAS (volatile) publishes the node's plain initialization;
 * (3) protect's acquire load of next pairs with it. (2) and (4) CAS head and tail (volatile); the
 * protected loads (5) of head and tail pair with them. (6) the dequeued value is read with a plain
 * load of the protected successor before (2): it is immutable once linked.
 *
 * Reclamation and ABA: dequeue retires the old dummy after its CAS (2) succeeds; only one thread's
 * CAS moves head past a given node. Head, tail and next are protected before they are read or used
 * as CAS expectations (dequeue re-checks head after protecting next, so next was reachable), so no
 * node is reused while a CAS may still expect it: the classic ABA on head or tail cannot happen.
 * The lagging-tail swing (4) may install a node that is dequeued meanwhile only after it is
 * already past head, which the head-never-passes-tail invariant rules out. close() frees the chain
 * and the head and tail words only after every operation has ended (OffHeapStructure's in-flight
 * count).
 *
 * Neutralization (Guard, "Neutralization"): each loop iteration's reads are a read phase that
 * restarts on Restart; before its CASes an iteration reserves the nodes it read (t and next, or h
 * and next) and calls beginWrite, so that dequeue returns a value read from a node that was still
 * safe, and the CASes never expect a node that a neutralizer freed. An empty answer is confirmed
 * by a poll. Links are written through the guard (initLink for a new node, cas for (1), (2), (4)).
 * }</pre>
 */
public final class MichaelScottQueue extends OffHeapStructure {

    private final long cells;
    private final long head;
    private final long tail;

    /** A queue over {@code domain} (records of at least 16 bytes, at least 2 slots). */
    public MichaelScottQueue(final ReclaimDomain domain) {
        super(domain, 2, LinkedNodeLayout.SIZE);
        domain.declareLinks(NEXT);
        this.cells = domain.allocator().allocateZeroed(2 * Layouts.PADDED);
        this.head = cells;
        this.tail = cells + Layouts.PADDED;
        final long dummy = domain.allocateExclusive();
        try (Guard g = domain.pin()) {
            g.initLink(dummy + NEXT, 0L);
            g.store(head, dummy);
            g.store(tail, dummy);
        }
    }

    /** Appends {@code value} ({@link #RESERVED} is rejected). */
    public void enqueue(final long value) {
        checkValue(value);
        final int op = enter();
        try (Guard g = domain.pin()) {
            final long node = g.allocate();
            Words.sp(node + VALUE, value);
            g.initLink(node + NEXT, 0L);
            while (true) {
                final long t;
                final long next;
                try {
                    t = g.protect(0, tail); // (5)
                    next = Words.la(t + NEXT); // (3)
                    if (t != Words.la(tail)) {
                        continue;
                    }
                    g.reserve(0, t);
                    g.reserve(1, next);
                    g.beginWrite();
                } catch (final Restart neutralized) {
                    continue; // t may have been freed before it was protected
                }
                if (next != 0) {
                    g.cas(tail, t, next); // (4) help a lagging tail
                } else if (g.cas(t + NEXT, 0, node)) { // (1)
                    g.cas(tail, t, node); // (4)
                    g.endWrite();
                    return;
                }
                g.endWrite();
            }
        } finally {
            exit(op);
        }
    }

    /** Removes and returns the oldest value, or {@link #RESERVED} if the queue is empty. */
    public long dequeue() {
        final int op = enter();
        try (Guard g = domain.pin()) {
            while (true) {
                final long h;
                final long t;
                final long next;
                final long value;
                try {
                    h = g.protect(0, head); // (5)
                    t = Words.la(tail); // (5)
                    next = g.protect(1, h + NEXT); // (3)
                    if (h != Words.la(head)) {
                        continue;
                    }
                    if (next == 0) {
                        g.poll();
                        return RESERVED;
                    }
                    value = h == t ? RESERVED : Words.lp(next + VALUE); // (6)
                    g.reserve(0, h);
                    g.reserve(1, next);
                    g.beginWrite();
                } catch (final Restart neutralized) {
                    continue; // what the read phase saw may rest on freed nodes
                }
                if (h == t) {
                    g.cas(tail, t, next); // (4)
                    g.endWrite();
                    continue;
                }
                final boolean dequeued = g.cas(head, h, next); // (2)
                if (dequeued) {
                    g.retire(h);
                }
                g.endWrite();
                if (dequeued) {
                    return value;
                }
            }
        } finally {
            exit(op);
        }
    }

    /** Whether the queue looked empty at some moment during the call. */
    public boolean isEmpty() {
        final int op = enter();
        try (Guard g = domain.pin()) {
            while (true) {
                try {
                    final long h = g.protect(0, head);
                    final boolean empty = g.protect(1, h + NEXT) == 0 && h == Words.la(head);
                    g.poll();
                    return empty;
                } catch (final Restart neutralized) {
                    // h may have been freed before it was protected: look again
                }
            }
        } finally {
            exit(op);
        }
    }

    @Override
    void freeNodes() {
        long node = Words.la(head);
        while (node != 0) {
            final long next = Words.lp(node + NEXT);
            freeNode(node);
            node = next;
        }
        domain.allocator().free(cells);
    }
}
