package dev.limbo.bench.suite;

import dev.limbo.bench.timeline.TimedTrial;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/** The report's PNG plots. */
public final class Plots {

    private Plots() {
    }

    /** The file a group's throughput-vs-threads plot goes to. */
    public static String throughputFile(final Summary.Group g) {
        return "throughput-" + (g.family() == null ? "other" : g.family().id()) + "-" + Charts.slug(g.title()) + ".png";
    }

    /** Throughput against threads, one series per scheme or allocator, with JMH's error as bars. */
    public static Path throughput(final Summary.Group g, final Path dir) throws IOException {
        final XYChart chart = Charts.xy(g.title(), "threads", "throughput (" + g.unit() + ")");
        final int maxThreads = g.threads().stream().mapToInt(Integer::intValue).max().orElse(1);
        chart.getStyler().setXAxisMin(0.0);
        chart.getStyler().setXAxisMax(maxThreads + Math.max(0.5, maxThreads * 0.05));
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setxAxisTickLabelsFormattingFunction(
                v -> Math.abs(v - Math.rint(v)) < 1e-9 ? Long.toString(Math.round(v)) : "");
        for (final String s : g.subjects()) {
            final List<Double> x = new ArrayList<>();
            final List<Double> y = new ArrayList<>();
            final List<Double> e = new ArrayList<>();
            for (final int t : g.threads()) {
                final Measurement m = g.cell(s, t);
                if (m != null) {
                    x.add((double) t);
                    y.add(m.score());
                    e.add(Double.isFinite(m.error()) ? m.error() : 0.0);
                }
            }
            if (!x.isEmpty()) {
                chart.addSeries(s.isEmpty() ? "score" : s, x, y, e);
            }
        }
        final Path file = dir.resolve(throughputFile(g));
        Charts.save(chart, file);
        return file;
    }

    /**
     * The allocator comparison: each allocator's throughput divided by malloc's, per allocator
     * benchmark and thread count; null if no allocator group had malloc.
     */
    public static Path allocComparison(final List<Summary.Group> groups, final Path dir) throws IOException {
        final List<String> categories = new ArrayList<>();
        final Map<String, List<Double>> series = new LinkedHashMap<>();
        final List<Summary.Group> alloc = groups.stream()
                .filter(g -> g.family() == Family.ALLOC && g.baseline() != null).toList();
        if (alloc.isEmpty()) {
            return null;
        }
        for (final Summary.Group g : alloc) {
            for (final String s : g.subjects()) {
                series.putIfAbsent(s, new ArrayList<>());
            }
        }
        for (final Summary.Group g : alloc) {
            for (final int t : g.threads()) {
                categories.add(String.format(Locale.ROOT, "%s t=%d", JmhProgress.shortName(g.benchmark()), t));
                for (final Map.Entry<String, List<Double>> e : series.entrySet()) {
                    final double r = g.ratio(e.getKey(), t);
                    e.getValue().add(Double.isNaN(r) ? 0.0 : r);
                }
            }
        }
        final CategoryChart chart = Charts.bars("Allocators: throughput relative to malloc", "benchmark, threads",
                "throughput / malloc's");
        for (final Map.Entry<String, List<Double>> e : series.entrySet()) {
            chart.addSeries(e.getKey(), categories, e.getValue());
        }
        final Path file = dir.resolve("alloc-comparison.png");
        Charts.save(chart, file);
        return file;
    }

    /**
     * Unreclaimed nodes over time, one series per scheme (Token-EBR Figs. 4-9, Stamp-it Fig. 9); below,
     * the same without the baseline {@code none}, whose leak would flatten the others.
     */
    public static Path garbage(final List<TimedTrial.Result> results, final Path dir) throws IOException {
        final Path file = dir.resolve("garbage-over-time.png");
        final String title = "Unreclaimed nodes over time";
        final XYChart all = timelineChart(results, title, "unreclaimed nodes", p -> p.unreclaimed(), "#,##0");
        final String baseline = Family.TIMELINE.baseline();
        final List<TimedTrial.Result> reclaiming = results.stream()
                .filter(r -> !r.config().scheme().equals(baseline)).toList();
        if (all == null) {
            return null;
        }
        if (reclaiming.isEmpty() || reclaiming.size() == results.size()) {
            Charts.save(all, file);
            return file;
        }
        final XYChart some = timelineChart(reclaiming, title + " without " + baseline, "unreclaimed nodes",
                p -> p.unreclaimed(), "#,##0");
        Charts.save(List.of(all, some), file);
        return file;
    }

    /** Committed off-heap memory over time. */
    public static Path committed(final List<TimedTrial.Result> results, final Path dir) throws IOException {
        return timeline(results, dir.resolve("committed-over-time.png"), "Committed off-heap memory over time",
                "committed (MiB)", p -> p.committedBytes() / 1048576.0, "#,##0");
    }

    /** Throughput over time. */
    public static Path throughputOverTime(final List<TimedTrial.Result> results, final Path dir) throws IOException {
        return timeline(results, dir.resolve("throughput-over-time.png"), "Throughput over time",
                "throughput (Mops/s)", p -> p.mopsPerSecond(), null);
    }

    /**
     * Epoch advances (token rounds) per second over time: the Token-EBR paper's pile-up shows as a
     * rate that falls over the trial (its Figs. 5-8), amortized free as one that holds (Fig. 9).
     */
    public static Path epochsOverTime(final List<TimedTrial.Result> results, final Path dir) throws IOException {
        return timeline(results, dir.resolve("epochs-over-time.png"), "Epochs per second over time",
                "epochs per second", p -> p.epochsPerSecond(), "#,##0");
    }

    private static Path timeline(final List<TimedTrial.Result> results, final Path file, final String title,
                                 final String yTitle, final ToDoubleFunction<TimedTrial.Sample> y, final String pattern)
            throws IOException {
        final XYChart chart = timelineChart(results, title, yTitle, y, pattern);
        if (chart == null) {
            return null;
        }
        Charts.save(chart, file);
        return file;
    }

    private static XYChart timelineChart(final List<TimedTrial.Result> results, final String title,
                                         final String yTitle, final ToDoubleFunction<TimedTrial.Sample> y,
                                         final String pattern) {
        if (results.isEmpty()) {
            return null;
        }
        final TimedTrial.Config c = results.get(0).config();
        final XYChart chart = Charts.xy(String.format(Locale.ROOT, "%s (%s, %d threads, keys %d, %d%% updates)", title,
                c.structure().id(), c.threads(), c.keyRange(), c.updatePercent()), "time (s)", yTitle);
        chart.getStyler().setYAxisMin(0.0);
        if (pattern != null) {
            chart.getStyler().setYAxisDecimalPattern(pattern);
        }
        for (final TimedTrial.Result r : results) {
            final List<TimedTrial.Sample> samples = r.config() == null ? List.of() : r.samples();
            final List<Double> xs = new ArrayList<>();
            final List<Double> ys = new ArrayList<>();
            for (int i = 0; i < samples.size(); i++) {
                if (i == 0 && (yTitle.startsWith("throughput") || yTitle.startsWith("epochs"))) {
                    continue; // no interval before the first sample
                }
                xs.add(samples.get(i).seconds());
                ys.add(y.applyAsDouble(samples.get(i)));
            }
            if (xs.isEmpty()) {
                continue;
            }
            final XYSeries s = chart.addSeries(r.config().scheme(), xs, ys);
            s.setMarker(SeriesMarkers.NONE);
        }
        return chart;
    }
}
