package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Scheme;
import dev.limbo.core.Words;
import dev.limbo.reclaim.Guard;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
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
                final int op = random.nextInt(100);
                if (op < 10) {
                    final long v = random.nextLong(-100, 100);
                    assertEquals(model.contains(v), stack.contains(v), "op " + i + " contains " + v);
                } else if (op < 60) {
                    final long v = random.nextLong(-100, 100);
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

    /**
     * contains under every scheme, racing with pops: workers push and pop values of their own
     * (each pops only after pushing more than it popped, so the values pushed before they start
     * stay at the bottom, out of every pop's reach) and run contains, which must always find those
     * and never a value nobody pushed. Under hp a traversal standing on a node just popped would
     * follow its next to a node that may be popped and freed meanwhile; the claim mark makes it
     * restart instead. Debug allocator and domain: a freed node is poisoned, so a traversal that
     * read one would see a value that was never pushed, or crash on a poisoned next. Every value
     * comes out exactly once. Restarts are injected into the read phases (contains, pop, help),
     * which must start over without repeating a write.
     */
    @ParameterizedTest
    @EnumSource(Scheme.class)
    @Timeout(60)
    void containsRacingWithPops(final Scheme scheme) throws Exception {
        final Fixture f = new Fixture(Kind.STACK, scheme, true, 500); // restarts injected at about one poll in 500
        final TreiberStack stack = (TreiberStack) f.structure;
        final int workers = 3;
        final int bottom = 3;
        final long bottomProducer = (long) workers << 32;
        for (int n = 0; n < bottom; n++) {
            stack.push(bottomProducer | n);
        }
        final List<Workload.Linear> done = Workers.run(workers, false, id -> {
            final Workload.Linear w = new Workload.Linear(f.linear(), false, id, workers, 5);
            final SplittableRandom random = new SplittableRandom(id);
            while (w.steps < 6_000) {
                if (random.nextInt(4) == 0) {
                    final long n = random.nextInt(bottom);
                    assertTrue(stack.contains(bottomProducer | n), "worker " + id + ": contains missed a bottom value");
                    assertFalse(stack.contains(bottomProducer | bottom), "worker " + id + ": contains found a value never pushed");
                }
                // mostly pops: the stack stays short, so traversals often stand on nodes being popped
                if (w.added > w.taken.size() && random.nextBoolean()) {
                    final long v = stack.pop();
                    w.check(v, "worker " + id + " pop");
                    w.taken.add(v);
                    w.steps++;
                } else {
                    w.step();
                }
            }
            return w;
        });
        final LongMapChecks.LongList in = new LongMapChecks.LongList();
        final LongMapChecks.LongList out = new LongMapChecks.LongList();
        for (int n = 0; n < bottom; n++) {
            in.add(bottomProducer | n);
        }
        for (final Workload.Linear w : done) {
            for (long n = 0; n < w.added; n++) {
                in.add((long) w.id << 32 | n);
            }
            out.addAll(w.taken.toArray());
        }
        for (long v; (v = stack.pop()) != OffHeapStructure.RESERVED; ) {
            out.add(v);
        }
        final long[] expected = in.toArray();
        final long[] actual = out.toArray();
        Arrays.sort(expected);
        Arrays.sort(actual);
        assertArrayEquals(expected, actual, "a value was lost or popped twice");
        assertTrue(stack.isEmpty());
        assertTrue(f.domain.stats().restarts() > 0, "no restart was injected");
        f.closeAndCheckMemory();
    }

    /**
     * A popper that stalls between its claim and its unlink leaves a marked top: pop, push,
     * isEmpty and contains see the stack without that node, and the first pop or push that meets
     * it finishes the unlink (the popper's own unlink CAS then fails harmlessly).
     */
    @ParameterizedTest
    @EnumSource(Scheme.class)
    void aStalledClaimIsHelped(final Scheme scheme) {
        final Fixture f = new Fixture(Kind.STACK, scheme, true);
        final TreiberStack stack = (TreiberStack) f.structure;
        final long top = stack.topAddress();
        stack.push(1);
        final long one = claimTop(top);
        assertTrue(stack.isEmpty(), "the only node is claimed: empty");
        assertFalse(stack.contains(1), "a claimed node's value is popped already");
        stack.push(2); // helps: unlinks 1 first
        assertEquals(0, Words.la(top) & TreiberStack.MARK);
        assertEquals(0, Words.lp(Words.la(top) + LinkedNodeLayout.NEXT), "2 was linked onto 1, a claimed node");
        assertTrue(stack.contains(2));
        stack.push(3);
        final long three = claimTop(top);
        assertFalse(stack.isEmpty());
        assertFalse(stack.contains(3));
        assertTrue(stack.contains(2));
        assertEquals(2, stack.pop(), "pop helps the claim on 3, then pops 2");
        assertTrue(stack.isEmpty());
        assertEquals(0, Words.la(top));
        // the stalled poppers would retire their nodes after their unlink: the test does it for them
        try (Guard g = f.domain.pin()) {
            g.retire(one);
            g.retire(three);
        }
        f.closeAndCheckMemory();
    }

    /** What a popper does before its unlink: claim top (1), then mark the node's next (5). Returns the node. */
    private static long claimTop(final long top) {
        final long t = Words.la(top);
        assertTrue(t != 0 && (t & TreiberStack.MARK) == 0);
        assertTrue(Words.cas(top, t, t | TreiberStack.MARK));
        final long next = Words.lp(t + LinkedNodeLayout.NEXT);
        Words.sr(t + LinkedNodeLayout.NEXT, next | TreiberStack.MARK);
        return t;
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
