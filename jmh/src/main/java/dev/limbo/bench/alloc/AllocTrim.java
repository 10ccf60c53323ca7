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
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;

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
 * <p>{@code parkedWorkersFreeAllAndTrim} does the same through {@value ParkedWorkers#WORKERS}
 * platform threads of its own, each allocating and freeing its share; the benchmark thread trims
 * while they are parked, waiting for the next invocation, so what their caches still hold counts
 * against the trim ({@code -Dlimbo.alloc.drainIdleCaches=false} shows the difference). Their caches
 * outlive the invocation, so there both amounts are above what was committed when the trial began.
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

    /**
     * Platform threads that allocate and free the blocks of {@code parkedWorkersFreeAllAndTrim}, and
     * park on a barrier between the steps, so that they are idle while the benchmark thread trims.
     */
    @State(Scope.Thread)
    public static class ParkedWorkers {
        static final int WORKERS = 4;
        /** The workers and the benchmark thread meet here before and after each step. */
        private final CyclicBarrier step = new CyclicBarrier(WORKERS + 1);
        private Thread[] workers;
        private final long[] blocks = new long[COUNT];
        private AllocatorState state;
        /** The page allocator's committed bytes before the workers' first allocation. */
        private long baseline;

        @Setup(Level.Trial)
        public void start(final AllocatorState s) {
            state = s;
            baseline = BestFitPageAllocator.global().committedBytes();
            workers = new Thread[WORKERS];
            for (int w = 0; w < WORKERS; w++) {
                final int first = w;
                workers[w] = Thread.ofPlatform().daemon().name("trim-worker-" + w).start(() -> work(first));
            }
        }

        /** Allocates, then frees, the blocks {@code first}, {@code first + WORKERS}, ... in each invocation. */
        private void work(final int first) {
            try {
                for (;;) {
                    step.await(); // parked here between invocations
                    for (int i = first; i < COUNT; i += WORKERS) {
                        blocks[i] = state.alloc.allocate(SIZES[i]);
                    }
                    step.await();
                    step.await(); // the peak is read meanwhile
                    for (int i = first; i < COUNT; i += WORKERS) {
                        state.alloc.free(blocks[i]);
                    }
                    step.await();
                }
            } catch (final InterruptedException | BrokenBarrierException stopped) {
                // the trial ended
            } catch (final RuntimeException | Error failure) {
                step.reset(); // the benchmark thread's runStep() fails instead of waiting for ever
                throw failure;
            }
        }

        /** Runs one step of every worker, and returns when all have finished it. */
        void runStep() {
            try {
                step.await();
                step.await();
            } catch (final InterruptedException | BrokenBarrierException e) {
                throw new IllegalStateException("a trim worker failed", e);
            }
        }

        @TearDown(Level.Trial)
        public void stop() {
            for (final Thread worker : workers) {
                worker.interrupt();
            }
        }
    }

    @Benchmark
    @OperationsPerInvocation(COUNT)
    public long parkedWorkersFreeAllAndTrim(final AllocatorState s, final ParkedWorkers workers,
            final TrimGauge gauge, final AllocGauges memory) {
        final BestFitPageAllocator pages = BestFitPageAllocator.global();
        synchronized (AllocTrim.class) {
            workers.runStep(); // allocate
            final long peak = pages.committedBytes();
            workers.runStep(); // free; the workers park again
            trimAndGauge(s, gauge, pages, workers.baseline, peak);
            return peak;
        }
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
            trimAndGauge(s, gauge, pages, before, peak);
            return blocks[COUNT - 1];
        }
    }

    /** Trims Limbo's allocator and records what stays committed, in percent of the invocation's peak. */
    private static void trimAndGauge(final AllocatorState s, final TrimGauge gauge, final BestFitPageAllocator pages,
            final long before, final long peak) {
        if (s.alloc instanceof LimboAllocator limbo) {
            limbo.trim();
            final long kept = Math.max(0, pages.committedBytes() - before);
            gauge.afterTrimPercentOfPeak = Math.max(gauge.afterTrimPercentOfPeak,
                    100.0 * kept / Math.max(1, peak - before));
        }
    }
}
