package dev.limbo.bench.structures;

import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * Common JMH settings of the structure benchmarks: throughput in operations per µs, 2 forks. Sweep
 * threads with {@code -t 1}, {@code -t 2}, ... (one run per count).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms2g", "-Xmx2g"})
public abstract class StructureBenchmark {

    /** A thread's random numbers: xorshift64*, allocation-free. */
    public static final class Rng {
        private long state;

        public Rng(final long seed) {
            this.state = seed == 0 ? 0x9E3779B97F4A7C15L : seed;
        }

        /** A uniform int in [0, bound). */
        public int nextInt(final int bound) {
            long x = state;
            x ^= x >>> 12;
            x ^= x << 25;
            x ^= x >>> 27;
            state = x;
            return (int) (((x * 0x2545F4914F6CDD1DL) >>> 33) % bound);
        }
    }
}
