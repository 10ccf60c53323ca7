package dev.limbo.index;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.Scheme;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link OffHeapLongHashMap} beyond the views' contract tests: builder options and their
 * validation, the missing value, compute and merge, a scan that sees each key once while the table
 * resizes under it, stats (a shrink after mass removal shows in the bytes), clear, and close:
 * memory back at its baseline and clear exceptions afterwards.
 */
@Timeout(120)
class OffHeapLongHashMapTest {

    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
    }

    private OffHeapLongHashMap map(final OffHeapLongHashMap.Builder b) {
        final OffHeapLongHashMap m = b.build();
        toClose.add(m);
        return m;
    }

    @Test
    void builderDefaultsAndOptions() {
        final OffHeapLongHashMap defaults = OffHeapLongHashMap.create();
        toClose.add(defaults);
        assertEquals(0, defaults.missingValue());
        assertEquals("debra", defaults.stats().scheme());
        assertEquals(1, defaults.buckets());
        final OffHeapLongHashMap m = map(OffHeapLongHashMap.builder().scheme(Scheme.HP).missingValue(-7)
                .initialCapacity(1_000).allocator(LimboAllocator.create()));
        assertEquals(-7, m.missingValue());
        assertEquals("hp", m.stats().scheme());
        assertEquals(256, m.buckets(), "1000 keys at 4 per bucket, rounded up to a power of two");
        assertEquals(-7, m.get(1));
        assertEquals(-7, m.put(1, -7), "the missing value is still a valid value");
        assertEquals(-7, m.get(1));
        assertTrue(m.containsKey(1));
        assertEquals(-7, m.remove(1));
        assertFalse(m.containsKey(1));
        assertEquals(5, m.getOrDefault(1, 5));
        for (long k = 0; k < 100; k++) {
            m.put(k, k);
        }
        for (long k = 0; k < 100; k++) {
            m.remove(k);
        }
        assertEquals(256, m.buckets(), "the table never shrinks below its initial size");
    }

    @Test
    void builderRejectsBadOptions() {
        final IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
                () -> OffHeapLongHashMap.builder().initialCapacity(-1));
        assertEquals("initial capacity must be between 0 and 1099511627776 keys, was -1", negative.getMessage());
        assertThrows(IllegalArgumentException.class, () -> OffHeapLongHashMap.builder().initialCapacity((1L << 40) + 1));
        assertThrows(NullPointerException.class, () -> OffHeapLongHashMap.builder().scheme(null));
        assertThrows(NullPointerException.class, () -> OffHeapLongHashMap.builder().allocator(null));
        final IllegalArgumentException counting = assertThrows(IllegalArgumentException.class,
                () -> OffHeapLongHashMap.builder().scheme(Scheme.LFRC).build());
        assertTrue(counting.getMessage().contains("declares none"), counting.getMessage());
    }

    @Test
    void computeAndMergeAreExactWithTheMissingValue() {
        final OffHeapLongHashMap m = map(OffHeapLongHashMap.builder().missingValue(0));
        assertEquals(0, m.compute(3, (k, present, old) -> {
            assertFalse(present);
            return 0;
        }));
        assertTrue(m.containsKey(3), "compute mapped the key to the missing value");
        assertEquals(5, m.compute(3, (k, present, old) -> {
            assertTrue(present);
            return old + 5;
        }));
        assertEquals(2, m.merge(4, 2, Long::sum));
        assertEquals(7, m.merge(4, 5, Long::sum));
        assertEquals(7, m.get(4));
        assertThrows(NullPointerException.class, () -> m.compute(1, null));
        assertThrows(NullPointerException.class, () -> m.merge(1, 1, null));
    }

    /** Threads merge into shared counters while the table grows: no increment is lost. */
    @Test
    void concurrentMergesLoseNoIncrement() throws Exception {
        final OffHeapLongHashMap m = map(OffHeapLongHashMap.builder().scheme(Scheme.HP));
        final int threads = 3;
        final int keys = 2_000;
        final AtomicInteger failures = new AtomicInteger();
        final List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            ts.add(Thread.ofPlatform().start(() -> {
                try {
                    for (long k = 0; k < keys; k++) {
                        m.merge(k, 1, Long::sum);
                    }
                } catch (final RuntimeException | Error e) {
                    failures.incrementAndGet();
                    throw e;
                }
            }));
        }
        for (final Thread t : ts) {
            t.join();
        }
        assertEquals(0, failures.get());
        assertEquals(keys, m.size());
        for (long k = 0; k < keys; k++) {
            assertEquals(threads, m.get(k));
        }
    }

    /** A scan whose visitor inserts (making the table grow) sees every key present from the start, each once. */
    @Test
    void scanSeesEachKeyOnceWhileTheTableResizes() {
        final OffHeapLongHashMap m = map(OffHeapLongHashMap.builder());
        final int n = 5_000;
        for (long k = 0; k < n; k++) {
            m.put(k, ~k);
        }
        final long before = m.buckets();
        final Map<Long, Integer> seen = new HashMap<>();
        final long[] next = {1L << 40};
        final long visited = m.scan((k, v) -> {
            assertEquals(k < n ? ~k : k, v);
            seen.merge(k, 1, Integer::sum);
            for (int i = 0; i < 8 && next[0] < (1L << 40) + 4 * n; i++) {
                m.put(next[0], next[0]);
                next[0]++;
            }
            return true;
        });
        assertTrue(m.buckets() > before, "the table did not grow during the scan");
        assertEquals(seen.size(), visited);
        for (long k = 0; k < n; k++) {
            assertEquals(1, seen.get(k), "key " + k);
        }
        seen.values().forEach(c -> assertEquals(1, c));
        final int[] calls = {0};
        assertEquals(3, m.scan((k, v) -> ++calls[0] < 3), "a visitor that says stop is counted");
    }

    @Test
    void statsShowTheShrinkAfterMassRemoval() {
        final LimboAllocator allocator = LimboAllocator.builder().checked(true).build();
        final long baseline = allocator.stats().bytesInUse();
        final OffHeapLongHashMap m = OffHeapLongHashMap.builder().allocator(allocator).build();
        final IndexStats empty = m.stats();
        assertEquals(0, empty.size());
        assertEquals(0, empty.bytesPerEntry());
        final int n = 50_000;
        for (long k = 0; k < n; k++) {
            m.put(k * 31, k);
        }
        final IndexStats full = m.stats();
        assertEquals(n, full.size());
        assertTrue(full.bytesPerEntry() > 16 && full.bytesPerEntry() < 200, "bytes per entry " + full.bytesPerEntry());
        final long grown = m.buckets();
        for (long k = 0; k < n; k++) {
            assertEquals(k, m.remove(k * 31));
        }
        final IndexStats after = m.stats();
        assertEquals(0, after.size());
        assertTrue(m.buckets() < grown / 1_000, m.buckets() + " buckets left of " + grown);
        assertTrue(after.offHeapBytes() < full.offHeapBytes() / 100,
                "the shrink gave back too little: " + after.offHeapBytes() + " of " + full.offHeapBytes());
        for (long k = 0; k < 100; k++) {
            m.put(k, k);
        }
        m.clear();
        assertTrue(m.isEmpty());
        assertEquals(0, m.size());
        m.close();
        m.close(); // idempotent
        allocator.trim();
        assertEquals(baseline, allocator.stats().bytesInUse(), "bytes in use after close");
        allocator.close();
        for (final Runnable op : List.<Runnable>of(() -> m.get(1), () -> m.put(1, 1), () -> m.remove(1),
                () -> m.containsKey(1), m::size, m::stats, m::buckets, () -> m.scan((k, v) -> true),
                () -> m.merge(1, 1, Long::sum), () -> m.compute(1, (k, p, o) -> 1))) {
            final IllegalStateException e = assertThrows(IllegalStateException.class, op::run);
            assertEquals("OffHeapLongHashMap is closed", e.getMessage());
        }
    }
}
