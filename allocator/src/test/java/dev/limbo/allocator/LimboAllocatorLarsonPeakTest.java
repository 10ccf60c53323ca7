package dev.limbo.allocator;

import static dev.limbo.allocator.TestSupport.quiesce;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.internal.BestFitPageAllocator;
import dev.limbo.allocator.internal.PageMap;
import dev.limbo.allocator.internal.SizeClasses;
import dev.limbo.core.testing.Progress;

import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Item 9's bar under Larson (Larson and Krishnan; thesis §6.2), the long-running server: each of
 * two threads keeps a working set of slots and replaces a random slot's block by a new one of
 * 16..128 bytes, over and over. The page allocator's peak committed memory must stay within twice
 * the live bytes, plus one superblock per thread and size class in use (the cached blocks of a
 * class never exceed its superblock under OWNED, and its cap, at most a superblock, otherwise).
 */
@Timeout(180)
class LimboAllocatorLarsonPeakTest {

    private static final int THREADS = 2;
    private static final int SLOTS = 1000;
    private static final int MIN = 16;
    private static final int SPREAD = 113;
    private static final long OPERATIONS = 2_000_000;

    @ParameterizedTest
    @EnumSource(value = FlushPolicy.class, names = {"OWNER_RETURN", "OWNED"})
    void underTwoThreadLarsonThePeakCommittedStaysWithinTwiceLiveAndOneSuperblockPerThreadAndClass(
            final FlushPolicy policy) throws InterruptedException {
        try (LimboAllocator a = LimboAllocator.builder().flushPolicy(policy).build()) {
            final BestFitPageAllocator pages = BestFitPageAllocator.global();
            final long before = quiesce(a).pageBytesCommitted();
            pages.resetPeak();
            final Progress progress = new Progress(150, "thread 0 operations", OPERATIONS,
                    "thread 1 operations", OPERATIONS);
            final List<Throwable> failures = new CopyOnWriteArrayList<>();
            final Thread[] threads = new Thread[THREADS];
            for (int t = 0; t < THREADS; t++) {
                final int side = t;
                threads[t] = Thread.ofPlatform().start(() -> {
                    final long[] slots = new long[SLOTS];
                    long x = 0x9E3779B97F4A7C15L * (side + 1);
                    try {
                        for (int i = 0; i < SLOTS; i++) {
                            slots[i] = a.allocate(MIN + i % SPREAD);
                        }
                        while (!progress.done()) {
                            for (int i = 0; i < 10_000; i++) {
                                x ^= x << 13;
                                x ^= x >>> 7;
                                x ^= x << 17;
                                final int slot = (int) ((x >>> 33) % SLOTS);
                                a.free(slots[slot]);
                                slots[slot] = a.allocate(MIN + ((x >>> 8) & 0x7F) % SPREAD);
                            }
                            progress.add(side, 10_000);
                        }
                        for (final long p : slots) {
                            a.free(p);
                        }
                    } catch (final Throwable e) {
                        failures.add(e);
                        progress.stop();
                    }
                });
            }
            for (final Thread t : threads) {
                t.join();
            }
            assertEquals(List.of(), failures);
            final long peak = pages.peakCommittedBytes() - before;
            final BitSet classes = new BitSet();
            for (int size = MIN; size < MIN + SPREAD; size++) {
                classes.set(SizeClasses.classOf(size));
            }
            final long live = (long) SLOTS * (MIN + SPREAD);
            final long bar = 2L * THREADS * (live + classes.cardinality() * PageMap.PAGE);
            assertTrue(peak <= bar, () -> policy + ": peak committed +" + peak + " bytes (" + peak / PageMap.PAGE
                    + " pages), bar " + bar + " (" + bar / PageMap.PAGE + " pages); " + a.stats());
        }
    }
}
