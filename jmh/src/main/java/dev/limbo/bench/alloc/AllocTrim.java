package dev.limbo.bench.alloc;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.allocator.internal.BestFitPageAllocator;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.ThreadParams;

import java.util.Random;

/**
 * Memory given back: each invocation allocates {@value #COUNT} blocks, about 80 MiB (64 B to 4 KiB,
 * and every {@value #LARGE_EVERY}th a large block of 1 to 2 MiB), frees them all in an order unlike
 * the allocation order (the even ones, then the odd ones) and trims Limbo's allocator. The counter
 * {@code afterTrimPercentOfPeak} ({@link TrimGauge}) is what the invocation left committed in
 * Limbo's page allocator after the trim, in percent of what it committed (both above what was
 * committed when the invocation began, so that memory other allocators of the JVM hold, such as
 * other tests' in one test JVM, is not counted as this one's); the allocator issue's bar is 10 %. {@link AllocGauges} reports the committed
 * memory at the end of each iteration and the peak.
 *
 * <p>Invocations are serialized by a lock, so that each measures its own memory; other benchmark
 * threads' caches (each at most 64 KiB per size class) are still counted. The score, allocate+free
 * pairs per microsecond with the trim included, therefore does not grow with threads, and is not
 * what this benchmark is for.
 */
@State(Scope.Thread)
public class AllocTrim extends AllocBenchmark {

    static final int COUNT = 16_384;
    static final int LARGE_EVERY = 512;
    private static final long[] SIZES = sizes();

    private final long[] blocks = new long[COUNT];

    /**
     * After-trim committed memory in percent of the invocation's peak: the worst invocation of the
     * iteration, from thread 0 (the others report 0, since JMH sums counters over threads); NaN for
     * the baselines, which have no trim.
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class TrimGauge {
        public double afterTrimPercentOfPeak;

        @Setup(Level.Iteration)
        public void reset(final BenchmarkParams params) {
            start(params.getParam("allocator"));
        }

        /** Starts an iteration under {@code allocator}. */
        void start(final String allocator) {
            afterTrimPercentOfPeak = Allocators.isLimbo(allocator) ? 0 : Double.NaN;
        }

        @TearDown(Level.Iteration)
        public void onlyThreadZeroReports(final ThreadParams thread) {
            if (thread.getThreadIndex() != 0) {
                afterTrimPercentOfPeak = 0;
            }
        }
    }

    private static long[] sizes() {
        final Random random = new Random(11);
        final long[] sizes = new long[COUNT];
        for (int i = 0; i < COUNT; i++) {
            sizes[i] = i % LARGE_EVERY == 0 ? (1 << 20) + random.nextInt(1 << 20) : 64 + random.nextInt(4096 - 64 + 1);
        }
        return sizes;
    }

    @Benchmark
    @OperationsPerInvocation(COUNT)
    public long freeAllAndTrim(final AllocatorState s, final TrimGauge gauge, final AllocGauges memory) {
        final BestFitPageAllocator pages = BestFitPageAllocator.global();
        synchronized (AllocTrim.class) {
            final long before = pages.committedBytes();
            for (int i = 0; i < COUNT; i++) {
                blocks[i] = s.alloc.allocate(SIZES[i]);
            }
            final long peak = pages.committedBytes();
            for (int i = 0; i < COUNT; i += 2) {
                s.alloc.free(blocks[i]);
            }
            for (int i = 1; i < COUNT; i += 2) {
                s.alloc.free(blocks[i]);
            }
            if (s.alloc instanceof LimboAllocator limbo) {
                limbo.trim();
                final long kept = Math.max(0, pages.committedBytes() - before);
                gauge.afterTrimPercentOfPeak = Math.max(gauge.afterTrimPercentOfPeak,
                        100.0 * kept / Math.max(1, peak - before));
            }
            return blocks[COUNT - 1];
        }
    }
}
