package dev.limbo.bench.suite;

import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.IterationType;
import org.openjdk.jmh.runner.format.OutputFormat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * JMH's output, split: everything goes to JMH's own text format (the full log, {@code jmh.log});
 * the console gets one line per fork (benchmark, parameters, threads, fork, score) through
 * {@link Progress}, and failures are collected for the summary.
 */
final class JmhProgress implements OutputFormat {

    private static final Pattern FORK = Pattern.compile("^# Fork: (\\d+) of (\\d+)");

    private final OutputFormat log;
    private final Progress progress;
    private final List<String> failures = new ArrayList<>();
    private PlannedRun run;
    private BenchmarkParams params;
    private int fork;
    private int forks;
    private int forksDone;
    private final List<Double> scores = new ArrayList<>();
    private String unit = "";
    private boolean failing;
    private String failure;

    JmhProgress(final OutputFormat log, final Progress progress) {
        this.log = log;
        this.progress = progress;
    }

    /** The run whose forks come next. */
    void begin(final PlannedRun r) {
        this.run = r;
    }

    /** {@code benchmark (params): message} of every failed fork so far. */
    List<String> failures() {
        return failures;
    }

    private String label() {
        if (params == null) {
            return run == null ? "" : run.benchmark().shortName();
        }
        final StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "%-10s %s", run == null ? "" : run.family().id(), shortName(params.getBenchmark())));
        for (final String k : params.getParamsKeys()) {
            b.append(' ').append(k).append('=').append(params.getParam(k));
        }
        b.append(" threads=").append(params.getThreads());
        return b.toString();
    }

    static String shortName(final String benchmark) {
        final int method = benchmark.lastIndexOf('.');
        final int cls = benchmark.lastIndexOf('.', method - 1);
        return benchmark.substring(cls + 1);
    }

    private void finishFork(final boolean ok) {
        forksDone++;
        final String text;
        if (ok) {
            final double mean = scores.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
            text = String.format(Locale.ROOT, "%s  fork %d/%d  %s %s", label(), Math.max(fork, forksDone), forks,
                    Summary.number(mean), unit);
        } else {
            final String why = failure != null ? failure : "no result (see jmh.log)";
            text = String.format(Locale.ROOT, "%s  fork %d/%d  FAILED: %s", label(), Math.max(fork, forksDone), forks,
                    why);
            failures.add(label() + ": " + why);
        }
        scores.clear();
        failing = false;
        failure = null;
        progress.step(run == null ? 0 : run.spec().forkSeconds(), text);
    }

    @Override
    public void startBenchmark(final BenchmarkParams benchParams) {
        log.startBenchmark(benchParams);
        params = benchParams;
        forks = benchParams.getForks();
        fork = 0;
        forksDone = 0;
        scores.clear();
        failing = false;
        failure = null;
    }

    @Override
    public void iteration(final BenchmarkParams benchParams, final IterationParams ip, final int iteration) {
        log.iteration(benchParams, ip, iteration);
        progress.status(String.format(Locale.ROOT, "%s  fork %d/%d  %s %d/%d", label(), Math.max(1, fork), forks,
                ip.getType() == IterationType.WARMUP ? "warmup" : "iteration", iteration, ip.getCount()));
    }

    @Override
    public void iterationResult(final BenchmarkParams benchParams, final IterationParams ip, final int iteration,
                                final IterationResult data) {
        log.iterationResult(benchParams, ip, iteration, data);
        if (ip.getType() == IterationType.MEASUREMENT) {
            scores.add(data.getPrimaryResult().getScore());
            unit = data.getPrimaryResult().getScoreUnit();
            if (iteration == ip.getCount()) {
                finishFork(true);
            }
        }
    }

    @Override
    public void endBenchmark(final BenchmarkResult result) {
        log.endBenchmark(result);
        while (params != null && forksDone < forks) {
            finishFork(false);
        }
        params = null;
    }

    @Override
    public void startRun() {
        log.startRun();
    }

    @Override
    public void endRun(final Collection<RunResult> result) {
        log.endRun(result);
    }

    @Override
    public void print(final String s) {
        log.print(s);
    }

    @Override
    public void println(final String s) {
        log.println(s);
        final Matcher m = FORK.matcher(s);
        if (m.find()) {
            if (params != null && fork > forksDone) {
                finishFork(false); // the previous fork ended without its last measurement
            }
            fork = Integer.parseInt(m.group(1));
            scores.clear();
            return;
        }
        if (s.contains("<failure>")) {
            failing = true;
            return;
        }
        if (failing && failure == null && !s.isBlank()) {
            failure = s.strip().lines().findFirst().orElse(s.strip());
        }
    }

    @Override
    public void flush() {
        log.flush();
    }

    @Override
    public void close() {
        log.flush(); // the log outlives one Runner; the command closes it
    }

    @Override
    public void verbosePrintln(final String s) {
        log.verbosePrintln(s);
    }

    @Override
    public void write(final int b) {
        log.write(b);
    }

    @Override
    public void write(final byte[] b) throws IOException {
        log.write(b);
    }
}
