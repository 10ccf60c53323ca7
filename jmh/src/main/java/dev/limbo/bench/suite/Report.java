package dev.limbo.bench.suite;

import dev.limbo.bench.index.Contender;
import dev.limbo.bench.timeline.JfrTimeline;
import dev.limbo.bench.timeline.TimedTrial;
import dev.limbo.bench.timeline.Timelines;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** {@code report.md} and {@code results.csv}: the summary tables, the timed trials and the plots. */
public final class Report {

    /** JMH's GC profiler's heap bytes allocated per operation. */
    static final String GC_ALLOC_NORM = "gc.alloc.rate.norm";

    /** Descriptions of the families' sections. */
    private static final Map<Family, String> INTRO = Map.of(
            Family.ALLOC, "Allocate/free throughput of Limbo's allocator against glibc malloc, Netty's pooled "
                    + "allocator, a bump allocator that never frees and (full suite) one Arena per allocation. "
                    + "x = throughput divided by malloc's at the same thread count.",
            Family.RECLAIM, "The base cost of a guard (pin, protect one pointer, unpin) per reclamation scheme. "
                    + "x = throughput divided by `none`'s (no reclamation) at the same thread count.",
            Family.STRUCTURES, "Lock-free structures over each scheme, and `jdk`: the on-heap JDK counterpart "
                    + "(ConcurrentLinkedQueue, ConcurrentSkipListMap, ConcurrentHashMap) with boxed longs. "
                    + "x = throughput divided by `none`'s at the same thread count.",
            Family.INDEX, indexIntro(),
            Family.STAMP_IT, "Stamp-it's four benchmarks (the Stamp-it report §4.1) at one thread, in nanoseconds "
                    + "per operation (lower is better): GuardPtr (100 guards, each its own section), Queue, List with "
                    + "0 % and 100 % updates (10 elements, 100 operations per region) and the HashMap cache. "
                    + "x = time divided by `none`'s. The first table is the shape of the report's Fig. 5.",
            Family.CDRC, "The CDRC paper's benchmarks (PLDI '21 §7): load/store on an array of counted fields "
                    + "(`heap`: AtomicReferenceArray + GC), the stack, list, hash map and Natarajan-Mittal tree over "
                    + "CDRC with snapshots (`cdrc`), with counted loads only (`cdrc-rc`) and the manual structures "
                    + "over `ebr`, `hp` and `none`. x = throughput divided by `cdrc`'s at the same thread count; "
                    + "the space overhead (nodes removed but not yet freed) follows each table.");

    /**
     * Gauges (auxiliary counters read once per iteration) tabled under a group that has them, with
     * their captions: the structures' unreclaimed nodes, the allocators' committed memory.
     */
    private static final List<Map.Entry<String, String>> GAUGE_TABLES = List.of(
            Map.entry("unreclaimedNodes", "Unreclaimed nodes at the end of an iteration (mean)"),
            Map.entry("committedMiB", "MiB committed by Limbo's page allocator at the end of an iteration (mean)"),
            Map.entry("peakCommittedMiB", "Most MiB Limbo's page allocator had committed at once, by the end of an "
                    + "iteration (mean)"),
            Map.entry("afterTrimPercentOfPeak", "Committed after freeing everything and trimming, in % of the "
                    + "invocation's peak (mean over iterations of each iteration's worst)"));
    /** The gauges in {@code results.csv}: column, counter. */
    private static final List<Map.Entry<String, String>> GAUGE_COLUMNS = List.of(
            Map.entry("unreclaimed_nodes", "unreclaimedNodes"),
            Map.entry("off_heap_bytes", "offHeapBytes"),
            Map.entry("committed_mib", "committedMiB"),
            Map.entry("peak_committed_mib", "peakCommittedMiB"),
            Map.entry("after_trim_percent_of_peak", "afterTrimPercentOfPeak"),
            Map.entry("heap_bytes_per_op", GC_ALLOC_NORM),
            Map.entry("gc_pause_ms", "gcPauseMs"),
            Map.entry("heap_bytes_per_entry", "heapBytesPerEntry"),
            Map.entry("off_heap_bytes_per_entry", "offHeapBytesPerEntry"),
            Map.entry("bytes_per_entry", "bytesPerEntry"));

