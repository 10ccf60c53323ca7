package dev.limbo.bench.alloc;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** One invocation of {@link AllocTrim}, without JMH. */
class AllocTrimTest {

    private static double afterTrimPercent(final String allocator) {
        final AllocatorState s = new AllocatorState();
        s.allocator = allocator;
        s.create();
        final AllocTrim.TrimGauge gauge = new AllocTrim.TrimGauge();
        gauge.start(allocator);
        new AllocTrim().freeAllAndTrim(s, gauge, new AllocGauges());
        return gauge.afterTrimPercentOfPeak;
    }

    @Test
    void limboKeepsAtMostATenthOfItsPeakCommittedAfterFreeingEverythingAndTrimming() {
        final double percent = afterTrimPercent("limbo");
        assertTrue(percent >= 0 && percent <= 10, "after trim: " + percent + " % of the peak");
    }

    @Test
    void limboKeepsAtMostOnePercentOfItsPeakCommittedAfterParkedWorkersFreedEverything() {
        final AllocatorState s = new AllocatorState();
        s.allocator = "limbo";
        s.create();
        final AllocTrim.ParkedWorkers workers = new AllocTrim.ParkedWorkers();
        workers.start(s);
        try {
            final AllocTrim.TrimGauge gauge = new AllocTrim.TrimGauge();
            gauge.start("limbo");
            new AllocTrim().parkedWorkersFreeAllAndTrim(s, workers, gauge, new AllocGauges());
            assertTrue(gauge.afterTrimPercentOfPeak >= 0 && gauge.afterTrimPercentOfPeak <= 1,
                    "after trim: " + gauge.afterTrimPercentOfPeak + " % of the peak");
        } finally {
            workers.stop();
        }
    }

    @Test
    void theBaselinesHaveNoTrimAndNoCounter() {
        assertEquals(Double.NaN, afterTrimPercent("malloc"));
    }
}
