package dev.limbo.reclaim.rc;

import static dev.limbo.core.testing.Misuse.rejects;
import static dev.limbo.reclaim.rc.RcFixture.POISON;
import static dev.limbo.reclaim.rc.RcFixture.leafTag;
import static dev.limbo.reclaim.rc.RcFixture.onAnotherThread;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Words;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The handles {@link RcRef}, {@link SnapshotRef} and {@link WeakRcRef}: what each operation does to
 * the counts, use after close (throws), double close (no-op), a snapshot used from another thread
 * (throws, and stays open), handles of a closed domain (throw, also on close), and the debug
 * domain's Cleaner, which reports handles garbage-collected while open and only those.
 */
class RcHandlesTest {

    @Test
    void rcRefCountsCopiesMovesAndRefusesUseAfterClose() {
        try (RcFixture f = RcFixture.open()) {
            final Cdrc rc = f.rc;
            final long field = f.root();
            final long other = f.root();
            try (RcRef empty = RcRef.load(rc, field)) {
                assertTrue(empty.isNull());
            }
            final long x = f.leaf();
            rc.storeMove(field, x);
            final RcRef r = RcRef.load(rc, field);
            assertEquals(x, r.get());
            assertFalse(r.isNull());
            assertEquals(2, rc.count(x));
            final RcRef c = r.copy();
            assertEquals(3, rc.count(x));
            r.storeTo(other);
            assertEquals(4, rc.count(x));
            assertTrue(r.isOpen(), "storeTo copies");
            try (WeakRcRef w = r.weak()) {
                assertEquals(2, rc.weakCount(x));
                assertEquals(x, w.get());
            }
            assertEquals(1, rc.weakCount(x));
            final long moved = r.moveOut();
            assertFalse(r.isOpen(), "moveOut closes the handle");
            assertEquals(4, rc.count(x), "and hands its count to the caller");
            final long third = f.root();
            rc.storeMove(third, moved); // the moved count goes into a third field
            rejects(IllegalStateException.class, r::get, "RcRef", "closed");
            rejects(IllegalStateException.class, r::copy, "closed");
            rejects(IllegalStateException.class, r::moveOut, "closed");
            rejects(IllegalStateException.class, r::weak, "closed");
            rejects(IllegalStateException.class, () -> r.storeTo(other), "closed");
            r.close(); // closing a moved-out handle does nothing
            assertEquals(4, rc.count(x));
            c.close();
            assertEquals(3, rc.count(x));
            c.close(); // double close: no second decrement
            assertEquals(3, rc.count(x));
            try (RcRef a = RcRef.adopt(rc, rc.retain(x))) {
                assertEquals(4, rc.count(x));
                assertEquals(x, a.get());
            }
            assertEquals(3, rc.count(x));
            rc.store(field, 0);
            rc.store(other, 0);
            rc.store(third, 0);
            assertEquals(3, rc.flush());
            assertEquals(POISON, leafTag(x));
        }
    }

    @Test
    @Timeout(30)
    void snapshotRefIsConfinedToItsThread() throws Exception {
        try (RcFixture f = RcFixture.open()) {
            final Cdrc rc = f.rc;
            final long field = f.root();
            final long x = f.leaf();
            rc.storeMove(field, x);
            final SnapshotRef s = SnapshotRef.take(rc, field);
            assertEquals(x, s.get());
            assertEquals(1, rc.count(x), "a snapshot costs no count");
            onAnotherThread(() -> {
                rejects(IllegalStateException.class, s::get, "SnapshotRef", "confined");
                rejects(IllegalStateException.class, s::toRc, "confined");
                rejects(IllegalStateException.class, s::close, "confined");
            });
            assertEquals(x, s.get(), "a refused close from another thread leaves it open");
            try (RcRef r = s.toRc()) {
                assertEquals(2, rc.count(x));
                rc.store(field, 0);
                assertEquals(0, rc.flush(), "the snapshot holds back the field's retire");
                s.close();
                assertEquals(1, rc.flush());
                assertEquals(1, rc.count(x), "the counted handle outlives the snapshot");
            }
            assertEquals(POISON, leafTag(x));
            s.close(); // double close: no-op
            rejects(IllegalStateException.class, s::get, "SnapshotRef", "closed");
            rejects(IllegalStateException.class, s::toRc, "closed");
        }
    }

