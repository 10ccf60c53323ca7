package dev.limbo.bench.timeline;

import dev.limbo.bench.suite.Csv;
import jdk.jfr.Recording;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The timeline family: one {@link TimedTrial} per scheme, each with a fresh allocator and domain,
 * written as {@code timeline.csv} and {@code timeline.json}; optionally recorded into one JFR file
 * with every Limbo event enabled.
 */
public final class Timelines {

    /**
     * @param structure     the structure every trial runs
     * @param threads       worker threads
     * @param warmup        unsampled run time before each trial's samples
     * @param duration      sampled run time of each trial
     * @param interval      sample interval
     * @param keyRange      key range (prefilled to half)
     * @param updatePercent updates (half inserts, half deletes)
     * @param schemes       scheme ids, one trial each
     * @param jfr           whether to record {@code timeline.jfr}
     * @param cacheBytes    the allocator's thread cache per size class, or 0 for its default
     *                      ({@link TimedTrial.Config#cacheBytes})
     * @param rounds        worker generations per trial ({@link TimedTrial.Config#rounds})
     * @param stalled       whether a stalled thread stays pinned through each trial
     *                      ({@link TimedTrial.Config#stalled})
     */
    public record Settings(TimedTrial.Structure structure, int threads, Duration warmup, Duration duration,
                           Duration interval,
                           int keyRange, int updatePercent, List<String> schemes, boolean jfr, long cacheBytes,
                           int rounds, boolean stalled) {
    }

    /** Told about each trial, on the calling thread. */
    public interface Listener {
        void started(String scheme, int index, int total);

        /** {@code result} is null when the trial failed with {@code failure}. */
        void finished(String scheme, TimedTrial.Result result, Throwable failure);
    }

    /**
     * @param results  the trials that completed, in order
     * @param failures scheme id to error message, for trials that failed
     * @param csv      the samples as CSV
     * @param json     trials and samples as JSON
     * @param jfr      the recording, or null
     */
    public record Outcome(List<TimedTrial.Result> results, Map<String, String> failures, Path csv, Path json, Path jfr) {
    }

    private Timelines() {
    }

    /** Runs every scheme's trial and writes the files into {@code dir}. */
    public static Outcome run(final Settings s, final Path dir, final Listener listener) throws IOException {
        Files.createDirectories(dir);
        final List<TimedTrial.Result> results = new ArrayList<>();
        final Map<String, String> failures = new LinkedHashMap<>();
        final Path jfrFile = s.jfr() ? dir.resolve("timeline.jfr") : null;
        final Recording recording = s.jfr() ? LimboEvents.newRecording() : null;
        if (recording != null) {
            recording.setDestination(jfrFile);
            recording.start();
        }
        try {
            int i = 0;
            for (final String scheme : s.schemes()) {
                listener.started(scheme, i++, s.schemes().size());
                final TimedTrial.Config c = new TimedTrial.Config(s.structure(), scheme, s.threads(), s.warmup(), s.duration(),
                        s.interval(), s.keyRange(), s.updatePercent(), 42, s.cacheBytes(), s.rounds(), s.stalled());
                final TrialEvent event = new TrialEvent();
                try {
                    final TimedTrial.Result r = TimedTrial.run(c, event::begin, () -> {
                        event.end();
                        if (event.shouldCommit()) {
                            event.scheme = scheme;
                            event.structure = s.structure().id();
                            event.threads = s.threads();
                            event.commit();
                        }
                    });
                    results.add(r);
                    listener.finished(scheme, r, null);
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                    failures.put(scheme, "interrupted");
                    listener.finished(scheme, null, e);
                    break;
                } catch (final RuntimeException | Error e) {
                    failures.put(scheme, String.valueOf(e));
                    listener.finished(scheme, null, e);
                }
            }
        } finally {
            if (recording != null) {
                recording.stop(); // writes the destination file
                recording.close();
            }
        }
        final Path csv = dir.resolve("timeline.csv");
        final Path json = dir.resolve("timeline.json");
        writeCsv(results, csv);
        writeJson(results, failures, json);
        return new Outcome(results, failures, csv, json, jfrFile);
    }

