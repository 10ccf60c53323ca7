package dev.limbo.reclaim.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Words;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The lock-free stack of blocks behind the shared pool. */
@Timeout(60)
class BlockStackTest {

    private LimboAllocator alloc;
    private final List<Long> blocks = new ArrayList<>();

    @BeforeEach
    void setUp() {
        alloc = LimboAllocator.create();
    }

    @AfterEach
    void tearDown() {
        for (final long b : blocks) {
            alloc.free(b);
        }
    }

    private long newBlock() {
        final long b = alloc.allocateZeroed(BlockLayout.SIZE);
        blocks.add(b);
        return b;
    }

    @Test
    void pushAndPopAreLifo() {
        final BlockStack stack = new BlockStack();
        assertTrue(stack.isEmpty());
        assertEquals(0, stack.pop());
        final List<Long> pushed = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            final long b = newBlock();
            Words.sp(b + BlockLayout.COUNT, i);
            stack.push(b);
            pushed.add(b);
            assertFalse(stack.isEmpty());
        }
        for (int i = 9; i >= 0; i--) {
            final long b = stack.pop();
            assertEquals(pushed.get(i), b);
            assertEquals(0, Words.lp(b + BlockLayout.NEXT), "a popped block is detached");
            assertEquals(i, Words.lp(b + BlockLayout.COUNT), "the block's contents travel with it");
        }
        assertTrue(stack.isEmpty());
        assertEquals(0, stack.pop());
        // a block can be pushed again after it was popped
        stack.push(pushed.get(3));
        stack.push(pushed.get(5));
        assertEquals(pushed.get(5), stack.pop());
        assertEquals(pushed.get(3), stack.pop());
        assertEquals(0, stack.pop());
    }

    /**
     * Threads pop blocks, hold them exclusively for a while (writing their id into the block and
     * checking it is still there), and push them back, sometimes two at a time in swapped order
     * (the ABA pattern the tag defends against). No block may be held by two threads at once,
     * and in the end every block is in the stack exactly once.
     */
    @Test
    void concurrentPushAndPopNeverHandOutABlockTwiceAndLoseNothing() throws Exception {
        final BlockStack stack = new BlockStack();
        final int nBlocks = 16;
        final Set<Long> all = new HashSet<>();
        for (int i = 0; i < nBlocks; i++) {
            final long b = newBlock();
            all.add(b);
            stack.push(b);
        }
        final int threads = 4;
        final int ops = 60_000;
        final ConcurrentHashMap<Long, Integer> held = new ConcurrentHashMap<>();
        final List<Throwable> failures = new CopyOnWriteArrayList<>();
        final AtomicLong pops = new AtomicLong();
        final CyclicBarrier start = new CyclicBarrier(threads);
        final List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final int id = t + 1;
            workers.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    long mine = 0;
                    for (int i = 0; i < ops && failures.isEmpty(); i++) {
                        final long a = stack.pop();
                        if (a == 0) {
                            Thread.onSpinWait();
                            continue;
                        }
                        take(held, a, id);
                        mine++;
                        long b = 0;
                        if ((i & 3) == 0) {
                            b = stack.pop();
                            if (b != 0) {
                                take(held, b, id);
                                mine++;
                            }
                        }
                        for (int spin = 0; spin < (i & 7); spin++) {
                            Thread.onSpinWait();
                        }
                        give(held, a, id);
                        if (b != 0) {
                            give(held, b, id);
                            stack.push(a); // swapped order: a goes below b
                            stack.push(b);
                        } else {
                            stack.push(a);
                        }
                    }
                    pops.addAndGet(mine);
                } catch (final Throwable e) {
                    failures.add(e);
                }
            }));
        }
        for (final Thread w : workers) {
            w.join();
        }
        if (!failures.isEmpty()) {
            throw new AssertionError(failures.size() + " failures", failures.get(0));
        }
        assertTrue(held.isEmpty(), "blocks still marked held: " + held);
        assertTrue(pops.get() > threads * (long) ops / 2, "too few pops: " + pops);
        final List<Long> left = new ArrayList<>();
        for (long b; (b = stack.pop()) != 0; ) {
            left.add(b);
        }
        assertEquals(nBlocks, left.size(), "blocks lost or duplicated: " + left);
        assertEquals(all, new HashSet<>(left));
    }

    private static void take(final ConcurrentHashMap<Long, Integer> held, final long block, final int id) {
        final Integer other = held.putIfAbsent(block, id);
        if (other != null) {
            throw new AssertionError(String.format("block 0x%x popped by thread %d while thread %d holds it",
                    block, id, other));
        }
        Words.sp(block + BlockLayout.COUNT, id);
    }

    private static void give(final ConcurrentHashMap<Long, Integer> held, final long block, final int id) {
        final long seen = Words.lp(block + BlockLayout.COUNT);
        if (seen != id) {
            throw new AssertionError(String.format("block 0x%x held by thread %d was written by %d", block, id, seen));
        }
        if (!held.remove(block, id)) {
            throw new AssertionError(String.format("block 0x%x was not held by thread %d", block, id));
        }
    }
}
