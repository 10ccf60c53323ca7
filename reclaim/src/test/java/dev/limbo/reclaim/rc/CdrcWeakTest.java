package dev.limbo.reclaim.rc;

import static dev.limbo.reclaim.rc.RcFixture.NEXT;
import static dev.limbo.reclaim.rc.RcFixture.POISON;
import static dev.limbo.reclaim.rc.RcFixture.TAG;
import static dev.limbo.reclaim.rc.RcFixture.leafTag;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.core.Words;

import org.junit.jupiter.api.Test;

/**
 * Weak references ({@link Cdrc#weakOf}, {@link Cdrc#loadWeak}, {@link Cdrc#storeWeak},
 * {@link Cdrc#upgrade}, {@link Cdrc#releaseWeak}): the weak count keeps the block and not the
 * object; upgrade succeeds while the object lives and fails once it died; an overwritten weak field
 * retires a deferred weak decrement; and cycles: a doubly linked list whose back edges are weak is
 * freed when its head is dropped, while the same list with strong back edges leaks (every node
 * stays counted and allocated) until the test breaks the cycle by hand.
 */
class CdrcWeakTest {

    private static final long PREV = 24;
    private static final long LIST_TAG = 32;
    /** A list node: header, next (strong), prev (weak), tag. */
    private static final RcType WEAK_BACK = new RcType("weakBack", 40, new long[] {NEXT}, new long[] {PREV});
    /** The same node with a strong prev: a cycle of strong references. */
    private static final RcType STRONG_BACK = new RcType("strongBack", 40, NEXT, PREV);

    @Test
    void weakCountsKeepTheBlockAndUpgradeFailsOnceTheObjectDied() {
        try (RcFixture f = RcFixture.open()) {
            final Cdrc rc = f.rc;
            final long weakField = f.root();
            final long x = f.leaf();
            assertEquals(1, rc.weakCount(x), "the strong references hold one weak count together");
            final long w = rc.weakOf(x | 1);
            assertEquals(x | 1, w, "marks kept");
            assertEquals(2, rc.weakCount(x));
            assertEquals(1, rc.count(x), "a weak reference is no strong count");
            final long s = rc.upgrade(w);
            assertEquals(x | 1, s);
            assertEquals(2, rc.count(x), "a successful upgrade adds a strong count");
            rc.release(s);
            rc.storeWeak(weakField, x);
            assertEquals(3, rc.weakCount(x));
            final long lw = rc.loadWeak(weakField);
            assertEquals(x, lw);
            assertEquals(4, rc.weakCount(x));
            rc.releaseWeak(lw);
            assertEquals(3, rc.weakCount(x));
            assertEquals(1, rc.count(x));
            rc.release(x);
            assertEquals(0, rc.count(x), "dead");
            assertEquals(2, rc.weakCount(x), "the strong references' weak count went with the object");
            assertEquals(TAG, leafTag(x), "the block stays allocated while weak references remain");
            assertEquals(0, rc.upgrade(w), "upgrade of a dead object fails");
            assertEquals(0, rc.count(x), "and does not revive it");
            final long dw = rc.loadWeak(weakField);
            assertEquals(x, dw, "a weak field of a dead object still loads");
            rc.releaseWeak(dw);
            rc.releaseWeak(w);
            assertEquals(1, rc.weakCount(x));
            rc.storeWeak(weakField, 0);
            assertEquals(1, rc.delayed(), "the overwritten weak reference is retired");
            assertEquals(1, rc.weakCount(x));
            assertEquals(1, rc.flush());
            assertEquals(POISON, leafTag(x), "the last weak decrement freed the block");
            assertEquals(0, rc.weakOf(0));
            assertEquals(0, rc.upgrade(0));
            assertEquals(0, rc.loadWeak(weakField));
            rc.releaseWeak(0);
        }
    }

