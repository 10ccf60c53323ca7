package dev.limbo.bench.structures;

import dev.limbo.structures.HarrisMichaelList;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.util.concurrent.ConcurrentSkipListMap;

/**
 * Stamp-it's List benchmark (report §4.1): a Harris-Michael list set of 10 elements, keys in
 * [0, 20); {@code updatePercent} of the operations are updates, split evenly between insert and
 * remove, the rest are searches. {@code jdk}: {@link ConcurrentSkipListMap} of boxed longs.
 */
public class ListBench extends StructureBenchmark {

    static final int ELEMENTS = 10;
    static final int KEY_RANGE = 2 * ELEMENTS;

    @State(Scope.Benchmark)
    public static class List {
        @Param({"20", "80"})
        public int updatePercent;

        HarrisMichaelList offHeap;
        ConcurrentSkipListMap<Long, Long> jdk;

        @Setup(Level.Trial)
        public void create(final SchemeState s) {
            if (s.jdk()) {
                jdk = new ConcurrentSkipListMap<>();
            } else {
                offHeap = new HarrisMichaelList(s.domain(24, 3));
            }
            for (long k = 0; k < KEY_RANGE; k += 2) {
                insert(k);
            }
        }

        boolean insert(final long key) {
            return jdk != null ? jdk.putIfAbsent(key, key) == null : offHeap.insert(key);
        }

        boolean remove(final long key) {
            return jdk != null ? jdk.remove(key) != null : offHeap.remove(key) != HarrisMichaelList.RESERVED;
        }

        boolean contains(final long key) {
            return jdk != null ? jdk.containsKey(key) : offHeap.contains(key);
        }

        @TearDown(Level.Trial)
        public void close(final SchemeState s) {
            if (offHeap != null) {
                offHeap.close();
            }
            s.close();
        }
    }

    @State(Scope.Thread)
    public static class Local {
        final Rng rng = new Rng(Thread.currentThread().threadId() * 0x9E3779B97F4A7C15L);
    }

    @Benchmark
    public boolean operation(final List list, final Local local, final Gauges gauges) {
        final int r = local.rng.nextInt(100);
        final long key = local.rng.nextInt(KEY_RANGE);
        if (r < list.updatePercent / 2) {
            return list.insert(key);
        }
        if (r < list.updatePercent) {
            return list.remove(key);
        }
        return list.contains(key);
    }
}
