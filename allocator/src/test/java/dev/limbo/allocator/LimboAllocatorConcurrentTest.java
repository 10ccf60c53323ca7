package dev.limbo.allocator;

import static dev.limbo.allocator.TestSupport.assertAllReturned;
import static dev.limbo.allocator.TestSupport.checkPattern;
import static dev.limbo.allocator.TestSupport.writePattern;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.core.testing.Progress;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Threads allocate, write a pattern, and hand blocks to each other to check and free, while a
 * global map of live blocks catches any two live blocks that overlap. A run ends when the threads
 * have done enough operations and hand-overs, and a trimmer has trimmed often enough meanwhile
 * (a {@link Progress}), not after a fixed time in which a starved thread may have done nothing.
 */
@Timeout(LimboAllocatorConcurrentTest.PROGRESS_TIMEOUT + 60)
class LimboAllocatorConcurrentTest {

    private static final int THREADS = 4;
    /** Operations (all threads together) of a full run: about a second's worth on 2 cores. */
    private static final long RUN_OPS = 200_000;
    /** Seconds a run may take to make its progress; far above what it needs. */
    static final int PROGRESS_TIMEOUT = 120;

    /** Live blocks, start to end: an allocator that hands out overlapping blocks is caught on insert. */
    private final ConcurrentSkipListMap<Long, Long> live = new ConcurrentSkipListMap<>();
    private final List<String> failures = new CopyOnWriteArrayList<>();

    private void recordLive(final long ptr, final long size) {
        final Long previous = live.put(ptr, ptr + size);
        if (previous != null) {
            failures.add(String.format("block 0x%x handed out twice", ptr));
        }
        final Map.Entry<Long, Long> lower = live.lowerEntry(ptr);
        if (lower != null && lower.getValue() > ptr) {
            failures.add(String.format("block 0x%x overlaps [0x%x, 0x%x)", ptr, lower.getKey(), lower.getValue()));
        }
        final Map.Entry<Long, Long> higher = live.higherEntry(ptr);
        if (higher != null && higher.getKey() < ptr + size) {
            failures.add(String.format("block [0x%x, 0x%x) overlaps 0x%x", ptr, ptr + size, higher.getKey()));
        }
    }

    private void checkAndFree(final LimboAllocator a, final long[] block) {
        final long bad = checkPattern(block[0], block[1]);
        if (bad >= 0) {
            failures.add(String.format("block 0x%x (%d bytes) overwritten at word %d", block[0], block[1], bad));
        }
        live.remove(block[0]);
        a.free(block[0]);
    }

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void blocksPassedBetweenThreadsStayIntactAndDisjointAndAllMemoryComesBack(final FlushPolicy policy)
            throws Exception {
        stress(LimboAllocator.builder().flushPolicy(policy).build(), RUN_OPS);
    }

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void smallCachesFlushOftenAndStillLoseNothing(final FlushPolicy policy) throws Exception {
        stress(LimboAllocator.builder().flushPolicy(policy).cacheBytesPerClass(1).build(), RUN_OPS / 3);
    }

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void debugModeFindsNoFalseWriteAfterFreeUnderConcurrency(final FlushPolicy policy) throws Exception {
        stress(LimboAllocator.builder().flushPolicy(policy).debug(true).build(), RUN_OPS / 3);
    }

    private void stress(final LimboAllocator a, final long runOps) throws Exception {
        @SuppressWarnings("unchecked")
        final ConcurrentLinkedQueue<long[]>[] inbox = new ConcurrentLinkedQueue[THREADS];
        for (int i = 0; i < THREADS; i++) {
            inbox[i] = new ConcurrentLinkedQueue<>();
        }
        final CountDownLatch start = new CountDownLatch(THREADS);
        final CountDownLatch stopped = new CountDownLatch(THREADS);
        final AtomicBoolean stop = new AtomicBoolean();
        // operations and hand-overs (blocks freed by a thread that did not allocate them), all
        // threads together, and trims done while they run
        final Progress progress = new Progress(PROGRESS_TIMEOUT, "operations", runOps, "hand-overs", runOps / 10,
                "trims", 20);
        final Thread[] threads = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int me = t;
            threads[t] = new Thread(() -> {
                boolean counted = false;
                try {
                    final ThreadLocalRandom rnd = ThreadLocalRandom.current();
                    final List<long[]> mine = new ArrayList<>();
                    long ops = 0;
                    long handOvers = 0;
                    start.countDown();
                    start.await();
                    while (failures.isEmpty()) {
                        if ((++ops & 255) == 0) { // count every 256 operations, and end with the run's progress
                            progress.add(0, 256);
                            progress.add(1, handOvers);
                            handOvers = 0;
                            if (progress.done()) {
                                break;
                            }
                        }
                        final int dice = rnd.nextInt(100);
                        if (dice < 45) {
                            final long size = dice == 0 ? 20_000 : 8 + rnd.nextInt(2041);
                            final long p = a.allocate(size);
                            recordLive(p, size);
                            writePattern(p, size);
                            final long[] block = {p, size};
                            if (rnd.nextInt(3) == 0) {
                                mine.add(block);
                            } else {
                                inbox[(me + 1 + rnd.nextInt(THREADS - 1)) % THREADS].add(block);
                            }
                        } else if (dice < 85) {
                            final long[] block = inbox[me].poll();
                            if (block != null) {
                                checkAndFree(a, block);
                                handOvers++;
                            }
                        } else if (!mine.isEmpty()) {
                            checkAndFree(a, mine.remove(rnd.nextInt(mine.size())));
                        }
                        if (mine.size() > 2000) {
                            checkAndFree(a, mine.remove(0));
                        }
                    }
                    for (final long[] block : mine) {
                        checkAndFree(a, block);
                    }
                    counted = true;
                    stopped.countDown();
                    stopped.await(); // nobody sends after this
                    for (long[] block = inbox[me].poll(); block != null; block = inbox[me].poll()) {
                        checkAndFree(a, block);
                    }
                } catch (final Throwable e) {
                    final java.io.StringWriter trace = new java.io.StringWriter();
                    e.printStackTrace(new java.io.PrintWriter(trace));
                    failures.add(Thread.currentThread().getName() + ": " + trace);
                } finally {
                    if (!counted) {
                        stopped.countDown();
                    }
                }
            }, "stress-" + t);
        }
        for (final Thread t : threads) {
            t.start();
        }
        // Trims (decommitting free page runs) while the others allocate and free.
        final Thread trimmer = new Thread(() -> {
            try {
                while (!stop.get()) {
                    a.trim();
                    progress.add(2, 1);
                    Thread.sleep(2);
                }
            } catch (final Throwable e) {
                failures.add("trimmer: " + e);
            }
        }, "trimmer");
        trimmer.start();
        for (final Thread t : threads) {
            t.join();
        }
        stop.set(true);
        trimmer.join();
        assertEquals(List.of(), failures);
        assertTrue(live.isEmpty(), live.size() + " blocks not freed");
        assertEquals(0, a.stats().largeBytes());
        assertEquals(0, a.stats().bytesInUse(), () -> "before reaping: " + a.stats());
        assertAllReturned(a); // reaps the workers' ids first
    }
}
