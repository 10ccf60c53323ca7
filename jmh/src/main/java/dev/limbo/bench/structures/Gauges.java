package dev.limbo.bench.structures;

import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * Auxiliary counters: unreclaimed nodes and off-heap bytes at the end of each iteration. JMH sums
 * auxiliary counters over threads, so only thread 0 reports; the others report 0.
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.EVENTS)
public class Gauges {

    public long unreclaimedNodes;
    public long offHeapBytes;

    @TearDown(Level.Iteration)
    public void sample(final SchemeState s, final ThreadParams thread) {
        if (thread.getThreadIndex() == 0) {
            unreclaimedNodes = s.unreclaimed();
            offHeapBytes = s.offHeapBytes();
        } else {
            unreclaimedNodes = 0;
            offHeapBytes = 0;
        }
    }
}
