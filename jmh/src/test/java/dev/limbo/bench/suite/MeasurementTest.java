package dev.limbo.bench.suite;

import org.junit.jupiter.api.Test;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.Aggregator;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

import java.lang.reflect.Method;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class MeasurementTest {

    @Test
    void aGaugeIsItsMeanPerIterationNotTheSumJmhScoresIt() throws ReflectiveOperationException {
        // An @AuxCounters(EVENTS) counter as three measured iterations report it ...
        final List<ScalarResult> iterations = List.of(new ScalarResult("committedMiB", 5, "#", AggregationPolicy.SUM),
                new ScalarResult("committedMiB", 7, "#", AggregationPolicy.SUM),
                new ScalarResult("committedMiB", 9, "#", AggregationPolicy.SUM));
        // ... aggregated as JMH's BenchmarkResult.getSecondaryResults does, by the iteration aggregator.
        final Method aggregator = Result.class.getDeclaredMethod("getIterationAggregator");
        aggregator.setAccessible(true);
        @SuppressWarnings("unchecked")
        final Result<?> aggregated = ((Aggregator<ScalarResult>) aggregator.invoke(iterations.get(0)))
                .aggregate(iterations);
        assertEquals(21, aggregated.getScore(), 1e-9, "JMH scores an event counter by its sum over iterations");
        assertEquals(7, Measurement.perIteration(aggregated), 1e-9);
    }
}
