package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.rc.Cdrc;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import static dev.limbo.structures.StructureLifecycle.RESERVED;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The CDRC Treiber stack in both modes: sequential specification, contains, concurrent stress, misuse, memory. */
class CdrcTreiberStackTest {

    @ParameterizedTest(name = "snapshots {0}")
    @ValueSource(booleans = {true, false})
    void matchesArrayDeque(final boolean snapshots) {
        final CdrcFixture f = new CdrcFixture(CdrcKind.STACK, snapshots);
        final CdrcTreiberStack stack = (CdrcTreiberStack) f.structure;
        final ArrayDeque<Long> model = new ArrayDeque<>();
        try (CdrcFixture.Held spare = CdrcFixture.holdSpareSnapshots(f.rc, CdrcKind.STACK)) {
            final SplittableRandom random = new SplittableRandom(42);
            for (int i = 0; i < 20_000; i++) {
                final int op = random.nextInt(100);
                final long v = random.nextLong(-50, 50);
                if (op < 47) {
                    stack.push(v);
                    model.push(v);
                } else if (op < 90) {
                    assertEquals(LongMapChecks.orReserved(model.poll()), stack.pop(), "op " + i + " pop");
                } else {
                    assertEquals(model.contains(v), stack.contains(v), "op " + i + " contains " + v);
                }
                assertEquals(model.isEmpty(), stack.isEmpty(), "op " + i + " isEmpty");
                if (i % 512 == 0) {
                    assertEquals(model.size(), stack.size(), "op " + i + " size");
                }
            }
            assertEquals(0, spare.evictions(), "an operation held more than SNAPSHOTS snapshots");
        }
        assertTrue(model.size() > 0, "the workload should leave values behind, to be freed by close");
        assertEquals(model.size(), stack.size());
        f.closeAndCheckMemory();
    }

    /**
     * Workers push and pop values of their own (each pops only after pushing more than it popped,
     * so the stack never holds fewer than the values pushed before they start, which no pop can
     * reach) and run contains: it always finds those bottom values and never finds a value nobody
     * pushed. Afterwards every value pushed was popped exactly once (by a worker or the final
     * drain), and every node is freed once the domain closes (debug allocator: a node freed while
     * a traversal reads it would show up as a poisoned value).
     */
    @ParameterizedTest(name = "snapshots {0}")
    @ValueSource(booleans = {true, false})
    @Timeout(60)
    void concurrentPushPopContainsLosesNothing(final boolean snapshots) throws Exception {
        final CdrcFixture f = new CdrcFixture(CdrcKind.STACK, snapshots);
        final CdrcTreiberStack stack = (CdrcTreiberStack) f.structure;
        final int workers = 3;
        final int ops = 10_000;
        final int bottom = 4;
        final long bottomProducer = (long) workers << 32;
        for (int n = 0; n < bottom; n++) {
            stack.push(bottomProducer | n);
        }
        final List<Workload.Linear> done = Workers.run(workers, false, id -> {
            final Workload.Linear w = new Workload.Linear(f.linear(), false, id, workers, 17);
            final SplittableRandom random = new SplittableRandom(id);
            while (w.steps < ops) {
                if (random.nextInt(200) == 0) {
                    final long n = random.nextInt(bottom);
                    assertTrue(stack.contains(bottomProducer | n), "worker " + id + ": contains missed a bottom value");
                    assertFalse(stack.contains(bottomProducer | bottom), "worker " + id + ": contains found a value never pushed");
                }
                w.step();
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
        for (long v; (v = stack.pop()) != RESERVED; ) {
            out.add(v);
        }
        final long[] expected = in.toArray();
        final long[] actual = out.toArray();
        Arrays.sort(expected);
        Arrays.sort(actual);
        assertArrayEquals(expected, actual, "a value was lost or popped twice");
        assertTrue(stack.isEmpty());
        f.closeAndCheckMemory();
    }

    @Test
    void rejectsBadInputAndUseAfterClose() {
        final CdrcFixture f = new CdrcFixture(CdrcKind.STACK, true);
        final CdrcTreiberStack stack = (CdrcTreiberStack) f.structure;
        final IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> stack.push(RESERVED));
        assertTrue(bad.getMessage().contains("reserved"), bad.getMessage());
        assertTrue(stack.isEmpty(), "a rejected push changed the stack");
        stack.push(1);
        stack.push(2);
        stack.close();
        assertTrue(stack.isClosed());
        stack.close(); // idempotent
        final IllegalStateException closed = assertThrows(IllegalStateException.class, () -> stack.push(3));
        assertEquals("CdrcTreiberStack is closed", closed.getMessage());
        assertThrows(IllegalStateException.class, stack::pop);
        assertThrows(IllegalStateException.class, () -> stack.contains(1));
        assertThrows(IllegalStateException.class, stack::isEmpty);
        assertThrows(IllegalStateException.class, stack::size);
        f.closeAndCheckMemory();
        assertThrows(NullPointerException.class, () -> new CdrcTreiberStack(null, true));
        final Cdrc closedDomain = new Cdrc(LimboAllocator.create());
        closedDomain.close();
        assertThrows(IllegalStateException.class, () -> new CdrcTreiberStack(closedDomain, true));
    }

    /** Two stacks share one domain; closing one frees its nodes only, and the other goes on. */
    @Test
    void stacksShareADomain() {
        final LimboAllocator allocator = LimboAllocator.builder().debug(true).build();
        final long baseline = allocator.stats().bytesInUse();
        final Cdrc rc = new Cdrc(allocator);
        final CdrcTreiberStack a = new CdrcTreiberStack(rc, true);
        final CdrcTreiberStack b = new CdrcTreiberStack(rc, false);
        for (int i = 0; i < 100; i++) {
            a.push(i);
            b.push(-i);
        }
        final long both = allocator.stats().bytesInUse();
        a.close();
        rc.flush();
        assertTrue(allocator.stats().bytesInUse() < both, "closing a freed nothing");
        assertEquals(-99, b.pop());
        assertTrue(b.contains(-98));
        b.close();
        rc.close();
        allocator.trim();
        assertEquals(baseline, allocator.stats().bytesInUse());
    }

    @Test
    void layout() {
        assertEquals(Cdrc.HEADER, CdrcTreiberStack.VALUE);
        assertEquals(Cdrc.HEADER + 8, CdrcTreiberStack.NEXT);
        assertArrayEquals(new long[] {CdrcTreiberStack.NEXT}, CdrcTreiberStack.NODE.countedFields());
        assertEquals(2, CdrcTreiberStack.SNAPSHOTS);
    }
}
