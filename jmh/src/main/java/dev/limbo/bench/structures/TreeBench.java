package dev.limbo.bench.structures;

import dev.limbo.structures.NatarajanMittalTree;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The Natarajan-Mittal tree, prefilled to half its key range, under a mix of {@code updatePercent}
 * updates, split evenly between insert and remove; the rest are lookups. {@code jdk}:
 * {@link ConcurrentSkipListMap} of boxed longs.
 *
 * <p>Five shapes come from the papers: CDRC's (PLDI '21 §6: 100K keys, i.e. {@code keyRange=200000},
 * with {@code updatePercent} 1, 10 and 50) and DEBRA's (PODC '15 §7: 50 % insert / 50 % delete,
 * i.e. {@code updatePercent=100}, with {@code keyRange} 10000 and 1000000). The declared
 * parameters are DEBRA's 10^6 shape alone; {@code ./limbo bench full} runs all five (the planner's
 * full-suite parameter sets), the quick suite only {@code keyRange=10000, updatePercent=100}. Run
 * other shapes directly with {@code -p}, e.g. {@code ./limbo jmh TreeBench -p keyRange=200000
 * -p updatePercent=1,10,50}.
 */
public class TreeBench extends StructureBenchmark {

    @State(Scope.Benchmark)
    public static class Tree {
        @Param({"1000000"})
        public int keyRange;

        @Param({"100"})
        public int updatePercent;

        NatarajanMittalTree offHeap;
        ConcurrentSkipListMap<Long, Long> jdk;

        @Setup(Level.Trial)
        public void create(final SchemeState s) {
            if (s.jdk()) {
                jdk = new ConcurrentSkipListMap<>();
            } else {
                offHeap = new NatarajanMittalTree(s.domain(32, 5));
            }
            final Rng rng = new Rng(42);
            int size = 0;
            while (size < keyRange / 2) {
                if (insert(rng.nextInt(keyRange))) {
                    size++;
                }
            }
        }

        boolean insert(final long key) {
            return jdk != null ? jdk.putIfAbsent(key, key) == null : offHeap.insert(key, key);
        }

        boolean remove(final long key) {
            return jdk != null ? jdk.remove(key) != null : offHeap.remove(key) != NatarajanMittalTree.RESERVED;
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
    public boolean operation(final Tree tree, final Local local, final Gauges gauges) {
        final int r = local.rng.nextInt(100);
        final long key = local.rng.nextInt(tree.keyRange);
        if (r < tree.updatePercent / 2) {
            return tree.insert(key);
        }
        if (r < tree.updatePercent) {
            return tree.remove(key);
        }
        return tree.contains(key);
    }
}
