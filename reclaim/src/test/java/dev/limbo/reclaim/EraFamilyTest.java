package dev.limbo.reclaim;

import static dev.limbo.reclaim.ReclaimTestSupport.RECORD;
import static dev.limbo.reclaim.ReclaimTestSupport.assertAllFreed;
import static dev.limbo.reclaim.ReclaimTestSupport.checkNode;
import static dev.limbo.reclaim.ReclaimTestSupport.closeAndMeasure;
import static dev.limbo.reclaim.ReclaimTestSupport.drainCells;
import static dev.limbo.reclaim.ReclaimTestSupport.replaceAndRetire;
import static dev.limbo.reclaim.ReclaimTestSupport.runThreads;
import static dev.limbo.reclaim.ReclaimTestSupport.seq;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Participants;
import dev.limbo.core.Words;
import dev.limbo.core.testing.Progress;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The era family ({@code ibr}, {@code he}, {@code wfe} and their -af forms) beyond the shared
 * {@link SchemeSuiteTest}: the garbage bound under a thread stalled inside a structure-like
 * traversal while another runs a million updates, the hand-over of dying threads' retired records
 * (nothing leaks), and wfe's slow path completed by helpers.
 */
@Timeout(180)
class EraFamilyTest {

    /** The cells of the "structure": its size S, the records alive at any time. */
    private static final int CELLS = 64;
    private static final int PROGRESS_TIMEOUT = 120;

    static Stream<Scheme> eraSchemes() {
        return Stream.of(Scheme.IBR, Scheme.HE, Scheme.WFE, Scheme.IBR_AF, Scheme.HE_AF, Scheme.WFE_AF);
    }

    /** Fills every cell (the structure's S records). */
    private static void fill(final ReclaimDomain d, final long cells) {
        for (int i = 0; i < CELLS; i++) {
            replaceAndRetire(d, cells + (long) i * Long.BYTES, seq(9, i));
        }
    }

    /** A test body over the domain's filled cells. */
    private interface Body {
        void run(long cells) throws InterruptedException;
    }

    /**
     * Fills {@link #CELLS} cells, runs {@code body}, then retires what the cells still hold,
     * flushes, checks that everything retired was freed, closes the domain and checks that the
     * allocator is back at {@code baseline} (on failure, closes and frees without checking).
     */
    private static void run(final Scheme scheme, final ReclaimDomain d, final LimboAllocator a, final long baseline,
                            final Body body) throws InterruptedException {
        final long cells = a.allocateZeroed(CELLS * (long) Long.BYTES);
        boolean checked = false;
        try {
            fill(d, cells);
            body.run(cells);
            final long total = d.stats().retired() + drainCells(d, cells, CELLS);
            d.flush();
            assertTrue(d.orphans.isEmpty(), "orphans left after flush");
            assertAllFreed(scheme, d.stats(), total);
            checked = true;
            assertEquals(baseline, closeAndMeasure(d, a, cells), "bytes in use after close");
        } finally {
            if (!checked) {
                d.close();
                a.free(cells);
            }
        }
    }

    private static void await(final CountDownLatch latch) throws InterruptedException {
        if (!latch.await(60, TimeUnit.SECONDS)) {
            fail("timed out waiting for the other thread");
        }
    }

