package dev.limbo.bench.reclaim;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Words;
import dev.limbo.reclaim.Guard;
import dev.limbo.reclaim.ReclaimDomain;
import org.openjdk.jmh.annotations.AuxCounters;
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
import org.openjdk.jmh.infra.ThreadParams;

import java.util.concurrent.TimeUnit;

/**
 * Stamp-it's GuardPtr benchmark (report §4, "GuardPtr"): the base cost of a guard. Each operation
 * pins, protects one shared node (as {@code guard_ptr} acquisition does) and unpins, with no other
 * work, so the scheme's per-operation cost is all that is measured. Score: operations per µs.
 * One fork per scheme keeps the guard call sites monomorphic. The stamp queue's retries are
 * reported alongside ({@link QueueRetries}; the report's Fig. 3 counts, which this benchmark
 * stresses most: every operation is a push and a remove).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
public class ReclaimGuardPtr {

    @Param({"none", "ebr", "debra", "hp", "ebr-af", "debra-af",
            "qsbr", "nebr", "rcu", "qsbr-af", "nebr-af", "rcu-af", "debra+", "debra+-af",
            "token-naive", "token-passfirst", "token-periodic", "token-af",
            "ibr", "he", "wfe", "ibr-af", "he-af", "wfe-af",
            "nbr", "nbr+", "nbr-af", "nbr+-af", "hp-af",
            "stampit",
            "lfrc"})
    public String scheme;

    private LimboAllocator allocator;
    private ReclaimDomain domain;
    private long cell;

    @Setup(Level.Trial)
    public void create() {
        allocator = LimboAllocator.create();
        domain = ReclaimDomain.builder(scheme).allocator(allocator).recordBytes(32).slots(1).build();
        cell = allocator.allocateZeroed(8);
        Words.sr(cell, domain.allocateExclusive());
    }

    @TearDown(Level.Trial)
    public void close() {
        domain.freeExclusive(Words.lp(cell));
        allocator.free(cell);
        domain.close();
    }

    @Benchmark
    public long guardPtr(final QueueRetries counters) {
        counters.ops++;
        try (Guard g = domain.pin()) {
            return g.protect(0, cell);
        }
    }

    /**
     * JMH auxiliary counters: the domain's {@link dev.limbo.reclaim.ReclaimStats#retries()} (CAS
     * retries and helping steps in {@code stampit}'s stamp queue; 0 for the other schemes) during
     * the iteration, and per operation. The count is the domain's, not a thread's, so exactly one
     * thread (index 0) reports it: JMH sums EVENTS counters over threads, and every thread
     * reporting the domain's delta would multiply it by the thread count. Per operation divides
     * by thread 0's operations times the thread count: the threads run the same loop for the same
     * time, so this estimates the total without a shared counter on the measured path. The counters
     * are read when JMH collects them, after the iteration's measurement ended.
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class QueueRetries {

        private ReclaimGuardPtr bench;
        private boolean reports;
        private int threads;
        private long start;
        /** This thread's operations in the iteration. */
        long ops;

        @Setup(Level.Iteration)
        public void begin(final ReclaimGuardPtr benchmark, final ThreadParams params) {
            bench = benchmark;
            reports = params.getThreadIndex() == 0;
            threads = params.getThreadCount();
            ops = 0;
            start = benchmark.domain.stats().retries();
        }

        /** The domain's stamp-queue retries during the iteration (thread 0 only; 0 from the others). */
        public long retries() {
            return reports ? bench.domain.stats().retries() - start : 0;
        }

        /** {@link #retries()} per operation of all threads (thread 0 only; 0 from the others). */
        public double retriesPerOp() {
            return reports && ops != 0 ? (double) retries() / ((double) ops * threads) : 0;
        }
    }
}
