package dev.limbo.reclaim.rc;

import static dev.limbo.reclaim.rc.RcFixture.TAG;
import static dev.limbo.reclaim.rc.RcFixture.leafTag;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.core.Participants;
import dev.limbo.core.Words;
import dev.limbo.core.testing.Progress;

import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Threads load, snapshot (beyond the seven slots, so that snapshots are evicted), store, storeMove,
 * cas (snapshot expected, snapshot desired), casMove, casMark and use weak references on a few
 * shared fields of a debug allocator's domain. Every object read is checked: its tag is intact (a
 * freed block is poisoned) and its count is at least 1. After every operation a thread's delayed
 * decrements stay within the acquire-retire garbage bound. The run ends once the asserted progress
 * (checked reads and evictions) is reached; afterwards every object is freed.
 */
class CdrcStressTest {

    private static final int THREADS = 3;
    private static final int FIELDS = 4;
    private static final int READS = 0;
    private static final int EVICTIONS = 1;

    @Test
    @Timeout(60)
    void sharedFieldsUnderEveryOperationStayCountedAndNothingLeaks() throws Exception {
        try (RcFixture f = RcFixture.open()) {
            final Cdrc rc = f.rc;
            final long[] fields = new long[FIELDS];
            for (int i = 0; i < FIELDS; i++) {
                fields[i] = f.root();
                rc.storeMove(fields[i], f.leaf());
            }
            final long weakField = f.root();
            final Progress progress = new Progress(50, "checked reads", 60_000, "evictions", 600);
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final CountDownLatch finished = new CountDownLatch(THREADS);
            final Thread[] threads = new Thread[THREADS];
            for (int t = 0; t < THREADS; t++) {
                final long seed = 0x5EED + t;
                threads[t] = new Thread(() -> {
                    try {
                        run(f, fields, weakField, new SplittableRandom(seed), progress);
                    } catch (final Throwable e) {
                        failure.compareAndSet(null, e);
                        progress.stop();
                    } finally {
                        finished.countDown();
                        try {
                            // no thread leaves (orphaning its retires into another's bound) before all stopped
                            finished.await(60, TimeUnit.SECONDS);
                        } catch (final InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        Participants.close();
                    }
                });
                threads[t].start();
            }
            for (final Thread t : threads) {
                t.join();
            }
            if (failure.get() != null) {
                throw new AssertionError("a worker failed", failure.get());
            }
            assertTrue(progress.count(READS) >= 60_000 && progress.count(EVICTIONS) >= 600, progress.toString());
            for (final long field : fields) {
                final long p = rc.load(field);
                check(rc, p);
                rc.release(p);
                rc.store(field, 0);
            }
            rc.storeWeak(weakField, 0);
        }
    }

    /** Asserts that {@code p} (marks ignored; 0 is fine) is a live, counted test object. */
    private static void check(final Cdrc rc, final long p) {
        if ((p & ~7L) != 0) {
            assertEquals(TAG, leafTag(p), "tag of a protected object: poisoned means freed");
            assertTrue(rc.count(p) >= 1, "count of a protected object");
        }
    }

    private static void run(final RcFixture f, final long[] fields, final long weakField, final SplittableRandom random,
            final Progress progress) {
        final Cdrc rc = f.rc;
        final long[] held = new long[Cdrc.SNAPSHOT_SLOTS + 3];
        long evictions = rc.evictions();
        while (!progress.done()) {
            final long field = fields[random.nextInt(FIELDS)];
            final long other = fields[random.nextInt(FIELDS)];
            int reads = 0;
            switch (random.nextInt(16)) {
                case 0, 1, 2, 3 -> {
                    final long p = rc.load(field);
                    check(rc, p);
                    rc.release(p);
                    reads++;
                }
                case 4, 5, 6 -> {
                    final long s = rc.snapshot(field);
                    check(rc, s);
                    rc.releaseSnapshot(s);
                    reads++;
                }
                case 7 -> {
                    // more snapshots than slots: the oldest are evicted into counted references
                    for (int i = 0; i < held.length; i++) {
                        held[i] = rc.snapshot(fields[(i + random.nextInt(FIELDS)) % FIELDS]);
                    }
                    for (int i = held.length - 1; i >= 0; i--) {
                        check(rc, held[i]);
                        rc.releaseSnapshot(held[i]);
                    }
                    reads += held.length;
                }
                case 8, 9 -> {
                    final long n = f.leaf();
                    rc.store(field, n);
                    rc.release(n);
                }
                case 10 -> rc.storeMove(field, random.nextInt(4) == 0 ? 0 : f.leaf());
                case 11 -> {
                    final long s = rc.snapshot(field);
                    final long n = f.leaf();
                    rc.cas(field, s, n);
                    rc.release(n);
                    check(rc, s);
                    rc.releaseSnapshot(s);
                    reads++;
                }
                case 12 -> {
                    final long cur = rc.load(field);
                    final long n = f.leaf();
                    if (!rc.casMove(field, cur, n)) {
                        rc.release(n);
                    }
                    check(rc, cur);
                    rc.release(cur);
                    reads++;
                }
                case 13 -> {
                    // a snapshot as desired: the object moves from one field to another
                    final long d = rc.snapshot(other);
                    final long e = rc.snapshot(field);
                    rc.cas(field, e, d);
                    check(rc, d);
                    check(rc, e);
                    rc.releaseSnapshot(e);
                    rc.releaseSnapshot(d);
                    reads += 2;
                }
                case 14 -> {
                    final long cur = Words.la(field);
                    if ((cur & ~7L) != 0) {
                        rc.casMark(field, cur, cur ^ 1);
                    }
                }
                default -> {
                    final long s = rc.snapshot(field);
                    rc.storeWeak(weakField, s);
                    rc.releaseSnapshot(s);
                    final long w = rc.loadWeak(weakField);
                    final long u = rc.upgrade(w);
                    check(rc, u);
                    rc.release(u);
                    rc.releaseWeak(w);
                    reads++;
                }
            }
            final long bound = rc.acquireRetire().garbageBound(Participants.highWater());
            assertTrue(rc.delayed() <= bound, "delayed " + rc.delayed() + " > garbage bound " + bound);
            progress.add(READS, reads);
            final long now = rc.evictions();
            progress.add(EVICTIONS, now - evictions);
            evictions = now;
        }
    }
}
