package dev.limbo.bench.suite;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * One JMH run of the plan: one benchmark at one thread count, over every combination of its
 * parameters, each in {@code spec.forks()} forks.
 *
 * @param family    the benchmark's family
 * @param benchmark the benchmark
 * @param threads   JMH threads
 * @param params    every parameter with the values this run uses (declared ones unless overridden)
 * @param overrides the parameters passed to JMH explicitly (a subset of {@code params})
 * @param spec      forks and iterations
 * @param jvmArgs   the forks' JVM arguments in place of the benchmark's {@code @Fork(jvmArgs)}, or empty
 *                  for the benchmark's own
 */
public record PlannedRun(Family family, BenchmarkInfo benchmark, int threads, Map<String, List<String>> params,
                         Map<String, List<String>> overrides, SuiteSpec spec, List<String> jvmArgs) {

    public PlannedRun {
        jvmArgs = List.copyOf(jvmArgs);
    }

    /** Parameter combinations: the product of the value counts. */
    public int combinations() {
        int n = 1;
        for (final List<String> v : params.values()) {
            n *= Math.max(1, v.size());
        }
        return n;
    }

    /** Forks this run starts. */
    public int forks() {
        return combinations() * spec.forks();
    }

    /** Expected seconds. */
    public double estimateSeconds() {
        return forks() * spec.forkSeconds();
    }

    /** A one-line description: {@code TreeBench.operation threads=2 scheme=jdk,none,...}. */
    public String describe() {
        final String p = params.entrySet().stream().map(e -> e.getKey() + "=" + String.join(",", e.getValue()))
                .collect(Collectors.joining(" "));
        return benchmark.shortName() + " threads=" + threads + (p.isEmpty() ? "" : " " + p)
                + (jvmArgs.isEmpty() ? "" : " jvm=" + String.join(",", jvmArgs));
    }
}
