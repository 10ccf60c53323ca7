package dev.limbo.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Participants is process-wide state shared with every other test in this JVM, so the assertions
 * here hold whatever ids other tests (or the cleaner) hold or release meanwhile.
 */
@SuppressWarnings("try") // hooks registered for the length of a try block are not referenced in it
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ParticipantsTest {

    /**
     * How long a test waits for other threads (to start and claim, for the Cleaner): the waits end
     * as soon as what they wait for happens, so this only bounds a hang, far above the milliseconds
     * they need on a loaded 2-core machine.
     */
    private static final long WAIT_SECONDS = 60;

    /** Runs {@code body} on a fresh platform thread, waits for it to die, and returns its result. */
    private static <T> T inFreshThread(final Callable<T> body) throws InterruptedException {
        final AtomicReference<T> result = new AtomicReference<>();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread thread = new Thread(() -> {
            try {
                result.set(body.call());
            } catch (final Throwable t) {
                failure.set(t);
            }
        });
        thread.start();
        thread.join();
        if (failure.get() != null) {
            throw new AssertionError("thread body failed", failure.get());
        }
        return result.get();
    }

    /** Starts {@code n} platform threads that each claim an id and hold it until all have claimed. */
    private static int[] idsOfConcurrentlyAliveThreads(final int n, final boolean closeBeforeDying)
            throws InterruptedException {
        final int[] ids = new int[n];
        final CountDownLatch claimed = new CountDownLatch(n);
        final CountDownLatch release = new CountDownLatch(1);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            final int which = i;
            final Thread thread = new Thread(() -> {
                try {
                    ids[which] = Participants.current();
                    claimed.countDown();
                    release.await();
                    if (closeBeforeDying) {
                        Participants.close();
                    }
                } catch (final Throwable t) {
                    failure.compareAndSet(null, t);
                    claimed.countDown();
                }
            });
            thread.start();
            threads.add(thread);
        }
        assertTrue(claimed.await(WAIT_SECONDS, TimeUnit.SECONDS), "the threads did not all claim an id");
        for (final int id : ids) {
            assertTrue(Participants.isHeld(id), "id " + id + " of a live thread must be held");
        }
        release.countDown();
        for (final Thread thread : threads) {
            thread.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        return ids;
    }

    @Test
    void currentIsStableWithinAThreadAndInRange() throws Exception {
        inFreshThread(() -> {
            final int id = Participants.current();
            assertTrue(id >= 0 && id < Participants.CAPACITY, "id " + id);
            assertTrue(Participants.highWater() > id);
            assertTrue(Participants.isHeld(id));
            for (int i = 0; i < 100; i++) {
                assertEquals(id, Participants.current());
            }
            Participants.close();
            return null;
        });
    }

    @Test
    void tryCurrentClaimsLikeCurrentAndAgreesWithIt() throws Exception {
        inFreshThread(() -> {
            final int id = Participants.tryCurrent();
            assertTrue(id >= 0 && id < Participants.CAPACITY, "id " + id);
            assertTrue(Participants.isHeld(id));
            assertEquals(id, Participants.current());
            assertEquals(id, Participants.tryCurrent());
            Participants.close();
            assertTrue(Participants.tryCurrent() >= 0, "a closed thread claims a fresh id");
            Participants.close();
            return null;
        });
    }

    @Test
    void concurrentlyAliveThreadsGetDistinctIds() throws Exception {
        final int[] ids = idsOfConcurrentlyAliveThreads(16, true);
        final Set<Integer> distinct = new HashSet<>();
        for (final int id : ids) {
            assertTrue(distinct.add(id), "id " + id + " was handed to two live threads");
        }
    }

    @Test
    void closeReleasesTheIdAndRunsTheHooksWithIt() throws Exception {
        final ConcurrentLinkedQueue<Integer> released = new ConcurrentLinkedQueue<>();
        final ConcurrentHashMap<Integer, Boolean> heldDuringHook = new ConcurrentHashMap<>();
        try (AutoCloseable hook = Participants.onRelease(id -> {
            released.add(id);
            heldDuringHook.put(id, Participants.isHeld(id));
        })) {
            final int id = inFreshThread(() -> {
                final int mine = Participants.current();
                Participants.close();
                assertFalse(Participants.isHeld(mine), "a closed id must be free");
                assertTrue(released.contains(mine), "the hooks must have run before close() returns");
                return mine;
            });
            assertEquals(Boolean.FALSE, heldDuringHook.get(id), "hooks run while no thread holds the id");
        }
    }

    @Test
    void aThreadThatClosesGetsAnIdAgainOnItsNextCall() throws Exception {
        inFreshThread(() -> {
            final int first = Participants.current();
            Participants.close();
            final int second = Participants.current();
            assertTrue(Participants.isHeld(second));
            assertTrue(second <= first, "the lowest free id is " + second + " at most, was " + first);
            assertEquals(second, Participants.current());
            Participants.close();
            return null;
        });
    }

    @Test
    void closeWithoutAnIdDoesNothing() throws Exception {
        final ConcurrentLinkedQueue<String> threadsSeen = new ConcurrentLinkedQueue<>();
        try (AutoCloseable hook = Participants.onRelease(id -> threadsSeen.add(Thread.currentThread().getName()))) {
            inFreshThread(() -> {
                Thread.currentThread().setName("never-claimed");
                Participants.close();
                Participants.close();
                return null;
            });
        }
        assertFalse(threadsSeen.contains("never-claimed"), "no id was held, so no hook may run");
    }

    @Test
    void aCloseCheckThatThrowsRefusesTheCloseAndTheThreadKeepsItsId() throws Exception {
        final ConcurrentLinkedQueue<Integer> released = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<Integer> checked = new ConcurrentLinkedQueue<>();
        try (AutoCloseable hook = Participants.onRelease(released::add)) {
            inFreshThread(() -> {
                final int mine = Participants.current();
                released.clear(); // claiming may have released a dead thread's id, this one included
                final AutoCloseable check = Participants.onClose(id -> {
                    checked.add(id);
                    if (id == mine) {
                        throw new IllegalStateException("still in use");
                    }
                });
                try {
                    assertEquals("still in use", assertThrows(IllegalStateException.class, Participants::close)
                            .getMessage());
                    assertTrue(checked.contains(mine), "the check ran with the closing thread's id");
                    assertTrue(Participants.isHeld(mine), "a refused close released the id");
                    assertEquals(mine, Participants.current());
                    assertFalse(released.contains(mine), "a refused close ran the release hooks");
                } finally {
                    check.close();
                }
                Participants.close();
                assertFalse(Participants.isHeld(mine));
                assertTrue(released.contains(mine));
                return null;
            });
        }
    }

    @Test
    void aBadCapacityPropertyValueNamesThePropertyAndTheValue() {
        assertEquals(1024, Participants.capacity(null), "unset: the default");
        assertEquals(64, Participants.capacity("64"));
        assertEquals(1 << 20, Participants.capacity(" 1048576 "));
        for (final String bad : new String[] {"", "  ", "abc", "1.5", "0", "-5", "1048577", "99999999999"}) {
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> Participants.capacity(bad), "'" + bad + "'");
            assertTrue(e.getMessage().contains("-D" + Participants.CAPACITY_PROPERTY + "=" + bad + " "), e.getMessage());
        }
    }

    @Test
    void anUnregisteredHookIsNotCalledAnymore() throws Exception {
        final ConcurrentLinkedQueue<Integer> released = new ConcurrentLinkedQueue<>();
        final AutoCloseable hook = Participants.onRelease(released::add);
        hook.close();
        inFreshThread(() -> {
            Participants.current();
            Participants.close();
            return null;
        });
        assertTrue(released.isEmpty(), "unregistered hook saw " + released);
    }

    @Test
    void theIdsOfDeadThreadsAreReleasedByReapTerminated() throws Exception {
        final ConcurrentLinkedQueue<Integer> released = new ConcurrentLinkedQueue<>();
        try (AutoCloseable hook = Participants.onRelease(released::add)) {
            final int[] ids = idsOfConcurrentlyAliveThreads(4, false);
            Participants.reapTerminated();
            Participants.awaitReleases(); // the Cleaner may have won a release: its hooks may still run
            for (final int id : ids) {
                assertFalse(Participants.isHeld(id), "id " + id + " of a dead thread is still held");
                assertTrue(released.contains(id), "the hooks never saw id " + id);
            }
        }
        assertTrue(Participants.reapTerminated() >= 0);
    }

    @Test
    void reapTerminatedLeavesTheIdsOfLiveThreads() throws Exception {
        final CountDownLatch claimed = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final AtomicInteger id = new AtomicInteger(-1);
        final Thread holder = new Thread(() -> {
            id.set(Participants.current());
            claimed.countDown();
            try {
                release.await();
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            Participants.close();
        });
        holder.start();
        try {
            assertTrue(claimed.await(WAIT_SECONDS, TimeUnit.SECONDS), "the holder did not claim an id");
            Participants.reapTerminated();
            assertTrue(Participants.isHeld(id.get()), "reaping must not take the id of a live thread");
        } finally {
            release.countDown();
            holder.join();
        }
        assertFalse(Participants.isHeld(id.get()));
    }

    @Test
    void theIdOfADeadThreadIsReleasedOnceItsTokenIsCollected() throws Exception {
        final ConcurrentLinkedQueue<Integer> released = new ConcurrentLinkedQueue<>();
        try (AutoCloseable hook = Participants.onRelease(released::add)) {
            // Claiming may itself release (and hand over) the id of an earlier dead holder, so count
            // the releases of this id seen once the thread holds it, and wait for one more.
            final int[] idAndReleases = inFreshThread(() -> {
                final int id = Participants.current();
                return new int[] {id, occurrences(released, id)};
            });
            final int id = idAndReleases[0];
            // the release needs a GC that finds the token and then the Cleaner's thread: wait for
            // it, however late they come, up to a generous deadline
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
            while (occurrences(released, id) == idAndReleases[1] && System.nanoTime() < deadline) {
                System.gc();
                Thread.sleep(20);
            }
            assertEquals(idAndReleases[1] + 1, occurrences(released, id),
                    "the cleaner never released id " + id + " of a dead thread");
            assertFalse(Participants.isHeld(id));
        }
    }

    private static int occurrences(final ConcurrentLinkedQueue<Integer> released, final int id) {
        return (int) released.stream().filter(r -> r == id).count();
    }

    @Test
    void aFreshThreadAfterOthersClosedGetsALowId() throws Exception {
        final int[] ids = idsOfConcurrentlyAliveThreads(8, true);
        final int lowest = java.util.Arrays.stream(ids).min().orElseThrow();
        final int fresh = inFreshThread(() -> {
            final int id = Participants.current();
            Participants.close();
            return id;
        });
        assertTrue(fresh <= lowest, "fresh thread got " + fresh + " although " + lowest + " was free");
    }

    @Test
    void aFreshThreadAfterOthersDiedWithoutClosingGetsALowId() throws Exception {
        final int[] ids = idsOfConcurrentlyAliveThreads(8, false);
        final int lowest = java.util.Arrays.stream(ids).min().orElseThrow();
        // A claim skips an id that the Cleaner is releasing (it found the dead thread's token
        // unreachable after a GC); the claim itself releases the others.
        Participants.awaitReleases();
        final int fresh = inFreshThread(Participants::current);
        assertTrue(fresh <= lowest, "fresh thread got " + fresh + " although the holder of " + lowest + " died");
    }

    /** Ids held by live threads right now (after reaping the dead), the floor for fresh claims. */
    private static int liveHolders() {
        Participants.reapTerminated();
        return Participants.heldCount();
    }

    @Test
    void aThousandShortLivedPlatformThreadsReuseLowIdsAndKeepTheHighWaterMarkSmall() throws Exception {
        final int live = liveHolders();
        final int highWaterBefore = Participants.highWater();
        final AtomicInteger maxId = new AtomicInteger(-1);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int i = 0; i < 1000; i += 4) {
            final List<Thread> batch = new ArrayList<>();
            for (int j = 0; j < 4; j++) {
                final Thread thread = new Thread(() -> {
                    try {
                        final int id = Participants.current();
                        maxId.accumulateAndGet(id, Math::max);
                        Words.xadd(SharedWord.OFFSET, 1);
                        assertEquals(id, Participants.current());
                    } catch (final Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                });
                thread.start();
                batch.add(thread);
            }
            for (final Thread thread : batch) {
                thread.join();
            }
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        // At most 4 of these threads are alive at once, so no id above live + 4 (plus slack for
        // other tests' threads) is ever needed.
        final int bound = live + 4 + 8;
        assertTrue(maxId.get() < bound, "1000 short-lived threads, at most 4 alive at once, with " + live
                + " other live holders, reached id " + maxId.get());
        final int highWaterAfter = Participants.highWater();
        assertTrue(highWaterAfter <= Math.max(highWaterBefore, bound),
                "the high-water mark went from " + highWaterBefore + " to " + highWaterAfter);
    }

    @Test
    void aHundredThousandVirtualThreadsAllGetIdsAndStayBounded() {
        assertTimeoutPreemptively(Duration.ofSeconds(2 * WAIT_SECONDS), () -> { // about 2 s on 2 cores
            final PerThreadSlots slots = PerThreadSlots.claimPermanent(ValueLayout.JAVA_LONG.withName("count"));
            final int live = liveHolders();
            final int highWaterBefore = Participants.highWater();
            final int tasks = 100_000;
            final AtomicInteger done = new AtomicInteger();
            final AtomicInteger maxId = new AtomicInteger(-1);
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            try (ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int i = 0; i < tasks; i++) {
                    executor.submit(() -> {
                        try {
                            final int id = Participants.current();
                            maxId.accumulateAndGet(id, Math::max);
                            Words.xadd(slots.slot(id), 1);
                            done.incrementAndGet();
                        } catch (final Throwable t) {
                            failure.compareAndSet(null, t);
                        }
                    });
                }
            }
            if (failure.get() != null) {
                throw new AssertionError("a virtual thread failed", failure.get());
            }
            assertEquals(tasks, done.get());
            long sum = 0;
            for (int id = 0; id < Participants.CAPACITY; id++) {
                sum += Words.lv(slots.slot(id));
            }
            assertEquals(tasks, sum, "every task counted once on its own id's slot");
            // Few virtual threads are mid-task at once (one per carrier, plus any parked on a monitor),
            // so dead holders' ids are reused and ids stay far below the capacity.
            final int bound = live + 128;
            assertTrue(maxId.get() < bound, "with " + live + " other live holders the ids reached " + maxId.get());
            assertTrue(Participants.heldCount() <= Math.max(highWaterBefore, bound));
            final int highWaterAfter = Participants.highWater();
            assertTrue(highWaterAfter <= Math.max(highWaterBefore, bound),
                    "the high-water mark went from " + highWaterBefore + " to " + highWaterAfter);
        });
    }

    @Test
    @Order(Integer.MAX_VALUE) // last: it raises the high-water mark to the capacity for good
    void runningOutOfIdsNamesTheCapacityProperty() throws Exception {
        final int attempts = Participants.CAPACITY + 4;
        final CountDownLatch tried = new CountDownLatch(attempts);
        final CountDownLatch release = new CountDownLatch(1);
        final AtomicInteger claimedIds = new AtomicInteger();
        final ConcurrentLinkedQueue<Throwable> refusals = new ConcurrentLinkedQueue<>();
        final ConcurrentHashMap<Integer, Boolean> distinct = new ConcurrentHashMap<>();
        try (ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < attempts; i++) {
                executor.submit(() -> {
                    try {
                        final int id = Participants.current();
                        claimedIds.incrementAndGet();
                        assertTrue(distinct.putIfAbsent(id, Boolean.TRUE) == null, "id " + id + " handed out twice");
                    } catch (final Throwable t) {
                        refusals.add(t);
                    } finally {
                        tried.countDown();
                    }
                    try {
                        release.await();
                    } catch (final InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        Participants.close();
                    }
                    return null;
                });
            }
            try {
                assertTrue(tried.await(WAIT_SECONDS, TimeUnit.SECONDS), "not every claim was tried");
            } finally {
                release.countDown();
            }
        }
        assertTrue(claimedIds.get() <= Participants.CAPACITY);
        assertTrue(refusals.size() >= 4, "only " + refusals.size() + " of " + attempts + " claims were refused");
        for (final Throwable refusal : refusals) {
            assertTrue(refusal instanceof IllegalStateException, refusal.toString());
            assertTrue(refusal.getMessage().contains(Participants.CAPACITY_PROPERTY), refusal.getMessage());
        }
        // Once the holders are gone, ids are available again.
        final int fresh = inFreshThread(() -> {
            final int id = Participants.current();
            Participants.close();
            return id;
        });
        assertNotEquals(-1, fresh);
        assertTrue(fresh < Participants.CAPACITY);
    }

    /** A word of the global region that the thread tests bump. */
    private static final class SharedWord {
        static final long OFFSET = Region.global().claim(8, 8);
    }
}