    /**
     * What the report shows.
     *
     * @param spec          the suite
     * @param command       the command line
     * @param started       when the suite started (ISO text)
     * @param seconds       how long it ran
     * @param machine       a line about the machine and JDK
     * @param groups        the JMH summary groups
     * @param throughput    each group's plot file name (relative), if drawn
     * @param allocPlot     the allocator comparison's file name, or null
     * @param timeline      the timed trials, or null if the family did not run
     * @param timelinePlots the timeline plots' file names
     * @param jfr           the recording's Limbo events, or null
     * @param jfrPlots      the JFR timeline file names, one per trial
     * @param failures      failed forks and trials
     * @param notes         other remarks (e.g. why plots are missing)
     * @param files         every file in the results directory, relative
     */
    public record Data(SuiteSpec spec, String command, String started, double seconds, String machine,
                       List<Summary.Group> groups, Map<Summary.Group, String> throughput, String allocPlot,
                       Timelines.Outcome timeline, List<String> timelinePlots, JfrTimeline.Recording jfr,
                       List<String> jfrPlots, List<String> failures, List<String> notes, List<String> files) {
    }

    private Report() {
    }

    /** The report as markdown. */
    public static String markdown(final Data d) {
        final StringBuilder b = new StringBuilder();
        final SuiteSpec s = d.spec();
        b.append("# Limbo benchmarks: ").append(s.name()).append(" suite\n\n");
        b.append("- started: ").append(d.started()).append(", measured for ").append(Progress.clock(d.seconds()))
                .append('\n');
        b.append("- command: `").append(d.command()).append("`\n");
        b.append("- machine: ").append(d.machine()).append('\n');
        b.append(String.format(Locale.ROOT,
                "- JMH: %d forks x (%d x %d ms warmup + %d x %d ms measured iterations), threads %s; score = mean over "
                        + "all measured iterations of all forks, ± = JMH's 99.9%% confidence half-width%n",
                s.forks(), s.warmupIterations(), s.warmupTime().toMillis(), s.iterations(), s.iterationTime().toMillis(),
                s.threads()));
        b.append("- raw data: [`jmh-result.json`](jmh-result.json) (JMH JSON), [`results.csv`](results.csv), "
                + "[`jmh.log`](jmh.log) (JMH's full log)");
        if (d.timeline() != null) {
            b.append(", [`timeline.csv`](timeline.csv), [`timeline.json`](timeline.json)");
            if (d.timeline().jfr() != null) {
                b.append(", [`timeline.jfr`](timeline.jfr)");
            }
        }
        b.append("\n\n");
        if (!d.failures().isEmpty()) {
            b.append("**Failures** (").append(d.failures().size()).append("; details in `jmh.log`):\n\n");
            for (final String f : d.failures()) {
                b.append("- ").append(f).append('\n');
            }
            b.append('\n');
        }
        for (final String n : d.notes()) {
            b.append("> ").append(n).append("\n\n");
        }
        for (final Family f : Family.values()) {
            final List<Summary.Group> gs = d.groups().stream().filter(g -> g.family() == f).toList();
            if (gs.isEmpty()) {
                continue;
            }
            b.append("## ").append(title(f)).append("\n\n").append(INTRO.getOrDefault(f, "")).append("\n\n");
            if (f == Family.STAMP_IT) {
                baseCosts(b, gs);
            }
            for (final Summary.Group g : gs) {
                b.append("### ").append(g.title()).append(" (").append(g.unit()).append(")\n\n");
                b.append(Summary.markdown(g)).append('\n');
                for (final Map.Entry<String, String> gauge : GAUGE_TABLES) {
                    if (g.hasSecondary(gauge.getKey())) {
                        b.append(gauge.getValue()).append(":\n\n");
                        b.append(Summary.markdownSecondary(g, gauge.getKey())).append('\n');
                    }
                }
                if (f == Family.INDEX) {
                    indexCosts(b, g);
                }
                final String plot = d.throughput().get(g);
                if (plot != null) {
                    b.append("![").append(g.title()).append("](").append(plot).append(")\n\n");
                }
            }
            if (f == Family.ALLOC && d.allocPlot() != null) {
                b.append("### Allocator comparison\n\n![Allocator comparison](").append(d.allocPlot()).append(")\n\n");
            }
        }
        others(b, d);
        if (d.timeline() != null) {
            timeline(b, d);
        }
        b.append("## Files\n\n");
        for (final String f : d.files()) {
            b.append("- [`").append(f).append("`](").append(f).append(")\n");
        }
        return b.toString();
    }

