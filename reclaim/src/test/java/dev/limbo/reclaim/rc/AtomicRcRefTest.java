package dev.limbo.reclaim.rc;

import static dev.limbo.core.testing.Misuse.rejects;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * {@link AtomicRcRef}: each operation is its {@link Cdrc} counterpart on the field, with the
 * handles' counts (load and copy forms add one, move forms hand the handle's count over and close
 * it, a failed move leaves the handle open), and a bad field address is refused.
 */
class AtomicRcRefTest {

    @Test
    void operationsCountAsTheirCdrcForms() {
        try (RcFixture f = RcFixture.open()) {
            final Cdrc rc = f.rc;
            final AtomicRcRef cell = new AtomicRcRef(rc, f.root());
            final long x = f.leaf();
            final long y = f.leaf();
            try (RcRef rx = RcRef.adopt(rc, x)) {
                cell.store(rx);
                assertEquals(2, rc.count(x), "store copies");
                assertEquals(x, cell.peek());
                try (RcRef loaded = cell.load(); SnapshotRef snap = cell.snapshot()) {
                    assertEquals(x, loaded.get());
                    assertEquals(x, snap.get());
                    assertEquals(3, rc.count(x), "a load counts, a snapshot does not");
                }
                final RcRef ry = RcRef.adopt(rc, y);
                assertFalse(cell.compareAndSetMove(y, ry), "the field holds x");
                assertTrue(ry.isOpen(), "a failed move keeps the handle");
                assertTrue(cell.compareAndSetMove(x, ry));
                assertFalse(ry.isOpen(), "a move closes the handle");
                assertEquals(1, rc.count(y), "the handle's count moved into the field");
                assertTrue(cell.compareAndSet(y, rx));
                assertEquals(3, rc.count(x), "compareAndSet copies; the field's earlier copy of x is a delayed decrement");
                cell.storeMove(RcRef.adopt(rc, rc.retain(y)));
                assertEquals(y, cell.peek());
            }
            cell.store(null);
            rc.flush();
        }
    }

    @Test
    void aBadFieldIsRefused() {
        try (RcFixture f = RcFixture.open()) {
            rejects(IllegalArgumentException.class, () -> new AtomicRcRef(f.rc, 0), "aligned");
            rejects(IllegalArgumentException.class, () -> new AtomicRcRef(f.rc, f.root() + 4), "aligned");
        }
    }
}
