package dev.limbo.bench.structures;

import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.structures.MichaelHashMap;
import dev.limbo.structures.MichaelScottQueue;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Michael's hash map in two shapes. {@code jdk}: {@link ConcurrentHashMap} of boxed longs.
 *
 * <ul>
 *   <li>{@link #cdrc}: CDRC's hash-table workload (PLDI '21 §6, Fig. 7b): 100K keys in a 200K range,
 *       load factor 1 (131072 buckets), 10 % updates (5 % insert, 5 % remove), 90 % lookups.</li>
 *   <li>{@link #stampit}: the shape of Stamp-it's HashMap (report §4.1): 2048 buckets caching at
 *       most 10 000 of 30 000 possible results, evicted FIFO through a Michael-Scott queue of
 *       keys. One operation looks a key up and, on a miss, "computes" the result, inserts it and
 *       evicts the oldest entry once the map is full. (Stamp-it's simulation of 1000 results per
 *       operation with 8 KiB nodes is reduced to one result with a {@code long} value.)</li>
 * </ul>
 */
public class HashMapBench extends StructureBenchmark {

    static final int CDRC_KEYS = 100_000;
    static final int CDRC_RANGE = 200_000;
    public static final int STAMPIT_BUCKETS = 2048;
    public static final int STAMPIT_CAPACITY = 10_000;
    public static final int STAMPIT_RESULTS = 30_000;

    @State(Scope.Benchmark)
    public static class Cdrc {
        MichaelHashMap offHeap;
        ConcurrentHashMap<Long, Long> jdk;

        @Setup(Level.Trial)
        public void create(final SchemeState s) {
            if (s.jdk()) {
                jdk = new ConcurrentHashMap<>(CDRC_RANGE);
            } else {
                offHeap = new MichaelHashMap(s.domain(24, 3), Integer.highestOneBit(CDRC_KEYS) << 1);
            }
            final Rng rng = new Rng(42);
            int size = 0;
            while (size < CDRC_KEYS) {
                final long k = rng.nextInt(CDRC_RANGE);
                if (jdk != null ? jdk.putIfAbsent(k, k) == null : offHeap.putIfAbsent(k, k) == MichaelHashMap.RESERVED) {
                    size++;
                }
            }
        }

        @TearDown(Level.Trial)
        public void close(final SchemeState s) {
            if (offHeap != null) {
                offHeap.close();
            }
            s.close();
        }
    }

    @State(Scope.Benchmark)
    public static class StampIt {
        MichaelHashMap offHeap;
        MichaelScottQueue fifo;
        ReclaimDomain fifoDomain;
        ConcurrentHashMap<Long, Long> jdk;
        ConcurrentLinkedQueue<Long> jdkFifo;
        final AtomicLong size = new AtomicLong();

        @Setup(Level.Trial)
        public void create(final SchemeState s) {
            if (s.jdk()) {
                jdk = new ConcurrentHashMap<>();
                jdkFifo = new ConcurrentLinkedQueue<>();
            } else {
                offHeap = new MichaelHashMap(s.domain(24, 3), STAMPIT_BUCKETS);
                // the queue's nodes have other links than the map's: a domain of their own
                fifoDomain = ReclaimDomain.builder(s.scheme).allocator(s.allocator).recordBytes(16).slots(2).build();
                fifo = new MichaelScottQueue(fifoDomain);
            }
        }

        @TearDown(Level.Trial)
        public void close(final SchemeState s) {
            if (offHeap != null) {
                offHeap.close();
                fifo.close();
                fifoDomain.close();
            }
            s.close();
        }
    }

    @State(Scope.Thread)
    public static class Local {
        final Rng rng = new Rng(Thread.currentThread().threadId() * 0x9E3779B97F4A7C15L);
    }

    @Benchmark
    public boolean cdrc(final Cdrc map, final Local local, final Gauges gauges) {
        final int r = local.rng.nextInt(100);
        final long key = local.rng.nextInt(CDRC_RANGE);
        if (map.jdk != null) {
            if (r < 5) {
                return map.jdk.putIfAbsent(key, key) == null;
            }
            if (r < 10) {
                return map.jdk.remove(key) != null;
            }
            return map.jdk.containsKey(key);
        }
        if (r < 5) {
            return map.offHeap.putIfAbsent(key, key) == MichaelHashMap.RESERVED;
        }
        if (r < 10) {
            return map.offHeap.remove(key) != MichaelHashMap.RESERVED;
        }
        return map.offHeap.contains(key);
    }

    @Benchmark
    public long stampit(final StampIt cache, final Local local, final Gauges gauges) {
        final long key = local.rng.nextInt(STAMPIT_RESULTS);
        if (cache.jdk != null) {
            final Long hit = cache.jdk.get(key);
            if (hit != null) {
                return hit;
            }
            final long result = compute(key);
            if (cache.jdk.putIfAbsent(key, result) == null) {
                cache.jdkFifo.add(key);
                if (cache.size.incrementAndGet() > STAMPIT_CAPACITY) {
                    final Long oldest = cache.jdkFifo.poll();
                    if (oldest != null && cache.jdk.remove(oldest) != null) {
                        cache.size.decrementAndGet();
                    }
                }
            }
            return result;
        }
        return cacheLookup(cache.offHeap, cache.fifo, cache.size, key);
    }

    /**
     * Stamp-it's cache lookup on the off-heap map: the cached result of {@code key}, or the
     * computed one, inserted with the oldest entry evicted through {@code fifo} once the map holds
     * more than {@value #STAMPIT_CAPACITY}.
     */
    public static long cacheLookup(final MichaelHashMap map, final MichaelScottQueue fifo, final AtomicLong size,
                                   final long key) {
        final long hit = map.get(key);
        if (hit != MichaelHashMap.RESERVED) {
            return hit;
        }
        final long result = compute(key);
        if (map.putIfAbsent(key, result) == MichaelHashMap.RESERVED) {
            fifo.enqueue(key);
            if (size.incrementAndGet() > STAMPIT_CAPACITY) {
                final long oldest = fifo.dequeue();
                if (oldest != MichaelScottQueue.RESERVED && map.remove(oldest) != MichaelHashMap.RESERVED) {
                    size.decrementAndGet();
                }
            }
        }
        return result;
    }

    /** The "simulation": a little floating-point work per result, as Stamp-it's does per element. */
    static long compute(final long key) {
        double x = key;
        for (int i = 0; i < 16; i++) {
            x = Math.sqrt(x + 1) + Math.sin(x) * Math.cos(x);
        }
        return Double.doubleToLongBits(x) & Long.MAX_VALUE;
    }
}
