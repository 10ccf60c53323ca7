package dev.limbo.reclaim.rc;

import static dev.limbo.reclaim.rc.RcFixture.POISON;
import static dev.limbo.reclaim.rc.RcFixture.TAG;
import static dev.limbo.reclaim.rc.RcFixture.leafTag;
import static dev.limbo.reclaim.rc.RcFixture.onAnotherThread;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.limbo.core.Participants;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Threads that leave: a thread that gives its participant id back with delayed decrements leaves
 * them as orphans, which another thread's flush adopts and applies; a departed thread's open
 * snapshot no longer holds anything back, nor occupies a slot of the next holder of its id; and
 * {@link Cdrc#close()} applies the delayed decrements
 * of every thread, including one still alive but idle.
 */
class CdrcThreadExitTest {

    @Test
    @Timeout(30)
    void aDepartedThreadsDelayedDecrementsAreAdoptedByAnotherThreadsFlush() throws Exception {
        try (RcFixture f = RcFixture.open()) {
            final Cdrc rc = f.rc;
            final int n = 5;
            final long[] fields = new long[n];
            final long[] xs = new long[n];
            for (int i = 0; i < n; i++) {
                fields[i] = f.root();
                xs[i] = f.leaf();
                rc.storeMove(fields[i], xs[i]);
            }
            onAnotherThread(() -> {
                for (final long field : fields) {
                    rc.store(field, 0);
                }
                assertEquals(n, rc.delayed(), "too few retires for a scan: all still delayed");
            });
            assertEquals(0, rc.delayed(), "this thread retired nothing");
            for (final long x : xs) {
                assertEquals(1, rc.count(x), "an orphaned decrement is still pending");
                assertEquals(TAG, leafTag(x));
            }
            assertEquals(n, rc.flush(), "this thread's flush adopted the orphans");
            for (final long x : xs) {
                assertEquals(POISON, leafTag(x));
            }
        }
    }

    @Test
    @Timeout(30)
    void aDepartedThreadsOpenSnapshotHoldsNothingBack() throws Exception {
        try (RcFixture f = RcFixture.open()) {
            final Cdrc rc = f.rc;
            final long field = f.root();
            final long x = f.leaf();
            rc.storeMove(field, x);
            onAnotherThread(() -> assertEquals(x, rc.snapshot(field))); // never released
            rc.store(field, 0);
            assertEquals(1, rc.flush(), "the departed thread's announcement was cleared");
            assertEquals(POISON, leafTag(x));
        }
    }

    @Test
    @Timeout(30)
    void aThreadThatGetsADepartedThreadsIdStartsWithEmptySnapshotSlots() throws Exception {
        try (RcFixture f = RcFixture.open()) {
            final Cdrc rc = f.rc;
            final long field = f.root();
            final long x = f.leaf();
            rc.storeMove(field, x);
            final int[] ids = new int[2];
            onAnotherThread(() -> {
                ids[0] = Participants.current();
                for (int i = 0; i < 3; i++) {
                    rc.snapshot(field); // never released
                }
            });
            onAnotherThread(() -> {
                ids[1] = Participants.current();
                final long[] s = new long[Cdrc.SNAPSHOT_SLOTS];
                for (int i = 0; i < s.length; i++) {
                    s[i] = rc.snapshot(field);
                }
                assertEquals(0, rc.evictions(), "seven free slots: nothing of the departed thread's is left");
                assertEquals(1, rc.count(x));
                for (final long p : s) {
                    rc.releaseSnapshot(p);
                }
            });
            assumeTrue(ids[0] == ids[1], "the second thread got another id: the reuse was not exercised");
            assertEquals(1, rc.count(x));
            rc.store(field, 0);
        }
    }

    @Test
    @Timeout(30)
    void closeAppliesTheDelayedDecrementsOfEveryThread() throws Exception {
        final RcFixture f = RcFixture.open();
        final Cdrc rc = f.rc;
        final int n = 5;
        final long[] fields = new long[n];
        final long[] xs = new long[n];
        for (int i = 0; i < n; i++) {
            fields[i] = f.root();
            xs[i] = f.leaf();
            rc.storeMove(fields[i], xs[i]);
        }
        final CountDownLatch retired = new CountDownLatch(1);
        final CountDownLatch done = new CountDownLatch(1);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread idle = new Thread(() -> {
            try {
                for (final long field : fields) {
                    rc.store(field, 0);
                }
                assertEquals(n, rc.delayed());
                retired.countDown();
                assertTrue(done.await(20, TimeUnit.SECONDS), "never let go");
            } catch (final Throwable e) {
                failure.set(e);
                retired.countDown();
            } finally {
                Participants.close();
            }
        });
        idle.start();
        assertTrue(retired.await(20, TimeUnit.SECONDS));
        assertEquals(0, rc.delayed());
        for (final long x : xs) {
            assertEquals(1, rc.count(x), "delayed on the idle thread");
        }
        f.close(); // the domain's close adopts the idle thread's retires; the fixture checks the baseline
        done.countDown();
        idle.join();
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
    }
}
