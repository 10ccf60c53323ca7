package dev.limbo.structures;

import dev.limbo.core.Participants;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Worker threads for concurrent tests: they start together, each runs its body once and gives its
 * participant id back when done (so its allocator cache and retired nodes are handed over before
 * {@link #join} returns, not later on the JDK's Cleaner thread), and the first failure fails the
 * test.
 */
final class Workers<T> {

    /** A worker's body; {@code id} is 0 .. threads - 1. */
    interface Body<T> {
        T run(int id) throws Exception;
    }

    /** How long {@link #join} waits for all workers before it fails the test. */
    static final long TIMEOUT_SECONDS = 120;

    private final Thread[] threads;
    private final AtomicReferenceArray<T> results;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    private Workers(final int n, final boolean virtual, final Body<T> body) {
        threads = new Thread[n];
        results = new AtomicReferenceArray<>(n);
        final CountDownLatch start = new CountDownLatch(1);
        final Thread.Builder builder = virtual ? Thread.ofVirtual() : Thread.ofPlatform();
        for (int i = 0; i < n; i++) {
            final int id = i;
            threads[i] = builder.name("worker-" + i).unstarted(() -> {
                try {
                    start.await();
                    results.set(id, body.run(id));
                } catch (final Throwable e) {
                    failure.compareAndSet(null, e);
                } finally {
                    Participants.close();
                }
            });
            threads[i].start();
        }
        start.countDown();
    }

    /** Starts {@code n} workers (virtual threads if {@code virtual}) running {@code body}. */
    static <T> Workers<T> start(final int n, final boolean virtual, final Body<T> body) {
        return new Workers<>(n, virtual, body);
    }

    /** Runs {@code n} workers to the end; their results, by id. */
    static <T> List<T> run(final int n, final boolean virtual, final Body<T> body) throws InterruptedException {
        return start(n, virtual, body).join();
    }

    /** Worker {@code id}'s thread. */
    Thread thread(final int id) {
        return threads[id];
    }

    /** Waits for every worker (at most {@link #TIMEOUT_SECONDS} in all); fails on the first failure. */
    List<T> join() throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        for (final Thread t : threads) {
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            assertFalse(t.isAlive(), t.getName() + " still runs after " + TIMEOUT_SECONDS
                    + " s: livelock, or a structure corrupted into a cycle");
        }
        if (failure.get() != null) {
            throw new AssertionError("a worker failed", failure.get());
        }
        final List<T> list = new ArrayList<>();
        for (int i = 0; i < threads.length; i++) {
            list.add(results.get(i));
        }
        return list;
    }
}
