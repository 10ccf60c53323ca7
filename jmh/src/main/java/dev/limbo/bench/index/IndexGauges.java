package dev.limbo.bench.index;

import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * {@link IndexBench}'s auxiliary counters, read at the end of each iteration: the GC pause time of
 * the iteration (ms) and the memory per entry the prefill measured (bytes: heap, off-heap, both).
 * JMH sums auxiliary counters over threads, so only thread 0 reports; the others report 0.
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.EVENTS)
public class IndexGauges {

    public double gcPauseMs;
    public double heapBytesPerEntry;
    public double offHeapBytesPerEntry;
    public double bytesPerEntry;

    private long gcAtStart;

    @Setup(Level.Iteration)
    public void start(final ThreadParams thread) {
        if (thread.getThreadIndex() == 0) {
            gcAtStart = IndexBench.gcPauseMillis();
        }
    }

    @TearDown(Level.Iteration)
    public void sample(final IndexBench.Index index, final ThreadParams thread) {
        if (thread.getThreadIndex() == 0) {
            gcPauseMs = IndexBench.gcPauseMillis() - gcAtStart;
            heapBytesPerEntry = index.heapBytesPerEntry;
            offHeapBytesPerEntry = index.offHeapBytesPerEntry;
            bytesPerEntry = heapBytesPerEntry + offHeapBytesPerEntry;
        } else {
            gcPauseMs = 0;
            heapBytesPerEntry = 0;
            offHeapBytesPerEntry = 0;
            bytesPerEntry = 0;
        }
    }
}
