package dev.limbo.bench.index;

import dev.limbo.bench.structures.StructureBenchmark.Rng;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;

/**
 * The off-heap index against the concurrent {@code long -> long} maps Java programs use (issue 18):
 * a map with keys drawn uniformly from {@code [0, keys)}, prefilled with {@code keys / 2} of them,
 * under one of four mixes:
 *
 * <ul>
 *   <li>{@code 50i50d}: 50 % insert ({@code put}), 50 % delete;</li>
 *   <li>{@code read90}: 90 % lookups, 5 % insert, 5 % delete;</li>
 *   <li>{@code read100}: lookups only;</li>
 *   <li>{@code scan100}: 90 % range scans of 100 entries from a random key, 5 % insert, 5 % delete
 *       (ordered contenders only: a hash contender refuses it at setup).</li>
 * </ul>
 *
 * <p>One operation per call; score: operations per µs. The contenders ({@link Contender}) sit
 * behind {@link IndexAdapter}, one per fork, so the calls below stay monomorphic. Besides the
 * score, {@link IndexGauges} reports the GC pause time of each iteration and the memory per entry
 * the prefill measured: heap (used heap after a full GC, before the map was made and after the
 * prefill) and off-heap (the contender's own count: Limbo's allocator, Chronicle's
 * {@code offHeapMemoryUsed()}, the JVM's direct buffer pool for MapDB). The bench command adds
 * JMH's GC profiler (heap bytes per operation) and gives the Limbo contenders' forks a 1 GiB heap;
 * run directly, every fork gets the 4 GiB heap below.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgs = {"-Xms4g", "-Xmx4g"}, jvmArgsAppend = {
    "--enable-native-access=ALL-UNNAMED", "-XX:MaxDirectMemorySize=8g",
    // Chronicle Map: no usage analytics sent from the forks; its opens and exports on JDK 17+
    // (chronicle.software/chronicle-support-java-17)
    "-Dchronicle.analytics.disable=true",
    "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED",
    "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
    "--add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED"})
public class IndexBench {

    /** Entries per range scan of {@code scan100}. */
    public static final int SCAN_LENGTH = 100;

    /** The map under test, prefilled, shared by the benchmark threads. */
    @State(Scope.Benchmark)
    public static class Index {

        @Param({"1000000", "20000000"})
        public int keys;

        @Param({"50i50d", "read90", "read100", "scan100"})
        public String mix;

        @Param({"limbo-ordered", "limbo-hash", "cslm", "chm", "nbhml", "chronicle", "mapdb-btree", "mapdb-htree"})
        public String contender;

        IndexAdapter map;
        /** {@link #map} for the scan mix, null otherwise. */
        OrderedAdapter ordered;
        /** Operations {@code r < insertBelow} insert; {@code r < updateBelow} delete; of r in [0, 100). */
        int insertBelow;
        int updateBelow;
        double heapBytesPerEntry;
        double offHeapBytesPerEntry;

        @Setup(Level.Trial)
        public void create() {
            final Contender c = Contender.of(contender);
            switch (mix) {
                case "50i50d" -> updates(50, 100);
                case "read90", "scan100" -> updates(5, 10);
                case "read100" -> updates(0, 0);
                default -> throw new IllegalArgumentException("unknown mix '" + mix
                        + "'; known: 50i50d, read90, read100, scan100");
            }
            if (keys < 2) {
                throw new IllegalArgumentException("keys must be >= 2, was " + keys);
            }
            final long heapBefore = heapUsedAfterGc();
            map = c.create(keys);
            if (mix.equals("scan100")) {
                if (!(map instanceof OrderedAdapter o)) {
                    map.close();
                    throw new IllegalArgumentException("contender " + contender + " is a hash map: it has no range "
                            + "scans (mix scan100 is for the ordered contenders)");
                }
                ordered = o;
            }
            final Rng rng = new Rng(42);
            final int entries = keys / 2;
            int size = 0;
            while (size < entries) {
                final long k = rng.nextInt(keys);
                if (map.put(k, value(k)) == IndexAdapter.MISSING) {
                    size++;
                }
            }
            heapBytesPerEntry = (heapUsedAfterGc() - heapBefore) / (double) entries;
            offHeapBytesPerEntry = map.offHeapBytes() / (double) entries;
        }

        private void updates(final int insertPercent, final int updatePercent) {
            insertBelow = insertPercent;
            updateBelow = updatePercent;
        }

        @TearDown(Level.Trial)
        public void close() {
            map.close();
        }
    }

    /** A key's value: never {@link IndexAdapter#MISSING} for the keys of this benchmark. */
    static long value(final long key) {
        return key + 1;
    }

    /** Used heap bytes after full collections. */
    static long heapUsedAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** Milliseconds the JVM's collectors have paused it so far (beans of concurrent cycles left out). */
    static long gcPauseMillis() {
        long ms = 0;
        for (final GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (!gc.getName().contains("Cycles")) {
                ms += Math.max(0, gc.getCollectionTime());
            }
        }
        return ms;
    }

    /** A thread's random numbers and range-scan visitor. */
    @State(Scope.Thread)
    public static class Local {
        final Rng rng = new Rng(Thread.currentThread().threadId() * 0x9E3779B97F4A7C15L);
        final RangeScan scan = new RangeScan(SCAN_LENGTH);
    }

    @Benchmark
    public long operation(final Index index, final Local local, final IndexGauges gauges) {
        final int r = local.rng.nextInt(100);
        final long key = local.rng.nextInt(index.keys);
        if (r < index.insertBelow) {
            return index.map.put(key, value(key));
        }
        if (r < index.updateBelow) {
            return index.map.remove(key);
        }
        if (index.ordered != null) {
            return index.ordered.scan(key, local.scan) + local.scan.sum();
        }
        return index.map.get(key);
    }
}
