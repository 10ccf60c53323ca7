package dev.limbo.bench.suite;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;

/**
 * How much a suite measures: JMH forks and iterations, thread counts, and the timed trials.
 *
 * @param name              {@code quick} or {@code full}
 * @param quick             whether the quick subset of benchmarks and parameters is used
 * @param forks             JMH forks per benchmark and parameter set (at least 2: the error needs them)
 * @param warmupIterations  JMH warmup iterations per fork
 * @param warmupTime        length of a warmup iteration
 * @param iterations        JMH measurement iterations per fork
 * @param iterationTime     length of a measurement iteration
 * @param threads           thread counts, one JMH run each
 * @param timelineWarmup    unsampled run time before each timed trial's samples (JIT warmup)
 * @param timelineDuration  sampled run time of each timed trial
 * @param timelineThreads   worker threads of the timed trials
 * @param timelineKeyRange  key range of the timed trials (prefilled to half)
 */
public record SuiteSpec(String name, boolean quick, int forks, int warmupIterations, Duration warmupTime, int iterations,
                        Duration iterationTime, List<Integer> threads, Duration timelineWarmup, Duration timelineDuration,
                        int timelineThreads,
                        int timelineKeyRange) {

    /** Seconds a JMH fork costs beyond its iterations (JVM start, setup, teardown), for the estimate. */
    public static final double FORK_OVERHEAD_SECONDS = 1.0;

    public SuiteSpec {
        threads = List.copyOf(threads);
        if (forks < 1 || warmupIterations < 0 || iterations < 1 || threads.isEmpty()) {
            throw new IllegalArgumentException("a suite needs forks >= 1, iterations >= 1 and a thread count");
        }
    }

    /**
     * The default: fits in 5 minutes on 2 cores. 2 forks x (1 x 300 ms warmup + 2 x 200 ms measured
     * iterations), threads 1 and 2, 2-second timed trials after 0.5 s of warmup.
     */
    public static SuiteSpec quickSuite() {
        return new SuiteSpec("quick", true, 2, 1, Duration.ofMillis(300), 2, Duration.ofMillis(200), List.of(1, 2),
                Duration.ofMillis(500), Duration.ofSeconds(2), 2, 100_000);
    }

    /**
     * For large machines: every benchmark and parameter, 3 forks x (3 + 5 one-second iterations),
     * threads swept up to twice the cores, 10-second timed trials with as many threads as cores.
     */
    public static SuiteSpec full(final int cores) {
        return new SuiteSpec("full", false, 3, 3, Duration.ofSeconds(1), 5, Duration.ofSeconds(1), sweep(cores),
                Duration.ofSeconds(2), Duration.ofSeconds(10), Math.max(2, cores), 1_000_000);
    }

    public static SuiteSpec of(final String name, final int cores) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "quick" -> quickSuite();
            case "full" -> full(cores);
            default -> throw new IllegalArgumentException("unknown suite '" + name + "'; known: quick, full");
        };
    }

    /** 1, 2, 4, ... below 2 x cores, plus cores and 2 x cores. */
    public static List<Integer> sweep(final int cores) {
        final TreeSet<Integer> t = new TreeSet<>();
        for (int n = 1; n < 2 * cores; n <<= 1) {
            t.add(n);
        }
        t.add(Math.max(1, cores));
        t.add(Math.max(2, 2 * cores));
        return new ArrayList<>(t);
    }

    public SuiteSpec withForks(final int f) {
        return new SuiteSpec(name, quick, f, warmupIterations, warmupTime, iterations, iterationTime, threads,
                timelineWarmup, timelineDuration, timelineThreads, timelineKeyRange);
    }

    public SuiteSpec withIterations(final int wi, final Duration wt, final int i, final Duration it) {
        return new SuiteSpec(name, quick, forks, wi, wt, i, it, threads, timelineWarmup, timelineDuration,
                timelineThreads, timelineKeyRange);
    }

    public SuiteSpec withThreads(final List<Integer> t) {
        return new SuiteSpec(name, quick, forks, warmupIterations, warmupTime, iterations, iterationTime, t,
                timelineWarmup, timelineDuration, timelineThreads, timelineKeyRange);
    }

    public SuiteSpec withTimeline(final Duration warmup, final Duration d, final int t, final int keyRange) {
        return new SuiteSpec(name, quick, forks, warmupIterations, warmupTime, iterations, iterationTime, threads,
                warmup, d, t, keyRange);
    }

    /** Seconds one timed trial is expected to take (prefill, warmup, run). */
    public double trialSeconds() {
        return 0.3 + (timelineWarmup.toMillis() + timelineDuration.toMillis()) / 1000.0 + timelineKeyRange / 400_000.0;
    }

    /** Seconds one fork is expected to take. */
    public double forkSeconds() {
        return warmupIterations * warmupTime.toMillis() / 1000.0 + iterations * iterationTime.toMillis() / 1000.0
                + FORK_OVERHEAD_SECONDS;
    }
}