    @Test
    void weakRcRefUpgradesWhileTheObjectLivesAndExpiresAfter() {
        try (RcFixture f = RcFixture.open()) {
            final Cdrc rc = f.rc;
            final long weakField = f.root();
            try (WeakRcRef empty = WeakRcRef.load(rc, weakField)) {
                assertTrue(empty.expired(), "a null weak reference is expired");
                assertNull(empty.upgrade());
            }
            final long x = f.leaf();
            rc.storeWeak(weakField, x);
            final WeakRcRef w = WeakRcRef.load(rc, weakField);
            assertEquals(x, w.get());
            assertEquals(3, rc.weakCount(x));
            assertFalse(w.expired());
            try (RcRef s = w.upgrade()) {
                assertEquals(x, s.get());
                assertEquals(2, rc.count(x));
            }
            rc.release(x);
            assertTrue(w.expired());
            assertNull(w.upgrade(), "upgrade of a dead object gives null");
            w.close();
            assertEquals(1, rc.weakCount(x), "the weak field's reference is left");
            w.close(); // double close: no-op
            assertEquals(1, rc.weakCount(x));
            rejects(IllegalStateException.class, w::get, "WeakRcRef", "closed");
            rejects(IllegalStateException.class, w::upgrade, "closed");
            rejects(IllegalStateException.class, w::expired, "closed");
            rc.storeWeak(weakField, 0);
            rc.flush();
            assertEquals(POISON, leafTag(x));
        }
    }

    @Test
    void handlesOfAClosedDomainThrowAlsoOnClose() {
        final LimboAllocator allocator = LimboAllocator.builder().debug(true).build();
        final long field = allocator.allocateZeroed(Long.BYTES);
        final Cdrc rc = new Cdrc(allocator);
        final long x = rc.allocate(rc.register(RcFixture.LEAF));
        rc.storeMove(field, x);
        final RcRef r = RcRef.load(rc, field);
        final SnapshotRef s = SnapshotRef.take(rc, field);
        final WeakRcRef w = r.weak();
        rc.close();
        rejects(IllegalStateException.class, r::get, "RcRef", "closed Cdrc domain");
        rejects(IllegalStateException.class, s::get, "SnapshotRef", "closed Cdrc domain");
        rejects(IllegalStateException.class, w::get, "WeakRcRef", "closed Cdrc domain");
        rejects(IllegalStateException.class, r::close, "RcRef", "closed Cdrc domain");
        rejects(IllegalStateException.class, s::close, "SnapshotRef", "closed Cdrc domain");
        rejects(IllegalStateException.class, w::close, "WeakRcRef", "closed Cdrc domain");
        assertFalse(r.isOpen(), "a refused close still ends the handle");
        r.close(); // and a second close does nothing
        s.close();
        w.close();
        assertEquals(2, rc.count(x), "a closed domain's handles drop nothing: the objects stay allocated");
        assertEquals(Words.la(field), x);
        allocator.close();
    }

    /** Opens handles of each kind and drops them unclosed; returns the words they held. */
    private static long[] dropOpenHandles(final RcFixture f, final long field) {
        try (RcRef closed = RcRef.load(f.rc, field)) {
            closed.copy().close(); // closed handles: never reported
        }
        final RcRef r = RcRef.load(f.rc, field);
        final SnapshotRef s = SnapshotRef.take(f.rc, field);
        final WeakRcRef w = r.weak();
        return new long[] {r.get(), s.get(), w.get()};
    }

    @Test
    @Timeout(30)
    void aDebugDomainReportsHandlesCollectedWhileOpen() {
        try (RcFixture f = RcFixture.openDebug()) {
            final Cdrc rc = f.rc;
            final long field = f.root();
            final long x = f.leaf();
            rc.storeMove(field, x);
            final long[] words = dropOpenHandles(f, field);
            while (rc.leakedHandles() < 3) {
                System.gc();
                // give the Cleaner's thread a moment to report before collecting again
                for (final long end = System.nanoTime() + 50_000_000L; rc.leakedHandles() < 3 && System.nanoTime() < end; ) {
                    Thread.yield();
                }
            }
            assertEquals(3, rc.leakedHandles(), "the three open handles, not the closed ones");
            // what the leaked handles held is still held: give it back by hand
            assertEquals(2, rc.count(x), "the field's count and the leaked RcRef's");
            rc.release(words[0]);
            rc.releaseSnapshot(words[1]);
            rc.releaseWeak(words[2]);
            rc.store(field, 0);
        }
    }
}
