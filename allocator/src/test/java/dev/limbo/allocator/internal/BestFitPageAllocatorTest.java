package dev.limbo.allocator.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.core.Region;
import dev.limbo.core.Words;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicIntegerArray;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A private page allocator over fresh pages of the global region. Tests here claim address space
 * but run one at a time, so nothing else claims between a test's own claims.
 */
@Timeout(120)
class BestFitPageAllocatorTest {

    private static long bytes(final long pages) {
        return pages << PageMap.PAGE_SHIFT;
    }

    @Test
    void runsFreedInRandomOrderCoalesceIntoOneRunThatCanBeAllocatedWhole() {
        final Region region = Region.global();
        final BestFitPageAllocator pages = new BestFitPageAllocator(0, 4);
        final Random rnd = new Random(3);
        final long mask = PageMap.PAGE_MASK; // initializes PageMap, whose table is a claim of its own
        final long claimedBefore = (region.claimedBytes() + mask) & ~mask;
        final List<long[]> runs = new ArrayList<>();
        long total = 0;
        for (int i = 0; i < 300; i++) {
            final long n = 1 + rnd.nextInt(i % 10 == 0 ? 40 : 6);
            final long start = pages.allocate(n);
            Words.sp(bytes(start), start); // committed and writable
            Words.sp(bytes(start + n) - 8, n);
            runs.add(new long[] {start, n});
            total += n;
        }
        final long claimed = region.claimedBytes() - claimedBefore;
        assertTrue(claimed >= bytes(total), "claimed " + claimed + " for " + total + " pages");
        assertEquals(bytes(total), pages.committedBytes());
        final List<long[]> sorted = new ArrayList<>(runs);
        sorted.sort((x, y) -> Long.compare(x[0], y[0]));
        for (int i = 1; i < sorted.size(); i++) {
            assertTrue(sorted.get(i - 1)[0] + sorted.get(i - 1)[1] <= sorted.get(i)[0], "runs overlap");
        }
        Collections.shuffle(runs, rnd);
        for (final long[] r : runs) {
            assertEquals(r[0], Words.lp(bytes(r[0])), "run overwritten");
            assertEquals(r[1], Words.lp(bytes(r[0] + r[1]) - 8), "run overwritten");
            pages.free(r[0], r[1]);
        }
        assertEquals(0, pages.committedBytes(), "retainBytes 0: every freed run is decommitted");
        assertEquals(0, pages.retainedBytes());
        assertEquals(claimed, pages.freeBytes(), "every claimed page is free again");
        assertEquals(1, pages.freeRuns(), "the free runs did not coalesce");
        final long claimedAfter = region.claimedBytes();
        final long whole = pages.allocate(claimed >>> PageMap.PAGE_SHIFT);
        assertEquals(claimedAfter, region.claimedBytes(), "allocating the coalesced run grew the region");
        assertTrue(pages.isClean(whole, claimed >>> PageMap.PAGE_SHIFT), "decommitted pages read as zeros");
        assertEquals(0, Words.lp(bytes(whole)));
        assertEquals(claimed, pages.committedBytes());
        pages.free(whole, claimed >>> PageMap.PAGE_SHIFT);
        assertEquals(1, pages.freeRuns());
    }

    @Test
    void freedRunsStayCommittedUpToTheRetainLimitAndTrimDecommitsThemWhileThePeakStays() {
        final BestFitPageAllocator pages = new BestFitPageAllocator(bytes(8), 16);
        final long a = pages.allocate(4);
        final long b = pages.allocate(4);
        final long c = pages.allocate(4);
        Words.sp(bytes(a), 1);
        assertEquals(bytes(12), pages.committedBytes());
        pages.free(a, 4);
        assertEquals(bytes(4), pages.retainedBytes());
        assertEquals(bytes(12), pages.committedBytes());
        assertTrue(!pages.isClean(a, 4));
        pages.free(c, 4);
        assertEquals(bytes(8), pages.retainedBytes());
        pages.free(b, 4); // over the limit: b is decommitted, and stays apart from its committed neighbours
        assertEquals(bytes(8), pages.retainedBytes());
        assertEquals(bytes(8), pages.committedBytes());
        assertTrue(pages.isClean(b, 4));
        assertEquals(bytes(8), pages.trim()); // a and c, which now merge with b (and the free tail)
        assertEquals(0, pages.retainedBytes());
        assertEquals(0, pages.committedBytes());
        assertEquals(1, pages.freeRuns());
        final long again = pages.allocate(12);
        assertEquals(a, again, "the coalesced run is reused from its start");
        assertTrue(pages.isClean(again, 12));
        pages.free(again, 12);
        assertEquals(0, pages.retainedBytes(), "12 pages are over the limit");
        final long d = pages.allocate(2);
        pages.free(d, 2);
        assertEquals(bytes(2), pages.retainedBytes());
        assertEquals(bytes(2), pages.trim());
        assertEquals(0, pages.retainedBytes());
        assertEquals(0, pages.committedBytes());
        assertEquals(1, pages.freeRuns());
        assertEquals(bytes(12), pages.peakCommittedBytes(), "the most committed at once: a, b and c, or the 12 again");
    }

