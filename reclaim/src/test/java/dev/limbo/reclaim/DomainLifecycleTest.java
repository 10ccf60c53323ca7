package dev.limbo.reclaim;

import static dev.limbo.reclaim.ReclaimTestSupport.RECORD;
import static dev.limbo.reclaim.ReclaimTestSupport.leakedBytes;
import static dev.limbo.reclaim.ReclaimTestSupport.runThreads;
import static dev.limbo.reclaim.ReclaimTestSupport.settle;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Participants;
import dev.limbo.core.Words;
import dev.limbo.reclaim.internal.BlockBag;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The life cycle of a domain under misuse: a pin that fails half way, close() racing with pinned
 * threads, and what a closed domain leaves behind.
 */
@Timeout(60)
class DomainLifecycleTest {

    private static final String ALL = "dev.limbo.reclaim.ReclaimTestSupport#allSchemes";
    private static final String EPOCH = "dev.limbo.reclaim.ReclaimTestSupport#epochSchemes";

    // ------------------------------------------------------------------ a pin that fails

    /**
     * A record freed behind the domain's back (a double free) makes the scheme's own free throw
     * inside a later pin, on the way in. The failed pin must leave the thread unpinned and not
     * announced, so that the epoch still advances for everyone else.
     */
    @ParameterizedTest
    @MethodSource(EPOCH)
    void aPinWhoseEntryThrowsLeavesTheThreadUnpinnedAndQuiescent(final Scheme scheme) throws Exception {
        final LimboAllocator a = LimboAllocator.builder().checked(true).build();
        final EpochDomain d = (EpochDomain) ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD)
                .debug(true).asymmetricFence(false).scanThreshold(1).minCalls(1).build();
        try {
            final long x;
            try (Guard g = d.pin()) {
                x = g.allocate();
                g.retire(x);
            }
            a.free(x); // the misuse: the scheme will free x again
            RuntimeException failure = null;
            for (int k = 0; k < 100_000 && failure == null; k++) {
                try (Guard g = d.pin()) {
                    assertEquals(1, g.depth());
                } catch (final IllegalStateException | IllegalArgumentException e) {
                    failure = e;
                }
            }
            assertNotNull(failure, "the scheme never freed the record again");
            final Guard g = d.guardOf(Participants.current());
            assertEquals(0, g.depth(), "a failed pin left the thread pinned");
            final EpochDomain.EpochGuard eg = (EpochDomain.EpochGuard) g;
            assertEquals(0, d.announcementOf(eg.id) & 1, "a failed pin left the thread announced");
            // another thread can still advance the epoch past this one
            final long before = d.globalEpoch();
            runThreads(1, t -> d.flush());
            assertTrue(d.globalEpoch() > before, "the epoch no longer advances");
        } finally {
            try {
                d.close();
            } catch (final IllegalStateException reported) {
                // close reports the record it could not free again; it still closed
            }
            assertTrue(d.isClosed());
        }
    }

    /**
     * The mechanism, for any scheme: an entry that published a hazard and then threw is undone
     * (the slot is cleared, the depth is 0), and the next pin enters again.
     */
    @Test
    void aFailedEntryIsUndoneWhateverTheSchemeDidBeforeThrowing() {
        final LimboAllocator a = LimboAllocator.create();
        final FailingEntry d = new FailingEntry(ReclaimDomain.builder(Scheme.HP).allocator(a).recordBytes(RECORD));
        try {
            d.fail = true;
            final IllegalStateException e = assertThrows(IllegalStateException.class, d::pin);
            assertEquals("injected", e.getMessage());
            final Guard g = d.guardOf(Participants.current());
            assertEquals(0, g.depth());
            assertEquals(0, Words.lv(g.row), "the hazard published before the throw is still there");
            d.fail = false;
            try (Guard again = d.pin()) {
                assertEquals(1, again.depth());
                assertEquals(1, d.entries);
            }
        } finally {
            d.close();
        }
    }

    /** A test scheme whose entry publishes slot 0 and then throws when told to. */
    private static final class FailingEntry extends ReclaimDomain {
        volatile boolean fail;
        int entries;

        FailingEntry(final Builder b) {
            super(b);
        }

        @Override
        Guard newGuard(final int id) {
            return new Guard(this, id) {
                @Override
                void enter() {
                    Words.sv(row, 0x1000);
                    if (fail) {
                        throw new IllegalStateException("injected");
                    }
                    entries++;
                }

                @Override
                void exit() {
                    clear(row);
                }

                @Override
                public long protect(final int slot, final long address) {
                    return Words.la(address);
                }

                @Override
                public boolean protectIfEqual(final int slot, final long address, final long expected) {
                    return Words.la(address) == expected;
                }

                @Override
                public void retire(final long ptr) {
                    noteRetire(ptr);
                }
            };
        }

        @Override
        void flush(final Guard g) {
        }

        @Override
        void abandon(final Guard g) {
        }

        @Override
        void drainRetired(final Guard g, final BlockBag target) {
        }

        @Override
        long advances() {
            return 0;
        }

        @Override
        long garbageBound(final int n) {
            return Long.MAX_VALUE;
        }
    }

    // ------------------------------------------------------------------ close() and pinned threads

    @ParameterizedTest
    @MethodSource(ALL)
    void closeInsideAPinnedSectionIsRefusedAndTheDomainStaysOpen(final Scheme scheme) {
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).build();
        try (Guard g = d.pin()) {
            final IllegalStateException e = assertThrows(IllegalStateException.class, d::close);
            assertTrue(e.getMessage().contains("inside a pinned section"), e.getMessage());
            assertFalse(d.isClosed());
            g.retire(g.allocate()); // still usable
        }
        d.close();
        assertTrue(d.isClosed());
    }

    /**
     * close() from another thread waits for a pinned thread's section to end; the pinned thread
     * ends it only once it sees the domain closing, so the wait is certain to happen.
     */
    @ParameterizedTest
    @MethodSource(ALL)
    void closeWaitsForASectionInFlightOnAnotherThread(final Scheme scheme) throws Exception {
        final LimboAllocator a = ReclaimTestSupport.debugAllocator(); // poisons what is freed
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).slots(1)
                .closeTimeout(Duration.ofSeconds(50)).build();
        final long cell = a.allocateZeroed(Long.BYTES);
        final CountDownLatch pinned = new CountDownLatch(1);
        final AtomicReference<Throwable> closer = new AtomicReference<>();
        final AtomicReference<Throwable> readerFailure = new AtomicReference<>();
        final Thread reader = Thread.ofPlatform().start(() -> {
            try (Guard g = d.pin()) {
                final long node = g.allocate();
                Words.sp(node + Long.BYTES, 42);
                Words.sr(cell, node);
                assertEquals(node, g.protect(0, cell));
                pinned.countDown();
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
                while (!d.isClosed()) { // the closer has begun: every later pin throws
                    if (System.nanoTime() > deadline) {
                        fail("close() never began");
                    }
                    Thread.onSpinWait();
                }
                assertThrows(IllegalStateException.class, d::pin); // nested pins throw too
                assertEquals(42L, Words.lp(node + Long.BYTES)); // nothing was freed under the section
                assertEquals(node, g.protect(0, cell)); // its slots are still its own
                g.retire(Words.xchg(cell, 0));
            } catch (final Throwable t) {
                readerFailure.set(t);
                pinned.countDown();
            }
        });
        assertTrue(pinned.await(40, TimeUnit.SECONDS));
        final Thread c = Thread.ofPlatform().start(() -> {
            try {
                d.close();
            } catch (final Throwable t) {
                closer.set(t);
            }
        });
        reader.join();
        c.join();
        assertNull(readerFailure.get());
        assertNull(closer.get());
        assertTrue(d.isClosed());
        assertThrows(IllegalStateException.class, d::pin);
        a.free(cell);
        assertEquals(baseline + leakedBytes(scheme, 1), settle(a));
    }

    @ParameterizedTest
    @MethodSource(ALL)
    void closeRefusesAfterItsTimeoutWhileAThreadStaysPinned(final Scheme scheme) throws Exception {
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD)
                .closeTimeout(Duration.ofMillis(50)).build();
        final CountDownLatch pinned = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final Thread holder = Thread.ofPlatform().name("pinned-holder").start(() -> {
            try (Guard g = d.pin()) {
                pinned.countDown();
                release.await();
                g.retire(g.allocate()); // the domain stayed open: the section goes on
            } catch (final InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        try {
            assertTrue(pinned.await(40, TimeUnit.SECONDS));
            final IllegalStateException e = assertThrows(IllegalStateException.class, d::close);
            assertTrue(e.getMessage().contains("'pinned-holder' still pinned"), e.getMessage());
            assertTrue(e.getMessage().contains("stays open"), e.getMessage());
            assertFalse(d.isClosed());
            try (Guard g = d.pin()) {
                g.retire(g.allocate());
            }
        } finally {
            release.countDown();
            holder.join();
        }
        d.close();
        assertTrue(d.isClosed());
    }

    @ParameterizedTest
    @MethodSource(ALL)
    void everyPinAfterCloseThrowsOnEveryThread(final Scheme scheme) throws Exception {
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).build();
        try (Guard g = d.pin()) {
            g.retire(g.allocate());
        }
        runThreads(1, t -> {
            try (Guard g = d.pin()) {
                g.retire(g.allocate());
            }
        });
        d.close();
        assertThrows(IllegalStateException.class, d::pin);
        assertThrows(IllegalStateException.class, d::flush);
        runThreads(1, t -> assertThrows(IllegalStateException.class, d::pin));
    }

    // ------------------------------------------------------------------ what a closed domain leaves

    /** Build, use and close domains in a loop: the allocator's bytes in use come back every time. */
    @ParameterizedTest
    @MethodSource(ALL)
    void domainsBuiltAndClosedInALoopLeaveNoOffHeapBytes(final Scheme scheme) {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = settle(a);
        final int domains = 2_000;
        for (int i = 0; i < domains; i++) {
            final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).build();
            try (Guard g = d.pin()) {
                g.retire(g.allocate());
            }
            d.close();
        }
        assertEquals(baseline + leakedBytes(scheme, domains), settle(a));
    }

    /**
     * Domains built without an allocator share the process-wide one instead of creating one each
     * (which nothing closed: a loop of them exhausted the region); closing returns every record.
     */
    @ParameterizedTest
    @MethodSource(ALL)
    void domainsBuiltWithoutAnAllocatorShareOneAndReturnEveryByte(final Scheme scheme) {
        final LimboAllocator shared = LimboAllocator.shared();
        final long baseline = settle(shared);
        final int domains = 5_000;
        for (int i = 0; i < domains; i++) {
            final ReclaimDomain d = ReclaimDomain.builder(scheme).recordBytes(RECORD).build();
            assertEquals(shared, d.allocator());
            try (Guard g = d.pin()) {
                g.retire(g.allocate());
            }
            d.close();
        }
        assertEquals(baseline + leakedBytes(scheme, domains), settle(shared));
    }

    /**
     * After close() no live thread keeps the domain reachable: threads that pinned it (and are
     * still alive) hold no reference to its guards.
     */
    @ParameterizedTest
    @MethodSource(ALL)
    void aClosedDomainIsCollectableWhileTheThreadsThatUsedItLive(final Scheme scheme) throws Exception {
        final LimboAllocator a = LimboAllocator.create();
        final CountDownLatch used = new CountDownLatch(1);
        final CountDownLatch done = new CountDownLatch(1);
        final AtomicReference<ReclaimDomain> shared = new AtomicReference<>(
                ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).build());
        final Thread user = Thread.ofPlatform().start(() -> {
            retireOne(shared.get());
            used.countDown();
            try {
                done.await(); // stays alive while the domain is collected
            } catch (final InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        try {
            assertTrue(used.await(40, TimeUnit.SECONDS));
            retireOne(shared.get());
            final WeakReference<ReclaimDomain> ref = new WeakReference<>(shared.getAndSet(null));
            ref.get().close();
            for (int i = 0; i < 100 && ref.get() != null; i++) {
                System.gc();
            }
            assertNull(ref.get(), "a closed domain is still reachable");
        } finally {
            done.countDown();
            user.join();
        }
    }

    /**
     * Pins, retires a record and unpins, in a frame of its own: an interpreted frame may keep a
     * dead local (the guard) reachable until the method returns.
     */
    private static void retireOne(final ReclaimDomain d) {
        try (Guard g = d.pin()) {
            g.retire(g.allocate());
        }
    }
}