    /**
     * Stamp-it's Fig. 5 as a table: one row per scheme, one column per benchmark, the score at one
     * thread; under it, the slowest scheme of each benchmark.
     */
    private static void baseCosts(final StringBuilder b, final List<Summary.Group> gs) {
        final List<String> schemes = gs.stream().flatMap(g -> g.subjects().stream()).distinct().toList();
        b.append("### Base costs at one thread (").append(gs.get(0).unit()).append(")\n\n| scheme |");
        gs.forEach(g -> b.append(' ').append(g.title()).append(" |"));
        b.append("\n|---|");
        gs.forEach(g -> b.append("---:|"));
        b.append('\n');
        for (final String scheme : schemes) {
            b.append("| ").append(scheme).append(" |");
            for (final Summary.Group g : gs) {
                final Measurement m = g.cell(scheme, 1);
                b.append(m == null ? " - |" : String.format(Locale.ROOT, " %.1f ± %.1f |", m.score(), m.error()));
            }
            b.append('\n');
        }
        b.append("\nSlowest:");
        for (final Summary.Group g : gs) {
            g.subjects().stream().filter(x -> g.cell(x, 1) != null)
                    .max(Comparator.comparingDouble(x -> g.cell(x, 1).score()))
                    .ifPresent(x -> b.append(' ').append(g.title()).append(": `").append(x).append("`;"));
        }
        b.append("\n\n");
    }

    /** The index section's introduction: the mixes, the ratios and each contender's library, version and settings. */
    static String indexIntro() {
        final StringBuilder b = new StringBuilder("`IndexBench`: keys drawn uniformly from [0, keys), the map "
                + "prefilled with keys / 2 of them; mixes `50i50d` (50 % put, 50 % remove), `read90` (90 % get, 5 % "
                + "put, 5 % remove), `read100` (get only) and `scan100` (90 % scans of 100 entries from a random key, "
                + "10 % updates; ordered contenders only). x = throughput divided by `cslm`'s (ordered contenders) or "
                + "`chm`'s (hashed ones) at the same thread count. Limbo's forks run with a heap of "
                + String.join(" ", Planner.LIMBO_HEAP) + ", the others' with 4 GiB. The contenders:\n");
        for (final Contender.Library l : Contender.Library.values()) {
            b.append("\n- `").append(l.id()).append("`: ").append(l.title()).append(l.ordered() ? " (ordered)" : " (hashed)")
                    .append("; ").append(l.settings());
        }
        return b.toString();
    }

    /**
     * Under an index table: each contender's heap bytes per operation (JMH's GC profiler), GC pause
     * time over the whole run (all measured iterations of all forks) and the memory per entry its
     * prefill measured, at the most threads it ran.
     */
    private static void indexCosts(final StringBuilder b, final Summary.Group g) {
        b.append("Heap allocation, GC pauses and memory per entry (measured after the prefill), at each contender's "
                + "most threads:\n\n| contender | threads | heap B/op | GC pause ms (run) | heap B/entry "
                + "| off-heap B/entry | B/entry |\n|---|---:|---:|---:|---:|---:|---:|\n");
        for (final String s : g.subjects()) {
            final int t = g.threads().stream().filter(x -> g.cell(s, x) != null).mapToInt(Integer::intValue).max()
                    .orElse(0);
            final Measurement m = g.cell(s, t);
            if (m == null) {
                continue;
            }
            final Double pause = m.secondary().get("gcPauseMs");
            b.append("| ").append(s).append(" | ").append(t).append(" | ").append(secondary(m, GC_ALLOC_NORM))
                    .append(" | ").append(pause == null ? "-" : Summary.number(pause * m.samples()))
                    .append(" | ").append(secondary(m, "heapBytesPerEntry"))
                    .append(" | ").append(secondary(m, "offHeapBytesPerEntry"))
                    .append(" | ").append(secondary(m, "bytesPerEntry")).append(" |\n");
        }
        b.append('\n');
    }

