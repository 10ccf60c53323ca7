package dev.limbo.bench.reclaim;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Words;
import dev.limbo.reclaim.Guard;
import dev.limbo.reclaim.ReclaimDomain;
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

import java.util.concurrent.TimeUnit;

/**
 * Stamp-it's GuardPtr benchmark (report §4, "GuardPtr"): the base cost of a guard. Each operation
 * pins, protects one shared node (as {@code guard_ptr} acquisition does) and unpins, with no other
 * work, so the scheme's per-operation cost is all that is measured. Score: operations per µs.
 * One fork per scheme keeps the guard call sites monomorphic.
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
            "stampit"})
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
    public long guardPtr() {
        try (Guard g = domain.pin()) {
            return g.protect(0, cell);
        }
    }
}