    @Test
    void anAllocationTakesCommittedFreePagesBeforeABetterFittingDecommittedRun() {
        final BestFitPageAllocator pages = new BestFitPageAllocator(bytes(4), 16);
        final long a = pages.allocate(4);
        pages.allocate(1);
        final long c = pages.allocate(1);
        pages.allocate(10); // the 16 grown pages are all in use
        pages.free(a, 4); // retained: 4 committed free pages
        pages.free(c, 1); // over the limit: a decommitted 1-page run, the best fit for 1 page
        assertEquals(bytes(4), pages.retainedBytes());
        final long committed = pages.committedBytes();
        final long p = pages.allocate(1);
        assertEquals(committed, pages.committedBytes(), "committed a fresh page while 4 committed pages were free");
        assertEquals(a, p, "the best fit among the committed runs");
        assertEquals(bytes(3), pages.retainedBytes());
    }

    @Test
    void aRunGrownFromTheRegionMergesWithTheFreeTail() {
        final Region region = Region.global();
        final BestFitPageAllocator pages = new BestFitPageAllocator(0, 8);
        final long a = pages.allocate(6); // grows 8 pages: a free tail of 2 follows a
        final long claimed = region.claimedBytes();
        final long b = pages.allocate(20); // no run fits: grows 20 pages, right after the tail
        assertEquals(claimed + bytes(20), region.claimedBytes(), "another thread claimed region space meanwhile");
        assertEquals(a + 6, b, "the grown run was not merged with the 2-page free tail before it");
        assertEquals(1, pages.freeRuns(), "the 2 pages left over after b");
        pages.free(a, 6);
        pages.free(b, 20);
        assertEquals(1, pages.freeRuns());
        assertEquals(bytes(28), pages.freeBytes());
    }

    @Test
    void badRunLengthsAreRejected() {
        final BestFitPageAllocator pages = new BestFitPageAllocator(0, 4);
        assertThrows(IllegalArgumentException.class, () -> pages.allocate(0));
        assertThrows(IllegalArgumentException.class, () -> pages.allocate(-1));
        assertThrows(IllegalArgumentException.class, () -> pages.allocate(PageMap.PAGES + 1));
    }

    @Test
    void fourThreadsAllocatingAndFreeingRandomRunsNeverGetOverlappingRuns() throws Exception {
        final Region region = Region.global();
        final BestFitPageAllocator pages = new BestFitPageAllocator(bytes(64), 8);
        final long claimedBefore = (region.claimedBytes() + PageMap.PAGE_MASK) & -PageMap.PAGE;
        final AtomicIntegerArray owner = new AtomicIntegerArray(Math.toIntExact(PageMap.PAGES));
        final List<String> failures = new CopyOnWriteArrayList<>();
        final int threads = 4;
        final CyclicBarrier start = new CyclicBarrier(threads);
        final Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int id = t + 1;
            workers[t] = new Thread(() -> {
                try {
                    final ThreadLocalRandom rnd = ThreadLocalRandom.current();
                    final List<long[]> mine = new ArrayList<>();
                    start.await();
                    final long deadline = System.nanoTime() + 700_000_000L;
                    while (System.nanoTime() < deadline && failures.isEmpty()) {
                        if (mine.size() < 40 && (mine.isEmpty() || rnd.nextInt(100) < 55)) {
                            final long n = 1 + rnd.nextInt(rnd.nextInt(8) == 0 ? 50 : 5);
                            final long s = pages.allocate(n);
                            for (long p = s; p < s + n; p++) {
                                if (!owner.compareAndSet(Math.toIntExact(p), 0, id)) {
                                    failures.add("page " + p + " of run [" + s + ", " + (s + n)
                                            + ") already belongs to thread " + owner.get(Math.toIntExact(p)));
                                }
                                Words.sp(bytes(p), p * 31 + id);
                            }
                            mine.add(new long[] {s, n});
                        } else {
                            final long[] r = mine.remove(rnd.nextInt(mine.size()));
                            for (long p = r[0]; p < r[0] + r[1]; p++) {
                                if (Words.lp(bytes(p)) != p * 31 + id) {
                                    failures.add("page " + p + " overwritten");
                                }
                                owner.set(Math.toIntExact(p), 0);
                            }
                            pages.free(r[0], r[1]);
                        }
                    }
                    for (final long[] r : mine) {
                        for (long p = r[0]; p < r[0] + r[1]; p++) {
                            owner.set(Math.toIntExact(p), 0);
                        }
                        pages.free(r[0], r[1]);
                    }
                } catch (final Throwable e) {
                    failures.add(e.toString());
                }
            });
            workers[t].start();
        }
        for (final Thread w : workers) {
            w.join();
        }
        assertEquals(List.of(), failures);
        final long claimed = region.claimedBytes() - claimedBefore;
        assertEquals(claimed, pages.freeBytes(), "free pages after every run came back");
        // Concurrent frees may miss a coalescing (a neighbour out of the tree at that moment);
        // the runs must still be few, and a trim leaves nothing committed.
        assertTrue(pages.freeRuns() <= Math.max(1, claimed / bytes(8)), "free runs: " + pages.freeRuns());
        pages.trim();
        assertEquals(0, pages.committedBytes());
        assertEquals(0, pages.retainedBytes());
    }
}
