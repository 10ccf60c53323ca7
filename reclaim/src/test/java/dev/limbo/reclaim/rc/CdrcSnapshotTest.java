package dev.limbo.reclaim.rc;

import static dev.limbo.reclaim.rc.RcFixture.NEXT;
import static dev.limbo.reclaim.rc.RcFixture.POISON;
import static dev.limbo.reclaim.rc.RcFixture.TAG;
import static dev.limbo.reclaim.rc.RcFixture.leafTag;
import static dev.limbo.reclaim.rc.RcFixture.onAnotherThread;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Snapshots ({@link Cdrc#snapshot}, {@link Cdrc#releaseSnapshot}): no count change while a slot
 * holds one; the eighth evicts round-robin and the evicted snapshot becomes a counted reference
 * whose release decrements; the same-object eviction of digest §8.5; and a snapshotted object
 * stays readable (not poisoned) while another thread overwrites its field, kills its parent and
 * flushes, until the snapshot is released (digest §8.6).
 */
class CdrcSnapshotTest {

    @Test
    void snapshotsCostNoCountAndKeepMarks() {
        try (RcFixture f = RcFixture.open()) {
            final Cdrc rc = f.rc;
            final long field = f.root();
            assertEquals(0, rc.snapshot(field), "a null field snapshots null");
            rc.releaseSnapshot(0);
            final long x = f.leaf();
            rc.storeMove(field, x | 3);
            final long s = rc.snapshot(field);
            assertEquals(x | 3, s);
            assertEquals(1, rc.count(x));
            rc.releaseSnapshot(s);
            assertEquals(1, rc.count(x));
            assertEquals(0, rc.evictions());
            rc.store(field, 0);
        }
    }

    @Test
    void theEighthSnapshotEvictsAndTheEvictedOnesBecomeCounted() {
        try (RcFixture f = RcFixture.open()) {
            final Cdrc rc = f.rc;
            final int n = Cdrc.SNAPSHOT_SLOTS + 2;
            final long[] fields = new long[n];
            final long[] s = new long[n];
            for (int i = 0; i < n; i++) {
                fields[i] = f.root();
                rc.storeMove(fields[i], f.leaf());
            }
            final long before = rc.evictions();
            for (int i = 0; i < Cdrc.SNAPSHOT_SLOTS; i++) {
                s[i] = rc.snapshot(fields[i]);
                assertEquals(1, rc.count(s[i]));
            }
            assertEquals(before, rc.evictions(), "seven snapshots fit the slots");
            s[7] = rc.snapshot(fields[7]);
            assertEquals(before + 1, rc.evictions());
            assertEquals(2, rc.count(s[0]), "the first victim got its deferred increment");
            s[8] = rc.snapshot(fields[8]);
            assertEquals(before + 2, rc.evictions());
            assertEquals(2, rc.count(s[1]), "round-robin: the second slot is the next victim");
            for (int i = 2; i < n; i++) {
                assertEquals(1, rc.count(s[i]), "snapshot " + i + " is still in a slot");
            }
            for (final long field : fields) {
                rc.store(field, 0);
            }
            assertEquals(2, rc.flush(), "only the evicted objects' retires are unprotected");
            for (int i = 0; i < n; i++) {
                assertEquals(1, rc.count(s[i]), "snapshot " + i + ": its count or its slot keeps it");
                assertEquals(TAG, leafTag(s[i]));
            }
            rc.releaseSnapshot(s[0]);
            assertEquals(POISON, leafTag(s[0]), "an evicted snapshot's release decrements: the last count");
            rc.releaseSnapshot(s[1]);
            assertEquals(POISON, leafTag(s[1]));
            for (int i = 2; i < n; i++) {
                rc.releaseSnapshot(s[i]);
                assertEquals(TAG, leafTag(s[i]), "a slot's release changes no count");
            }
            assertEquals(n - 2, rc.flush());
            assertEquals(0, rc.delayed());
        }
    }

    @Test
    void evictingASlotThatHoldsTheSameObjectBalances() {
        try (RcFixture f = RcFixture.open()) {
            final Cdrc rc = f.rc;
            final long field = f.root();
            final long x = f.leaf();
            rc.storeMove(field, x);
            final int n = Cdrc.SNAPSHOT_SLOTS + 1;
            final long before = rc.evictions();
            for (int i = 0; i < n; i++) {
                assertEquals(x, rc.snapshot(field));
            }
            assertEquals(before + 1, rc.evictions());
            assertEquals(2, rc.count(x), "the victim's object, x, was counted, and x took its slot again");
            rc.store(field, 0);
            assertEquals(0, rc.flush(), "seven slots hold back the field's retire");
            // releases clear the seven slots holding x whichever snapshot they end (snapshots of
            // one object are interchangeable), and the last one finds no slot and decrements
            for (int i = 0; i < n - 2; i++) {
                rc.releaseSnapshot(x);
                assertEquals(2, rc.count(x), "release " + i + " clears a slot");
            }
            assertEquals(0, rc.flush(), "the last slot still holds back the field's retire");
            rc.releaseSnapshot(x);
            assertEquals(2, rc.count(x), "the seventh release clears the last slot");
            assertEquals(1, rc.flush(), "now the field's retire goes");
            assertEquals(1, rc.count(x));
            assertEquals(TAG, leafTag(x), "the evicted snapshot's count keeps x");
            rc.releaseSnapshot(x);
            assertEquals(POISON, leafTag(x), "the eighth release is the evicted one's decrement");
        }
    }

    @Test
    @Timeout(30)
    void aSnapshottedObjectOutlivesOverwritesDeathsAndFlushesOnAnotherThread() throws Exception {
        try (RcFixture f = RcFixture.open()) {
            final Cdrc rc = f.rc;
            final long field = f.root();
            final long parentField = f.root();
            final long x = f.leaf();
            rc.storeMove(field, x);
            final long parent = f.node();
            final long y = f.leaf();
            rc.storeMove(parent + NEXT, y);
            rc.storeMove(parentField, parent);
            final long sx = rc.snapshot(field);
            final long sp = rc.snapshot(parentField);
            final long sy = rc.snapshot(sp + NEXT); // a snapshot through a snapshot
            rc.releaseSnapshot(sp);
            onAnotherThread(() -> {
                rc.storeMove(field, f.leaf()); // x's only reference is overwritten
                rc.store(parentField, 0); // the parent's only reference
                rc.flush(); // the parent dies, retiring y; x's and y's retires are held back
                for (int i = 0; i < 100; i++) {
                    rc.store(field, 0);
                    final long z = f.leaf();
                    rc.storeMove(field, z);
                }
                rc.flush();
                assertEquals(2, rc.delayed(), "x and y are held back by the main thread's snapshots");
            });
            assertEquals(TAG, leafTag(sx), "x is readable while snapshotted");
            assertEquals(TAG, leafTag(sy), "y is readable while snapshotted, its parent dead");
            assertEquals(1, rc.count(x));
            assertEquals(1, rc.count(y));
            rc.releaseSnapshot(sx);
            rc.releaseSnapshot(sy);
            assertEquals(2, rc.flush(), "the departed thread's retires are adopted and applied");
            assertEquals(POISON, leafTag(x));
            assertEquals(POISON, leafTag(y));
            rc.store(field, 0);
        }
    }
}
