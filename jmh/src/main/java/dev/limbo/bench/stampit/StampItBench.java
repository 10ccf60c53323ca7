package dev.limbo.bench.stampit;

import dev.limbo.bench.structures.HashMapBench;
import dev.limbo.bench.structures.StructureBenchmark.Rng;
import dev.limbo.core.Words;
import dev.limbo.reclaim.Guard;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.structures.HarrisMichaelList;
import dev.limbo.structures.MichaelHashMap;
import dev.limbo.structures.MichaelScottQueue;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Stamp-it's four benchmarks (Pöter and Träff, the Stamp-it report §4.1; digest §5.3 and §7.3), in
 * the shape of its base-cost figure (Fig. 5: nanoseconds per operation, one thread, 10 elements).
 * Every invocation runs {@value #OPS} operations:
 * <ul>
 *   <li>{@link #guardPtr}: 100 guards on one shared node, each its own section (pin, protect,
 *       unpin) with no enclosing region, so that a Stamp-it region entry and exit (a push into and
 *       a removal from the stamp queue) is paid per guard: the stress test of the stamp queue.</li>
 *   <li>{@link #queue}: a Michael-Scott queue of 10 elements, 50 % enqueue and 50 % dequeue of
 *       values in [0, 20), the 100 operations in one region (an enclosing pin; each operation's own
 *       pin nests in it), as Stamp-it's {@code region_guard} does.</li>
 *   <li>{@link #listReads} and {@link #listWrites}: a Harris-Michael list set of 10 elements, keys
 *       in [0, 20), 0 % and 100 % updates (half inserts, half removes), 100 operations per region.</li>
 *   <li>{@link #hashMap}: a cache of at most 10,000 of 30,000 results in a Michael hash map of
 *       2,048 buckets, evicted FIFO through a Michael-Scott queue of keys; 100 lookups per region,
 *       each computing and inserting the result on a miss. Stamp-it's nodes carry the result (1
 *       KiB by the paper); here each map node is a 1 KiB record, so that late reclamation costs
 *       memory as in the paper, but the result itself is a long, and one "simulation" of the
 *       paper (1,000 results holding all their guards) is 100 lookups with one guard each: a
 *       domain has a fixed number of slots per thread.</li>
 * </ul>
 * One fork per scheme keeps the guard call sites monomorphic. The family's report table puts the
 * schemes against the benchmarks at one thread, as Fig. 5 does.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@OperationsPerInvocation(StampItBench.OPS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
public class StampItBench {

    /** Operations per invocation (and per region, in the benchmarks that have one). */
    static final int OPS = 100;
    static final int ELEMENTS = 10;
    static final int KEY_RANGE = 2 * ELEMENTS;
    /** A cached result's record: 1 KiB, as the paper's result nodes. */
    static final long RESULT_BYTES = 1024;

    /** One shared node, linked from a cell, for {@link #guardPtr}. */
    @State(Scope.Benchmark)
    public static class Cell {
        ReclaimDomain domain;
        long cell;

        @Setup(Level.Trial)
        public void create(final StampItScheme s) {
            domain = s.domain(32, 1);
            cell = s.allocator.allocateZeroed(Long.BYTES);
            Words.sr(cell, domain.allocateExclusive());
        }

        @TearDown(Level.Trial)
        public void close(final StampItScheme s) {
            domain.freeExclusive(Words.lp(cell));
            s.allocator.free(cell);
            s.close();
        }
    }

    @State(Scope.Benchmark)
    public static class Queue {
        ReclaimDomain domain;
        MichaelScottQueue queue;

        @Setup(Level.Trial)
        public void create(final StampItScheme s) {
            domain = s.domain(16, 2);
            queue = new MichaelScottQueue(domain);
            for (long i = 0; i < ELEMENTS; i++) {
                queue.enqueue(i);
            }
        }

        @TearDown(Level.Trial)
        public void close(final StampItScheme s) {
            queue.close();
            s.close();
        }
    }

    @State(Scope.Benchmark)
    public static class List {
        ReclaimDomain domain;
        HarrisMichaelList list;

        @Setup(Level.Trial)
        public void create(final StampItScheme s) {
            domain = s.domain(24, 3);
            list = new HarrisMichaelList(domain);
            for (long k = 0; k < KEY_RANGE; k += 2) {
                list.insert(k);
            }
        }

        @TearDown(Level.Trial)
        public void close(final StampItScheme s) {
            list.close();
            s.close();
        }
    }

    @State(Scope.Benchmark)
    public static class Cache {
        ReclaimDomain domain;
        MichaelHashMap map;
        MichaelScottQueue fifo;
        final AtomicLong size = new AtomicLong();

        @Setup(Level.Trial)
        public void create(final StampItScheme s) {
            domain = s.domain(RESULT_BYTES, 3);
            map = new MichaelHashMap(domain, HashMapBench.STAMPIT_BUCKETS);
            fifo = new MichaelScottQueue(s.domain(16, 2)); // other links than the map's nodes: another domain
        }

        @TearDown(Level.Trial)
        public void close(final StampItScheme s) {
            map.close();
            fifo.close();
            s.close();
        }
    }

    @State(Scope.Thread)
    public static class Local {
        final Rng rng = new Rng(Thread.currentThread().threadId() * 0x9E3779B97F4A7C15L);
    }

    @Benchmark
    public void guardPtr(final Cell c, final Blackhole bh) {
        for (int i = 0; i < OPS; i++) {
            try (Guard g = c.domain.pin()) {
                bh.consume(g.protect(0, c.cell));
            }
        }
    }

    @Benchmark
    public void queue(final Queue q, final Local local, final Blackhole bh) {
        try (Guard region = q.domain.pin()) {
            for (int i = 0; i < OPS; i++) {
                final int r = local.rng.nextInt(2 * KEY_RANGE);
                if (r < KEY_RANGE) {
                    q.queue.enqueue(r);
                } else {
                    bh.consume(q.queue.dequeue());
                }
            }
            bh.consume(region);
        }
    }

    @Benchmark
    public void listReads(final List l, final Local local, final Blackhole bh) {
        try (Guard region = l.domain.pin()) {
            for (int i = 0; i < OPS; i++) {
                bh.consume(l.list.contains(local.rng.nextInt(KEY_RANGE)));
            }
            bh.consume(region);
        }
    }

    @Benchmark
    public void listWrites(final List l, final Local local, final Blackhole bh) {
        try (Guard region = l.domain.pin()) {
            for (int i = 0; i < OPS; i++) {
                final long key = local.rng.nextInt(KEY_RANGE);
                bh.consume(local.rng.nextInt(2) == 0 ? l.list.insert(key) : l.list.remove(key) != HarrisMichaelList.RESERVED);
            }
            bh.consume(region);
        }
    }

    @Benchmark
    public void hashMap(final Cache c, final Local local, final Blackhole bh) {
        try (Guard region = c.domain.pin()) {
            for (int i = 0; i < OPS; i++) {
                bh.consume(HashMapBench.cacheLookup(c.map, c.fifo, c.size, local.rng.nextInt(HashMapBench.STAMPIT_RESULTS)));
            }
            bh.consume(region);
        }
    }
}