    /**
     * A thread stalls inside a traversal: it pinned, walked the cells hand over hand (slots 0 and
     * 1, as a list traversal does) and stopped holding two of them, while another thread runs a
     * million replace-and-retire cycles over all the cells. The retirer's unreclaimed records stay
     * within the declared bound plus the structure's size S (the records alive when the stall
     * began, which the stalled reservation may hold back: see EraDomain, "Garbage bound"), and the
     * stalled thread's nodes stay intact.
     */
    @ParameterizedTest
    @MethodSource("eraSchemes")
    void aThreadStalledInsideATraversalHoldsBackAtMostTheBoundPlusTheStructure(final Scheme scheme)
            throws InterruptedException {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).build();
        run(scheme, d, a, baseline, cells -> {
            final int cycles = 1_000_000;
            final CountDownLatch stalled = new CountDownLatch(1);
            final CountDownLatch unstall = new CountDownLatch(1);
            final LongAccumulator worst = new LongAccumulator(Math::max, 0);
            final AtomicLong retiredDuringStall = new AtomicLong();
            runThreads(2, t -> {
                try {
                    if (t == 0) { // the stalled thread
                        try (Guard g = d.pin()) {
                            long a0 = 0;
                            long a1 = 0;
                            for (int i = 0; i < 8; i++) { // hand over hand: the newest in slot i % 2
                                final long p = g.protect(i % 2, cells + (long) i * Long.BYTES);
                                if (i % 2 == 0) {
                                    a0 = p;
                                } else {
                                    a1 = p;
                                }
                            }
                            final long s0 = Words.lp(a0);
                            final long s1 = Words.lp(a1);
                            stalled.countDown();
                            await(unstall);
                            g.poll();
                            assertNull(checkNode(a0, s0), "the stalled thread's node in slot 0 was freed");
                            assertNull(checkNode(a1, s1), "the stalled thread's node in slot 1 was freed");
                        }
                    } else { // the updater
                        await(stalled);
                        final long before = d.stats().retired();
                        final ThreadLocalRandom random = ThreadLocalRandom.current();
                        for (int i = 0; i < cycles; i++) {
                            replaceAndRetire(d, cells + (long) random.nextInt(CELLS) * Long.BYTES, seq(1, i));
                            if (i % 1000 == 999) {
                                worst.accumulate(d.stats().inLimbo());
                            }
                        }
                        retiredDuringStall.set(d.stats().retired() - before);
                    }
                } catch (final InterruptedException e) {
                    throw new AssertionError(e);
                } finally {
                    stalled.countDown();
                    if (t == 1) {
                        unstall.countDown();
                    }
                }
            });
            final int n = Participants.highWater();
            final long bound = d.garbageBound(n) + CELLS;
            assertEquals(cycles, retiredDuringStall.get());
            assertTrue(worst.get() <= bound, scheme + " kept " + worst.get() + " unreclaimed records with a thread stalled;"
                    + " bound + S = " + bound + " (n = " + n + ")");
            // the bound grows with the participant ids that earlier tests left in use (n squared for the
            // era clock), and may then exceed the retires: the garbage itself must stay far below them
            assertTrue(worst.get() < cycles / 10, scheme + " kept " + worst.get() + " of " + cycles
                    + " records retired during the stall");
        });
    }

    /**
     * Threads that retire and die while another thread holds a protection: their departures hand
     * what is still held back to the domain as orphans; once the holder lets go, a flush frees
     * everything and close returns the allocator to its baseline.
     */
    @ParameterizedTest
    @MethodSource("eraSchemes")
    void dyingThreadsHandTheirRetiredRecordsOverAndNothingLeaks(final Scheme scheme) throws InterruptedException {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).build();
        run(scheme, d, a, baseline, cells -> {
            final CountDownLatch holding = new CountDownLatch(1);
            final CountDownLatch release = new CountDownLatch(1);
            final Thread holder = Thread.ofPlatform().name("era-holder").start(() -> {
                try (Guard g = d.pin()) {
                    final long node = g.protect(0, cells);
                    final long s = Words.lp(node);
                    holding.countDown();
                    await(release);
                    assertNull(checkNode(node, s));
                } catch (final InterruptedException e) {
                    throw new AssertionError(e);
                } finally {
                    holding.countDown();
                }
            });
            try {
                await(holding);
                for (int round = 0; round < 3; round++) {
                    final int r = round;
                    runThreads(4, t -> {
                        for (int i = 0; i < 1000; i++) {
                            replaceAndRetire(d, cells + (long) ((i + t) % CELLS) * Long.BYTES, seq(t, r * 1000L + i));
                        }
                    });
                }
                Participants.reapTerminated();
                Participants.awaitReleases();
                assertFalse(d.orphans.isEmpty(), "the departed threads handed nothing over, yet a record is held back");
            } finally {
                release.countDown();
                holder.join();
            }
        });
    }

    /**
     * wfe's slow path alone (no fast-path attempts: every protect posts a request): readers
     * protect and check nodes while a writer replaces and retires them and a ticker helps pending
     * requests and ticks the era as fast as it can. Every protected node stays intact, and some
     * requests are completed by a helper rather than their requester.
     */
    @Test
    @Timeout(PROGRESS_TIMEOUT + 60)
    void wfeSlowPathRequestsAreCompletedByHelpersAndProtectWhatTheyReturn() throws InterruptedException {
        final LimboAllocator a = ReclaimTestSupport.debugAllocator();
        final long baseline = a.stats().bytesInUse();
        final WaitFreeEras d = new WaitFreeEras(ReclaimDomain.builder(Scheme.WFE).allocator(a).recordBytes(RECORD)
                .debug(true).scanThreshold(8), 0);
        run(Scheme.WFE, d, a, baseline, cells -> {
            final Progress progress = new Progress(PROGRESS_TIMEOUT, "protects", 100_000, "replacements", 10_000,
                    "requests completed by helpers", 1, "frees", 1);
            runThreads(4, progress, t -> {
                if (t < 2) { // readers
                    for (int k = 0; !progress.done(); k++) {
                        try (Guard g = d.pin()) {
                            final long p0 = g.protect(0, cells + (long) (k % CELLS) * Long.BYTES);
                            final long p1 = g.protect(1, cells + (long) ((k * 7 + 3) % CELLS) * Long.BYTES);
                            assertNull(checkNode(p0));
                            for (int spin = 0; spin < 16; spin++) {
                                Thread.onSpinWait();
                            }
                            assertNull(checkNode(p1));
                            assertNull(checkNode(p0));
                        }
                        progress.add(0, 2);
                    }
                } else if (t == 2) { // writer
                    for (int k = 0; !progress.done(); k++) {
                        replaceAndRetire(d, cells + (long) (k % CELLS) * Long.BYTES, seq(2, k));
                        progress.add(1, 1);
                        if (k % 256 == 255) {
                            progress.observe(3, d.stats().freed());
                        }
                    }
                } else { // ticker: helps every pending request, then ticks
                    while (!progress.done()) {
                        try (Guard g = d.pin()) {
                            for (int i = 0; i < 64; i++) {
                                ((EraDomain.EraGuard) g).advance();
                            }
                        }
                        progress.observe(2, d.helped());
                    }
                }
            });
            assertTrue(d.requests() >= 100_000, "every protect asks for help: " + d.requests());
        });
    }
}
