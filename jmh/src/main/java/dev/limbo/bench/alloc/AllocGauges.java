package dev.limbo.bench.alloc;

import dev.limbo.allocator.internal.BestFitPageAllocator;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * Auxiliary counters of the allocator benchmarks: the memory Limbo's page allocator has committed,
 * in MiB, read when an iteration ends (never on the measured path). These are the pages under
 * superblocks and large allocations, committed or kept committed as free runs; the region's fixed
 * metadata, such as the page map, is left out. {@code committedMiB} is the amount at the end of the
 * iteration, {@code peakCommittedMiB} the most committed at once since the fork started: when a
 * workload makes committed memory grow (Larson's thread churn, say), both climb from one iteration
 * to the next, and when it stays flat, so do they. NaN for the baselines, which do not use Limbo's
 * pages.
 *
 * <p>JMH sums auxiliary counters over threads, so only thread 0 reports and the others report 0.
 * JMH's own summary line also sums an event counter over all measured iterations and forks; the
 * bench suite's report shows the mean per iteration.
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.EVENTS)
public class AllocGauges {

    private static final double MIB = 1 << 20;

    public double committedMiB;
    public double peakCommittedMiB;

    @TearDown(Level.Iteration)
    public void sample(final BenchmarkParams params, final ThreadParams thread) {
        if (thread.getThreadIndex() != 0) {
            committedMiB = 0;
            peakCommittedMiB = 0;
        } else if (Allocators.isLimbo(params.getParam("allocator"))) {
            final BestFitPageAllocator pages = BestFitPageAllocator.global();
            committedMiB = pages.committedBytes() / MIB;
            peakCommittedMiB = pages.peakCommittedBytes() / MIB;
        } else {
            committedMiB = Double.NaN;
            peakCommittedMiB = Double.NaN;
        }
    }
}