    private static String secondary(final Measurement m, final String name) {
        final Double v = m.secondary().get(name);
        return v == null ? "-" : Summary.number(v);
    }

    private static void others(final StringBuilder b, final Data d) {
        final List<Summary.Group> gs = d.groups().stream().filter(g -> g.family() == null).toList();
        if (gs.isEmpty()) {
            return;
        }
        b.append("## Other benchmarks\n\n");
        for (final Summary.Group g : gs) {
            b.append("### ").append(g.title()).append(" (").append(g.unit()).append(")\n\n")
                    .append(Summary.markdown(g)).append('\n');
        }
    }

    private static String title(final Family f) {
        return switch (f) {
            case ALLOC -> "Allocators";
            case RECLAIM -> "Reclamation schemes";
            case STRUCTURES -> "Structures";
            case INDEX -> "Off-heap index";
            case TIMELINE -> "Garbage over time";
            case STAMP_IT -> "Stamp-it's benchmarks";
            case CDRC -> "CDRC (deferred reference counting)";
        };
    }

    private static void timeline(final StringBuilder b, final Data d) {
        final Timelines.Outcome o = d.timeline();
        b.append("## Garbage over time (timed trials)\n\n");
        if (!o.results().isEmpty()) {
            final TimedTrial.Config c = o.results().get(0).config();
            b.append(String.format(Locale.ROOT, "Setbench-style timed trials: a %s prefilled to %d of %d keys, "
                            + "%d threads, %d%% updates (half insert, half delete); per scheme %.1f s unsampled warmup (JIT), "
                            + "then %.1f s sampled every %d ms (time 0 = end of warmup); a fresh allocator and domain "
                            + "per scheme, all in the bench command's JVM%s.%n%n", c.structure().id(),
                    c.keyRange() / 2, c.keyRange(), c.threads(), c.updatePercent(), c.warmup().toMillis() / 1000.0,
                    c.duration().toMillis() / 1000.0, c.sampleInterval().toMillis(), c.cacheBytes() == 0 ? ""
                            : String.format(Locale.ROOT, "; stressed: the allocator's thread cache holds %d bytes "
                            + "per size class (at least 8 blocks)", c.cacheBytes())));
            if (c.rounds() > 1) {
                b.append(String.format(Locale.ROOT, "The sampled run is cut into %d rounds, each run by fresh worker "
                        + "threads that start when the previous round's have ended (the sample at each round's end is "
                        + "taken after its threads have ended: what departed threads left unreclaimed).%n%n",
                        c.rounds()));
            }
            if (c.stalled()) {
                b.append("A stalled thread pinned each domain before its workers started and stayed pinned, idle, "
                        + "until the sampled run ended: a robust scheme's unreclaimed count stays flat, the others' "
                        + "grows.\n\n");
            }
            b.append("The columns of the Token-EBR paper's Table 4: throughput, epochs per second (epoch advances; "
                    + "token rounds for Token-EBR), the longest batch free (from the JFR recording, when there "
                    + "is one) and the peak of unreclaimed nodes.\n\n");
            b.append("| scheme | Mops/s | epochs/s | longest batch free (ms) | peak unreclaimed | unreclaimed at end "
                    + "| retired | freed | scans |\n");
            b.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
            for (final TimedTrial.Result r : o.results()) {
                final List<TimedTrial.Sample> samples = r.samples();
                b.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %d | %d | %d | %d | %d |%n",
                        r.config().scheme(), Summary.number(r.mopsPerSecond()), Summary.number(r.epochsPerSecond()),
                        longestBatchFree(d.jfr(), r.config().scheme()), r.peakUnreclaimed(),
                        samples.isEmpty() ? 0 : samples.get(samples.size() - 1).unreclaimed(), r.stats().retired(),
                        r.stats().freed(), r.stats().scans()));
            }
            b.append('\n');
        }
        for (final Map.Entry<String, String> f : o.failures().entrySet()) {
            b.append("- **").append(f.getKey()).append(" failed**: ").append(f.getValue()).append('\n');
        }
        if (!o.failures().isEmpty()) {
            b.append('\n');
        }
        for (final String p : d.timelinePlots()) {
            b.append("![").append(p).append("](").append(p).append(")\n\n");
        }
        if (d.jfr() != null) {
            b.append("### JFR timelines\n\n");
            b.append("Recorded into `timeline.jfr` with every `dev.limbo.*` event enabled (so these trials ran "
                    + "with JFR on). One row per thread; a box per reclamation batch (its duration; boxes shorter "
                    + "than a pixel are drawn 1.5 px wide), hazard scan or allocator cache flush, a diamond per "
                    + "epoch advance, a triangle per token pass and a cross per neutralization (Token-EBR Fig. 2). "
                    + "Re-render with `./limbo bench jfr-timeline <dir>/timeline.jfr`.\n\n");
            b.append("| trial | reclamation batches | deferred batches | hazard scans | cache flushes | epoch advances "
                    + "| token passes | neutralizations |\n");
            b.append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
            for (final JfrTimeline.Window w : d.jfr().windows()) {
                final JfrTimeline.Recording r = d.jfr();
                b.append(String.format(Locale.ROOT, "| %s | %d | %d | %d | %d | %d | %d | %d |%n", w.title(),
                        r.count(JfrTimeline.Kind.RECLAMATION, w), r.count(JfrTimeline.Kind.DEFERRED, w),
                        r.count(JfrTimeline.Kind.HAZARD_SCAN, w), r.count(JfrTimeline.Kind.CACHE_FLUSH, w),
                        r.count(JfrTimeline.Kind.EPOCH_ADVANCE, w), r.count(JfrTimeline.Kind.TOKEN_PASS, w),
                        r.count(JfrTimeline.Kind.NEUTRALIZATION, w)));
            }
            b.append('\n');
            for (final String p : d.jfrPlots()) {
                b.append("![").append(p).append("](").append(p).append(")\n\n");
            }
        }
    }

    /**
     * The longest reclamation batch of the trial of {@code scheme} in {@code jfr}, in milliseconds,
     * or a dash without a recording of it.
     */
    private static String longestBatchFree(final JfrTimeline.Recording jfr, final String scheme) {
        if (jfr == null) {
            return "-";
        }
        return jfr.windows().stream().filter(w -> w.slug().equals(Charts.slug(scheme))).findFirst()
                .map(w -> String.format(Locale.ROOT, "%.3f", jfr.longest(JfrTimeline.Kind.RECLAMATION, w) / 1e6))
                .orElse("-");
    }

    /** One line per measurement, with the ratio to the group's baseline. */
    public static void writeCsv(final List<Summary.Group> groups, final Path file) throws IOException {
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(file))) {
            final List<Object> header = new ArrayList<>(List.of("family", "benchmark", "params", "subject", "threads",
                    "score", "error", "unit", "samples", "baseline", "ratio"));
            GAUGE_COLUMNS.forEach(c -> header.add(c.getKey()));
            w.println(Csv.line(header));
            for (final Summary.Group g : groups) {
                for (final String s : g.subjects()) {
                    for (final int t : g.threads()) {
                        final Measurement m = g.cell(s, t);
                        if (m == null) {
                            continue;
                        }
                        final List<String> fixed = new ArrayList<>();
                        g.fixed().forEach((k, v) -> fixed.add(k + "=" + v));
                        final List<Object> row = new ArrayList<>(List.of(g.family() == null ? "" : g.family().id(),
                                m.shortName(), String.join(" ", fixed), s, t, m.score(), m.error(), m.unit(),
                                m.samples()));
                        row.add(g.baseline()); // may be null: not in List.of
                        row.add(g.ratio(s, t));
                        GAUGE_COLUMNS.forEach(c -> row.add(m.secondary().get(c.getValue())));
                        w.println(Csv.line(row));
                    }
                }
            }
        }
    }

    /** Plot file names by group, for groups whose plot was drawn. */
    public static Map<Summary.Group, String> names(final Map<Summary.Group, Path> files) {
        final Map<Summary.Group, String> m = new LinkedHashMap<>();
        files.forEach((g, p) -> m.put(g, p.getFileName().toString()));
        return m;
    }
}
