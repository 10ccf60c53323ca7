package dev.limbo.bench.cdrc;

import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Auxiliary counters of the CDRC structure benchmarks, read at the end of each iteration once
 * every benchmark thread stopped: the space overhead ({@link CdrcScheme#unreclaimed()}: nodes
 * removed but not yet freed, the paper's second metric) and the off-heap bytes in use. The names
 * are the structure family's, so the bench report tables them the same way. JMH sums auxiliary
 * counters over threads, so only the first thread to sample an iteration reports
 * ({@link CdrcScheme#sample}); the others report 0.
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.EVENTS)
public class SpaceGauges {

    public long unreclaimedNodes;
    public long offHeapBytes;
    /** Iterations this thread ended, warmup included. */
    private int iteration;

    @TearDown(Level.Iteration)
    public void sample(final CdrcScheme s) {
        iteration++;
        if (!s.sample(iteration, this)) {
            unreclaimedNodes = 0;
            offHeapBytes = 0;
        }
    }
}