    /** One line per sample. */
    public static void writeCsv(final List<TimedTrial.Result> results, final Path file) throws IOException {
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(file))) {
            w.println(Csv.line("scheme", "structure", "threads", "seconds", "unreclaimed_nodes", "retired_nodes",
                    "committed_bytes", "bytes_in_use", "ops", "mops_per_s", "advances", "epochs_per_s"));
            for (final TimedTrial.Result r : results) {
                for (final TimedTrial.Sample p : r.samples()) {
                    w.println(Csv.line(r.config().scheme(), r.config().structure().id(), r.config().threads(),
                            p.seconds(), p.unreclaimed(), p.retired(), p.committedBytes(), p.bytesInUse(), p.ops(),
                            p.mopsPerSecond(), p.advances(), p.epochsPerSecond()));
                }
            }
        }
    }

    /** Trials with their settings, totals and samples (as arrays of columns). */
    public static void writeJson(final List<TimedTrial.Result> results, final Map<String, String> failures,
                                 final Path file) throws IOException {
        final StringBuilder b = new StringBuilder("{\n  \"trials\": [");
        for (int i = 0; i < results.size(); i++) {
            final TimedTrial.Result r = results.get(i);
            final TimedTrial.Config c = r.config();
            b.append(i == 0 ? "\n" : ",\n").append("    {");
            b.append(String.format(Locale.ROOT,
                    "\"scheme\": %s, \"structure\": %s, \"threads\": %d, \"keyRange\": %d, \"updatePercent\": %d, "
                            + "\"durationSeconds\": %s, \"sampleIntervalMillis\": %d, \"prefillSeconds\": %s, "
                            + "\"totalOps\": %d, \"mopsPerSecond\": %s, \"peakUnreclaimed\": %d, \"retired\": %d, "
                            + "\"freed\": %d, \"advances\": %d, \"epochsPerSecond\": %s, \"scans\": %d, "
                            + "\"cacheBytes\": %d, \"rounds\": %d, \"stalled\": %s,\n      \"samples\": {",
                    quote(c.scheme()), quote(c.structure().id()), c.threads(), c.keyRange(), c.updatePercent(),
                    Csv.line(r.seconds()), c.sampleInterval().toMillis(), Csv.line(r.prefillSeconds()), r.totalOps(),
                    Csv.line(r.mopsPerSecond()), r.peakUnreclaimed(), r.stats().retired(), r.stats().freed(),
                    r.stats().advances(), Csv.line(r.epochsPerSecond()), r.stats().scans(), c.cacheBytes(), c.rounds(),
                    c.stalled()));
            column(b, "seconds", r.samples().stream().map(p -> (Object) p.seconds()).toList(), true);
            column(b, "unreclaimed", r.samples().stream().map(p -> (Object) p.unreclaimed()).toList(), false);
            column(b, "committedBytes", r.samples().stream().map(p -> (Object) p.committedBytes()).toList(), false);
            column(b, "bytesInUse", r.samples().stream().map(p -> (Object) p.bytesInUse()).toList(), false);
            column(b, "mopsPerSecond", r.samples().stream().map(p -> (Object) p.mopsPerSecond()).toList(), false);
            column(b, "epochsPerSecond", r.samples().stream().map(p -> (Object) p.epochsPerSecond()).toList(), false);
            b.append("}}");
        }
        b.append("\n  ],\n  \"failures\": {");
        int j = 0;
        for (final Map.Entry<String, String> f : failures.entrySet()) {
            b.append(j++ == 0 ? "" : ", ").append(quote(f.getKey())).append(": ").append(quote(f.getValue()));
        }
        b.append("}\n}\n");
        Files.writeString(file, b);
    }

    private static void column(final StringBuilder b, final String name, final List<Object> values, final boolean first) {
        b.append(first ? "" : ",").append("\n        ").append(quote(name)).append(": [");
        for (int i = 0; i < values.size(); i++) {
            b.append(i == 0 ? "" : ", ").append(Csv.line(values.get(i)));
        }
        b.append(']');
    }

    /** A JSON string literal. */
    public static String quote(final String s) {
        final StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            final char ch = s.charAt(i);
            switch (ch) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (ch < 0x20) {
                        b.append(String.format(Locale.ROOT, "\\u%04x", (int) ch));
                    } else {
                        b.append(ch);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
