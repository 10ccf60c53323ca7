package dev.limbo.reclaim.rc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Participants;
import dev.limbo.core.Words;

import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Cdrc}: counts after each counted-field operation (load, store and CAS in copy and move
 * forms, CAS failure), the death of an object releasing its counted fields (a long chain, no deep
 * stack), bad input, and a concurrent load-vs-store stress on a debug allocator after which every
 * object is freed (live bytes return to the baseline).
 */
class CdrcTest {

    private static final RcType LEAF = new RcType("leaf", 24);
    private static final RcType NODE = new RcType("node", 32, 16);

    /** A test body over a fresh domain and a null counted field in it. */
    private interface Body {
        void run(Cdrc rc, long field) throws Exception;
    }

    /** Runs {@code body} on a debug allocator and checks that live bytes return to the baseline. */
    private static void withDomain(final Body body) throws Exception {
        final LimboAllocator a = LimboAllocator.builder().debug(true).build();
        final long base = a.stats().bytesInUse();
        final long field = a.allocateZeroed(Long.BYTES);
        try (Cdrc rc = new Cdrc(a)) {
            body.run(rc, field);
        }
        a.free(field);
        assertEquals(base, a.stats().bytesInUse(), "live bytes after the test");
    }

    @Test
    void loadStoreAndReleaseCount() throws Exception {
        withDomain((rc, field) -> {
                final int leaf = rc.register(LEAF);
                final long x = rc.allocate(leaf);
                assertEquals(1, rc.count(x));
                assertEquals(leaf, rc.typeOf(x));
                rc.store(field, x);
                assertEquals(2, rc.count(x));
                final long y = rc.load(field);
                assertEquals(x, y);
                assertEquals(3, rc.count(x));
                rc.release(y);
                rc.release(x);
                assertEquals(1, rc.count(x));
                final long z = rc.allocate(leaf);
                rc.storeMove(field, z | 1); // marked, and the caller's reference moves in
                assertEquals(1, rc.count(z));
                assertEquals(z | 1, rc.load(field));
                rc.release(z | 1);
                rc.store(field, 0);
                assertEquals(2, rc.flush()); // x (the first store's overwrite) and z
                assertEquals(0, rc.delayed());
        });
    }

    @Test
    void casCopyAndMoveCountAndFailureChangesNothing() throws Exception {
        withDomain((rc, field) -> {
                final int leaf = rc.register(LEAF);
                final long x = rc.allocate(leaf);
                final long y = rc.allocate(leaf);
                assertTrue(rc.cas(field, 0, x));
                assertEquals(2, rc.count(x));
                assertFalse(rc.cas(field, y, y)); // the field holds x
                assertEquals(1, rc.count(y));
                assertEquals(0, rc.acquireRetire().local().delayed());
                assertFalse(rc.casMove(field, 0, y));
                assertEquals(1, rc.count(y));
                assertTrue(rc.casMove(field, x, y)); // y's reference moves in; x's field copy is retired
                assertEquals(1, rc.count(y));
                assertEquals(1, rc.flush());
                assertEquals(1, rc.count(x));
                rc.release(x);
                assertTrue(rc.cas(field, y, 0));
                assertEquals(1, rc.flush());
        });
    }

    @Test
    void deathReleasesCountedFieldsOfALongChain() throws Exception {
        withDomain((rc, head) -> {
                final int node = rc.register(NODE);
                final int n = 100_000;
                for (int i = 0; i < n; i++) {
                    final long p = rc.allocate(node);
                    final long next = rc.load(head);
                    rc.storeMove(p + 16, next); // the loaded reference moves into the new node
                    rc.storeMove(head, p);
                }
                rc.flush();
                final long first = rc.load(head);
                assertEquals(2, rc.count(first));
                final long second = rc.load(first + 16);
                assertEquals(2, rc.count(second));
                rc.release(second);
                rc.release(first);
                rc.store(head, 0);
                assertEquals(n, rc.flush());
        });
    }

    @Test
    void badInputIsRefused() {
        final LimboAllocator a = LimboAllocator.builder().debug(true).build();
        try (Cdrc rc = new Cdrc(a)) {
            assertThrows(IllegalArgumentException.class, () -> rc.allocate(0));
            final int leaf = rc.register(LEAF);
            final long x = rc.allocate(leaf);
            rc.release(x);
            assertThrows(IllegalStateException.class, () -> rc.store(a.allocateZeroed(Long.BYTES), x));
        }
        assertThrows(IllegalArgumentException.class, () -> new RcType("small", 8));
        assertThrows(IllegalArgumentException.class, () -> new RcType("header", 32, 8));
        assertThrows(IllegalArgumentException.class, () -> new RcType("misaligned", 32, 20));
        assertThrows(IllegalArgumentException.class, () -> new RcType("past end", 32, 32));
        assertThrows(IllegalArgumentException.class, () -> new RcType("twice", 40, 16, 16));
    }

    @Test
    @Timeout(120)
    void concurrentLoadsAndStoresFreeEverythingOnce() throws Exception {
        final int threads = 3;
        final int ops = 50_000;
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        withDomain((rc, field) -> {
            final int leaf = rc.register(LEAF);
            final CyclicBarrier done = new CyclicBarrier(threads);
            final Thread[] ts = new Thread[threads];
            for (int t = 0; t < threads; t++) {
                final boolean writer = t == 0;
                ts[t] = new Thread(() -> {
                    try {
                        for (int i = 0; i < ops; i++) {
                            if (writer || i % 8 == 0) {
                                final long x = rc.allocate(leaf);
                                Words.sv(x + 16, 0x5EED);
                                if (i % 2 == 0) {
                                    rc.storeMove(field, x);
                                } else {
                                    final long cur = rc.load(field);
                                    rc.cas(field, cur, x);
                                    rc.release(cur);
                                    rc.release(x);
                                }
                            } else {
                                final long p = rc.load(field);
                                if (p != 0) {
                                    assertEquals(0x5EED, Words.la(p + 16), "payload of a loaded object");
                                    assertTrue(rc.count(p) >= 1);
                                    rc.release(p);
                                }
                            }
                        }
                        done.await(60, TimeUnit.SECONDS);
                        rc.flush();
                    } catch (final Throwable e) {
                        failure.compareAndSet(null, e);
                        done.reset();
                    } finally {
                        Participants.close();
                    }
                });
                ts[t].start();
            }
            for (final Thread t : ts) {
                t.join();
            }
            if (failure.get() != null) {
                throw new AssertionError(failure.get());
            }
            rc.store(field, 0);
            rc.flush();
        });
    }
}
