package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Scheme;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Michael-Scott queue with every scheme: sequential specification, concurrent FIFO, memory. */
class MichaelScottQueueTest {

    @ParameterizedTest
    @EnumSource(Scheme.class)
    void matchesArrayDeque(final Scheme scheme) {
        final LimboAllocator allocator = LimboAllocator.create();
        try (ReclaimDomain d = TreiberStackTest.domain(scheme, allocator); MichaelScottQueue queue = new MichaelScottQueue(d)) {
            final ArrayDeque<Long> model = new ArrayDeque<>();
            final SplittableRandom random = new SplittableRandom(7);
            for (int i = 0; i < 20_000; i++) {
                if (random.nextInt(100) < 55) {
                    final long v = random.nextLong(-1000, 1000);
                    queue.enqueue(v);
                    model.add(v);
                } else {
                    final Long expected = model.poll();
                    assertEquals(expected == null ? OffHeapStructure.RESERVED : expected, queue.dequeue(), "op " + i);
                }
                assertEquals(model.isEmpty(), queue.isEmpty());
            }
        }
    }

    /**
     * Producers enqueue increasing sequences, consumers dequeue: every value arrives exactly once,
     * and each consumer sees each producer's values in increasing order (FIFO per producer).
     */
    @ParameterizedTest
    @EnumSource(Scheme.class)
    void concurrentProducersAndConsumers(final Scheme scheme) throws Exception {
        final LimboAllocator allocator = LimboAllocator.create();
        final long baseline = allocator.stats().bytesInUse();
        final ReclaimDomain d = TreiberStackTest.domain(scheme, allocator);
        final MichaelScottQueue queue = new MichaelScottQueue(d);
        final int producers = 2;
        final int perProducer = 30_000;
        final ConcurrentHashMap<Long, Boolean> seen = new ConcurrentHashMap<>();
        final AtomicLong duplicates = new AtomicLong();
        final AtomicLong reorderings = new AtomicLong();
        final AtomicLong consumed = new AtomicLong();
        final CountDownLatch start = new CountDownLatch(1);
        final List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            final long producer = p;
            threads.add(Thread.ofPlatform().start(() -> {
                TreiberStackTest.await(start);
                for (int i = 0; i < perProducer; i++) {
                    queue.enqueue(producer << 32 | i);
                }
            }));
        }
        for (int c = 0; c < 2; c++) {
            threads.add(Thread.ofPlatform().start(() -> {
                TreiberStackTest.await(start);
                final long[] last = new long[producers];
                java.util.Arrays.fill(last, -1);
                while (consumed.get() < (long) producers * perProducer) {
                    final long v = queue.dequeue();
                    if (v == OffHeapStructure.RESERVED) {
                        Thread.onSpinWait();
                        continue;
                    }
                    consumed.incrementAndGet();
                    final int producer = (int) (v >>> 32);
                    final long seq = v & 0xFFFF_FFFFL;
                    if (seq <= last[producer]) {
                        reorderings.incrementAndGet();
                    }
                    last[producer] = seq;
                    if (seen.put(v, Boolean.TRUE) != null) {
                        duplicates.incrementAndGet();
                    }
                }
            }));
        }
        start.countDown();
        for (final Thread t : threads) {
            t.join();
        }
        assertEquals(0, duplicates.get(), "a value was dequeued twice");
        assertEquals(0, reorderings.get(), "a consumer saw a producer's values out of order");
        assertEquals((long) producers * perProducer, seen.size(), "values were lost");
        assertTrue(queue.isEmpty());
        queue.close();
        d.flush();
        final long leaked = scheme == Scheme.NONE ? d.stats().retired() * (LinkedNodeLayout.SIZE + ReclaimDomain.TRAILER_BYTES) : 0;
        if (scheme != Scheme.NONE) {
            assertEquals(d.stats().retired(), d.stats().freed());
        }
        d.close();
        allocator.trim();
        assertEquals(baseline + leaked, allocator.stats().bytesInUse());
    }

    @Test
    void rejectsTheReservedValueAndUseAfterClose() {
        final LimboAllocator allocator = LimboAllocator.create();
        try (ReclaimDomain d = TreiberStackTest.domain(Scheme.HP, allocator)) {
            final MichaelScottQueue queue = new MichaelScottQueue(d);
            assertThrows(IllegalArgumentException.class, () -> queue.enqueue(OffHeapStructure.RESERVED));
            queue.enqueue(5);
            queue.close();
            queue.close(); // idempotent
            assertThrows(IllegalStateException.class, () -> queue.enqueue(1));
            assertThrows(IllegalStateException.class, queue::dequeue);
        }
    }

    @Test
    void needsTwoSlots() {
        final LimboAllocator allocator = LimboAllocator.create();
        try (ReclaimDomain d = ReclaimDomain.builder(Scheme.HP).allocator(allocator).recordBytes(16).slots(1).build()) {
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new MichaelScottQueue(d));
            assertTrue(e.getMessage().contains("slots"), e.getMessage());
        }
    }
}
