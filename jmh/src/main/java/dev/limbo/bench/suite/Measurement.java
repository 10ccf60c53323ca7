package dev.limbo.bench.suite;

import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * One JMH result, independent of JMH's classes: a benchmark at one parameter set and thread count.
 *
 * @param family    the benchmark's family
 * @param benchmark package.Class.method
 * @param params    every parameter's value, by name
 * @param threads   JMH threads
 * @param score     the primary score (mean over all measured iterations of all forks)
 * @param error     JMH's 99.9 % confidence half-width, NaN when there were too few samples
 * @param unit      the score's unit, e.g. {@code ops/us}
 * @param samples   measured iterations behind the score
 * @param secondary secondary results (auxiliary counters such as {@code unreclaimedNodes}), each its mean
 *                  per measured iteration, by name
 */
public record Measurement(Family family, String benchmark, Map<String, String> params, int threads, double score,
                          double error, String unit, long samples, Map<String, Double> secondary) {

    public Measurement {
        params = Collections.unmodifiableMap(new TreeMap<>(params));
        secondary = Collections.unmodifiableMap(new LinkedHashMap<>(secondary));
    }

    /** {@code Class.method}. */
    public String shortName() {
        return JmhProgress.shortName(benchmark);
    }

    /** Converts a JMH result. */
    public static Measurement of(final RunResult r) {
        final BenchmarkParams p = r.getParams();
        final Map<String, String> params = new TreeMap<>();
        for (final String k : p.getParamsKeys()) {
            params.put(k, p.getParam(k));
        }
        final Result<?> primary = r.getPrimaryResult();
        final Map<String, Double> secondary = new LinkedHashMap<>();
        for (final Map.Entry<String, Result> e : r.getSecondaryResults().entrySet()) {
            secondary.put(e.getKey(), perIteration(e.getValue()));
        }
        final Family family = Family.ofBenchmark(p.getBenchmark());
        return new Measurement(family, p.getBenchmark(), params, p.getThreads(), primary.getScore(),
                primary.getScoreError(), primary.getScoreUnit(), primary.getSampleCount(), secondary);
    }

    /**
     * A secondary result's mean over the measured iterations (of all forks). Not its score: JMH
     * aggregates an {@code @AuxCounters(EVENTS)} counter over iterations by the counter's policy,
     * SUM, so the score of a gauge sampled once per iteration (unreclaimed nodes, committed memory)
     * grows with the number of iterations. For a throughput result the two are the same.
     */
    static double perIteration(final Result<?> r) {
        return r.getStatistics().getMean();
    }
}
