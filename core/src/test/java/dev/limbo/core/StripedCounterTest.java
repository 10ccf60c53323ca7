package dev.limbo.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

class StripedCounterTest {

    @Test
    void aNewCounterSumsToZero() {
        final StripedCounter counter = new StripedCounter();
        assertEquals(0, counter.sum());
        assertEquals("0", counter.toString());
    }

    @Test
    void incrementAndAddOnOneThreadSumUp() {
        final StripedCounter counter = new StripedCounter();
        counter.increment();
        counter.increment();
        counter.add(40);
        assertEquals(42, counter.sum());
        counter.add(-50);
        assertEquals(-8, counter.sum());
        assertEquals("-8", counter.toString());
    }

    @Test
    void addsWithExplicitIdsLandOnStripesThatAllCount() {
        final StripedCounter counter = new StripedCounter();
        long expected = 0;
        for (int id = 0; id < 1000; id++) {
            counter.add(id, id);
            expected += id;
        }
        counter.add(-1, 3);
        counter.add(Integer.MIN_VALUE, 4);
        counter.add(Integer.MAX_VALUE, 5);
        expected += 12;
        assertEquals(expected, counter.sum());
    }

    @Test
    void twoCountersAreIndependent() {
        final StripedCounter a = new StripedCounter();
        final StripedCounter b = new StripedCounter();
        a.add(0, 7);
        b.add(0, 9);
        assertEquals(7, a.sum());
        assertEquals(9, b.sum());
    }

    @Test
    void concurrentAddsSumExactlyAfterJoin() throws Exception {
        final StripedCounter counter = new StripedCounter();
        final int threads = 4;
        final int perThread = 200_000;
        final CyclicBarrier start = new CyclicBarrier(threads);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final int which = t;
            final Thread worker = new Thread(() -> {
                try {
                    start.await();
                    final int id = Participants.current();
                    for (int i = 0; i < perThread; i++) {
                        switch (which % 3) {
                            case 0 -> counter.increment();
                            case 1 -> counter.add(id, 1);
                            default -> counter.add(0, 1); // all on one stripe: contended, still exact
                        }
                    }
                } catch (final Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            worker.start();
            workers.add(worker);
        }
        for (final Thread worker : workers) {
            worker.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        assertEquals((long) threads * perThread, counter.sum());
    }
}
