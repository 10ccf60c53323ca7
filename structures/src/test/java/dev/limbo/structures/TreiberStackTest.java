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
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Treiber stack with every scheme: sequential specification, concurrent stress, memory. */
class TreiberStackTest {

    static ReclaimDomain domain(final Scheme scheme, final LimboAllocator allocator) {
        return ReclaimDomain.builder(scheme).allocator(allocator).recordBytes(LinkedNodeLayout.SIZE).slots(2).build();
    }

    @ParameterizedTest
    @EnumSource(Scheme.class)
    void matchesArrayDeque(final Scheme scheme) {
        final LimboAllocator allocator = LimboAllocator.create();
        try (ReclaimDomain d = domain(scheme, allocator); TreiberStack stack = new TreiberStack(d)) {
            final ArrayDeque<Long> model = new ArrayDeque<>();
            final SplittableRandom random = new SplittableRandom(42);
            for (int i = 0; i < 20_000; i++) {
                if (random.nextInt(100) < 55) {
                    final long v = random.nextLong(-1000, 1000);
                    stack.push(v);
                    model.push(v);
                } else {
                    final Long expected = model.poll();
                    assertEquals(expected == null ? OffHeapStructure.RESERVED : expected, stack.pop(), "op " + i);
                }
                assertEquals(model.isEmpty(), stack.isEmpty());
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Scheme.class)
    void concurrentPushPopLosesAndDuplicatesNothing(final Scheme scheme) throws Exception {
        final LimboAllocator allocator = LimboAllocator.create();
        final long baseline = allocator.stats().bytesInUse();
        final ReclaimDomain d = domain(scheme, allocator);
        final TreiberStack stack = new TreiberStack(d);
        final int threads = 3;
        final int perThread = 20_000;
        final ConcurrentHashMap<Long, Boolean> seen = new ConcurrentHashMap<>();
        final AtomicLong duplicates = new AtomicLong();
        final CountDownLatch start = new CountDownLatch(1);
        final List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final long base = (long) t * perThread;
            workers.add(Thread.ofPlatform().start(() -> {
                await(start);
                for (int i = 0; i < perThread; i++) {
                    stack.push(base + i);
                    if ((i & 1) == 1) {
                        record(stack.pop(), seen, duplicates);
                    }
                }
            }));
        }
        start.countDown();
        for (final Thread w : workers) {
            w.join();
        }
        for (long v; (v = stack.pop()) != OffHeapStructure.RESERVED; ) {
            record(v, seen, duplicates);
        }
        assertEquals(0, duplicates.get(), "a value was popped twice");
        assertEquals((long) threads * perThread, seen.size(), "values were lost");
        assertTrue(stack.isEmpty());
        stack.close();
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
        try (ReclaimDomain d = domain(Scheme.DEBRA, allocator)) {
            final TreiberStack stack = new TreiberStack(d);
            assertThrows(IllegalArgumentException.class, () -> stack.push(OffHeapStructure.RESERVED));
            stack.push(1);
            stack.close();
            assertTrue(stack.isClosed());
            assertThrows(IllegalStateException.class, () -> stack.push(2));
            assertThrows(IllegalStateException.class, stack::pop);
        }
    }

    @Test
    void rejectsADomainWithSmallRecords() {
        final LimboAllocator allocator = LimboAllocator.create();
        try (ReclaimDomain d = ReclaimDomain.builder(Scheme.HP).allocator(allocator).recordBytes(8).build()) {
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new TreiberStack(d));
            assertTrue(e.getMessage().contains("16"), e.getMessage());
        }
    }

    static void record(final long v, final ConcurrentHashMap<Long, Boolean> seen, final AtomicLong duplicates) {
        assertFalse(v == OffHeapStructure.RESERVED, "pop of a non-empty stack returned empty");
        if (seen.put(v, Boolean.TRUE) != null) {
            duplicates.incrementAndGet();
        }
    }

    static void await(final CountDownLatch latch) {
        try {
            latch.await();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