    @Test
    void anOverwrittenWeakFieldRetiresAWeakDecrementNotAStrongOne() {
        try (RcFixture f = RcFixture.open()) {
            final Cdrc rc = f.rc;
            final long weakField = f.root();
            final long x = f.leaf();
            rc.storeWeak(weakField, x);
            rc.storeWeak(weakField, x); // the same target again: a new weak copy in, the old one retired
            assertEquals(3, rc.weakCount(x), "two weak copies stored, one retired and not yet applied");
            assertEquals(1, rc.delayed());
            assertEquals(1, rc.flush());
            assertEquals(2, rc.weakCount(x));
            assertEquals(1, rc.count(x), "the strong count never moved");
            rc.storeWeak(weakField, 0);
            assertEquals(1, rc.flush());
            assertEquals(1, rc.weakCount(x));
            assertEquals(1, rc.count(x));
            rc.release(x);
            assertEquals(0, f.live());
        }
    }

    /** Builds a list of {@code n} nodes under {@code head} by pushing at the front; returns the nodes, head first. */
    private static long[] buildList(final RcFixture f, final int type, final boolean weakBack, final long head, final int n) {
        final Cdrc rc = f.rc;
        for (int i = 0; i < n; i++) {
            final long p = rc.allocate(type);
            Words.sv(p + LIST_TAG, TAG);
            final long old = rc.load(head);
            if (old != 0) {
                rc.storeMove(p + NEXT, old); // the loaded reference moves into p; p keeps old alive
                if (weakBack) {
                    rc.storeWeak(old + PREV, p);
                } else {
                    rc.store(old + PREV, p);
                }
            }
            rc.storeMove(head, p);
        }
        final long[] nodes = new long[n];
        long p = Words.la(head);
        for (int i = 0; i < n; i++) {
            nodes[i] = p;
            p = Words.la(p + NEXT);
        }
        assertEquals(0, p);
        return nodes;
    }

    @Test
    void aDoublyLinkedListWithWeakBackEdgesIsFreedWhenItsHeadIsDropped() {
        try (RcFixture f = RcFixture.open()) {
            final Cdrc rc = f.rc;
            final int type = rc.register(WEAK_BACK);
            final long head = f.root();
            final int n = 1_000;
            final long[] nodes = buildList(f, type, true, head, n);
            rc.flush();
            for (int i = 0; i < n; i++) {
                assertEquals(1, rc.count(nodes[i]), "node " + i + ": one strong reference, its predecessor's next");
                assertEquals(i < n - 1 ? 2 : 1, rc.weakCount(nodes[i]), "node " + i + ": its successor's prev");
            }
            assertTrue(f.live() > 0);
            rc.store(head, 0);
            assertEquals(2L * n - 1, rc.flush(), "the head's retire, then each death's next and prev retires");
            for (final long p : nodes) {
                assertEquals(POISON, Words.la(p + LIST_TAG));
            }
            assertEquals(0, f.live(), "every node was freed");
        }
    }

    @Test
    void aDoublyLinkedListWithStrongBackEdgesLeaksUntilTheCycleIsBroken() {
        try (RcFixture f = RcFixture.open()) {
            final Cdrc rc = f.rc;
            final int type = rc.register(STRONG_BACK);
            final long head = f.root();
            final int n = 1_000;
            final long[] nodes = buildList(f, type, false, head, n);
            rc.flush();
            final long live = f.live();
            rc.store(head, 0);
            rc.flush();
            assertEquals(live, f.live(), "the strong cycle leaks: no node was freed after the head was dropped");
            assertEquals(1, rc.count(nodes[0]), "the first node is held by the second's prev");
            for (int i = 1; i < n - 1; i++) {
                assertEquals(2, rc.count(nodes[i]), "node " + i + " is held by both neighbours");
            }
            assertEquals(1, rc.count(nodes[n - 1]), "the last node is held by its predecessor's next");
            for (final long p : nodes) {
                assertEquals(TAG, Words.la(p + LIST_TAG));
            }
            // break the cycle from the tail: each node's count stays >= 1 (its predecessor's next)
            // while its prev is cleared, until the first node loses its last reference
            for (int i = n - 1; i >= 1; i--) {
                rc.store(nodes[i] + PREV, 0);
            }
            rc.flush();
            assertEquals(0, f.live(), "once broken, the list is freed");
        }
    }
}
