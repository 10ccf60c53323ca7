package dev.limbo.index;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The index's hot paths allocate nothing on the heap (issue 18): after a warm-up, the calling
 * thread's allocated bytes (HotSpot's per-thread counter) over many point operations and scans of
 * both maps stay under a small allowance. The allowance covers the allocator's rare page-run
 * bookkeeping when it grows; one heap object per reclamation batch or epoch advance (the JFR
 * event objects the emit paths used to make) or per heavy barrier exceeds it several times.
 */
@Timeout(120)
class IndexAllocationTest {

    private static final int KEYS = 1 << 17;
    private static final int OPS = 400_000;
    /**
     * Bytes the measured operations may allocate in all: about 0.01 B/op (measured: 0 to 224 bytes;
     * before the allocation fixes, 26 to 63 KB).
     */
    private static final long ALLOWANCE = 4 * 1024;
    private static final LongLongPredicate FIRST_32 = (k, v) -> (k & 31) != 31;

    /**
     * HotSpot's {@code com.sun.management.ThreadMXBean#getCurrentThreadAllocatedBytes}, looked up
     * by name (the index module does not read java.management at compile time; the tests run on the
     * class path), or null where the JVM has no such counter.
     */
    private static final MethodHandle ALLOCATED_BYTES = allocatedBytesCounter();

    private static MethodHandle allocatedBytesCounter() {
        try {
            final Object bean = Class.forName("java.lang.management.ManagementFactory")
                    .getMethod("getThreadMXBean").invoke(null);
            final Class<?> hotspot = Class.forName("com.sun.management.ThreadMXBean");
            if (!hotspot.isInstance(bean)
                    || !(boolean) hotspot.getMethod("isThreadAllocatedMemoryEnabled").invoke(bean)) {
                return null;
            }
            return MethodHandles.publicLookup()
                    .findVirtual(hotspot, "getCurrentThreadAllocatedBytes", MethodType.methodType(long.class))
                    .bindTo(bean);
        } catch (final ReflectiveOperationException | LinkageError unavailable) {
            return null;
        }
    }

    private static long allocatedBytes() {
        try {
            return (long) ALLOCATED_BYTES.invokeExact();
        } catch (final Throwable t) {
            throw new AssertionError("reading the thread's allocated bytes failed", t);
        }
    }

    @Test
    void orderedMapAllocatesNothingPerOperation() {
        try (OffHeapLongMap map = OffHeapLongMap.create()) {
            assertAllocationFree(map, "OffHeapLongMap");
        }
    }

    @Test
    void hashMapAllocatesNothingPerOperation() {
        try (OffHeapLongHashMap map = OffHeapLongHashMap.builder().initialCapacity(KEYS / 2).build()) {
            assertAllocationFree(map, "OffHeapLongHashMap");
        }
    }

    private void assertAllocationFree(final LongLongMap map, final String name) {
        assumeTrue(ALLOCATED_BYTES != null, "per-thread allocation counting is not available");
        final SplittableRandom rng = new SplittableRandom(18);
        for (int i = 0; i < KEYS / 2; i++) {
            map.put(rng.nextInt(KEYS), i);
        }
        run(map, rng); // warm-up: every path compiled
        run(map, rng);
        // The least of up to three runs: a deoptimization and recompilation in one run allocates
        // once; an allocation per operation shows in every run.
        long allocated = Long.MAX_VALUE;
        for (int attempt = 0; attempt < 3 && allocated > ALLOWANCE; attempt++) {
            final long before = allocatedBytes();
            run(map, rng);
            allocated = Math.min(allocated, allocatedBytes() - before);
        }
        assertTrue(allocated <= ALLOWANCE, name + " allocated " + allocated + " heap bytes in " + OPS
                + " operations (" + (double) allocated / OPS + " B/op); allowance " + ALLOWANCE);
    }

    /** OPS operations: 40 % put, 40 % remove, 10 % get, 10 % scans of 32 entries (ordered map). */
    private void run(final LongLongMap map, final SplittableRandom rng) {
        for (int i = 0; i < OPS; i++) {
            final int r = rng.nextInt(10);
            final long key = rng.nextInt(KEYS);
            if (r < 4) {
                map.put(key, key);
            } else if (r < 8) {
                map.remove(key);
            } else if (r < 9 || !(map instanceof LongLongNavigableMap ordered)) {
                map.get(key);
            } else {
                ordered.scan(key, true, Long.MAX_VALUE, true, false, FIRST_32);
            }
        }
    }
}
