package dev.limbo.bench.timeline;

import dev.limbo.allocator.internal.CacheFlushEvent;
import dev.limbo.bench.suite.Charts;
import dev.limbo.reclaim.internal.EpochAdvanceEvent;
import dev.limbo.reclaim.internal.HazardScanEvent;
import dev.limbo.reclaim.internal.NeutralizationEvent;
import dev.limbo.reclaim.internal.ReclamationEvent;
import dev.limbo.reclaim.internal.TokenPassEvent;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * Turns a JFR recording with Limbo's events into timelines like the Token-EBR paper's Fig. 2: one
 * row per thread, a box per reclamation batch, hazard scan or cache flush (as long as it took), a
 * marker per epoch advance, token pass and neutralization. A recording made by the bench command's timeline family holds
 * {@code dev.limbo.Trial} events; each trial gets its own timeline. Any other recording gets one
 * timeline over its whole span.
 */
public final class JfrTimeline {

    /** What a row shows. */
    public enum Kind {
        RECLAMATION("reclamation batch", new Color(0x0072B2), 0.0, false),
        DEFERRED("batch queued for amortized free", new Color(0x56B4E9), 0.0, false),
        HAZARD_SCAN("hazard scan", new Color(0xD55E00), 0.22, false),
        CACHE_FLUSH("allocator cache flush", new Color(0x009E73), -0.22, false),
        EPOCH_ADVANCE("epoch advance", new Color(0xCC79A7), 0.36, true),
        TOKEN_PASS("token pass (by the passer)", new Color(0xE69F00), 0.36, true),
        NEUTRALIZATION("neutralization (by the scanner)", new Color(0x000000), -0.36, true);

        final String label;
        final Color color;
        final double offset;
        /** Whether the kind is a point in time (a marker) rather than a box. */
        final boolean instant;

        Kind(final String label, final Color color, final double offset, final boolean instant) {
            this.label = label;
            this.color = color;
            this.offset = offset;
            this.instant = instant;
        }
    }

    /** One event: times in nanoseconds since the epoch; {@code end == start} for an instant. */
    public record Span(Kind kind, String thread, long start, long end) {
    }

    /** A part of the recording to draw: a trial, or the whole recording. */
    public record Window(String title, String slug, long start, long end) {
    }

    /** What a recording holds. */
    public record Recording(List<Span> spans, List<Window> windows) {
        /** Events of {@code kind} inside {@code w}. */
        public long count(final Kind kind, final Window w) {
            return spans.stream().filter(s -> s.kind == kind && s.start >= w.start && s.start <= w.end).count();
        }

        /** The longest event of {@code kind} that began inside {@code w}, in nanoseconds (0 if none). */
        public long longest(final Kind kind, final Window w) {
            return spans.stream().filter(s -> s.kind == kind && s.start >= w.start && s.start <= w.end)
                    .mapToLong(s -> s.end - s.start).max().orElse(0);
        }
    }

    private JfrTimeline() {
    }

    /** Reads the Limbo events and trials of {@code file}. */
    public static Recording read(final Path file) throws IOException {
        if (!Files.isRegularFile(file)) {
            throw new NoSuchFileException(file.toString(), null, "no such recording");
        }
        final List<Span> spans = new ArrayList<>();
        final List<Window> windows = new ArrayList<>();
        long first = Long.MAX_VALUE;
        long last = Long.MIN_VALUE;
        try (RecordingFile f = new RecordingFile(file)) {
            while (f.hasMoreEvents()) {
                final RecordedEvent e = f.readEvent();
                final String name = e.getEventType().getName();
                final long start = nanos(e.getStartTime());
                final long end = nanos(e.getEndTime());
                if (name.equals(TrialEvent.NAME)) {
                    final String scheme = e.getString("scheme");
                    final String title = String.format(Locale.ROOT, "%s, %s, %d threads", scheme,
                            e.getString("structure"), e.getInt("threads"));
                    windows.add(new Window(title, Charts.slug(scheme), start, end));
                    continue;
                }
                final Kind kind = switch (name) {
                    case ReclamationEvent.NAME -> e.getBoolean("deferred") ? Kind.DEFERRED : Kind.RECLAMATION;
                    case HazardScanEvent.NAME -> Kind.HAZARD_SCAN;
                    case CacheFlushEvent.NAME -> Kind.CACHE_FLUSH;
                    case EpochAdvanceEvent.NAME -> Kind.EPOCH_ADVANCE;
                    case TokenPassEvent.NAME -> Kind.TOKEN_PASS;
                    case NeutralizationEvent.NAME -> Kind.NEUTRALIZATION;
                    default -> null;
                };
                if (kind == null) {
                    continue;
                }
                spans.add(new Span(kind, threadName(e), start, kind.instant ? start : end));
                first = Math.min(first, start);
                last = Math.max(last, end);
            }
        }
        windows.sort((a, b) -> Long.compare(a.start, b.start));
        if (windows.isEmpty() && !spans.isEmpty()) {
            windows.add(new Window("whole recording", "all", first, last));
        }
        return new Recording(spans, windows);
    }

    private static long nanos(final Instant t) {
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    private static String threadName(final RecordedEvent e) {
        final RecordedThread t = e.getThread();
        if (t == null) {
            return "?";
        }
        final String name = t.getJavaName() != null ? t.getJavaName() : t.getOSName();
        return name != null ? name : "thread " + t.getJavaThreadId();
    }

    /**
     * Draws each window of {@code recording} into {@code outDir} as {@code prefix-<slug>.png}: the
     * whole window on top and, when {@code zoomMillis > 0} and the window is longer, its middle
     * {@code zoomMillis} below, where single events can be told apart. Returns the files written.
     */
    public static List<Path> render(final Recording recording, final Path outDir, final String prefix,
                                    final double zoomMillis) throws IOException {
        final List<Path> files = new ArrayList<>();
        for (final Window w : recording.windows()) {
            final XYChart chart = chart(recording.spans(), w);
            if (chart == null) {
                continue;
            }
            final Path file = outDir.resolve(prefix + "-" + w.slug() + ".png");
            final long zoom = Math.round(zoomMillis * 1e6);
            if (zoom > 0 && w.end() - w.start() > 2 * zoom) {
                final long mid = w.start() + (w.end() - w.start()) / 2;
                final Window z = new Window(String.format(Locale.ROOT, "%s, %.0f ms from %.0f ms", w.title(),
                        zoomMillis, (mid - w.start()) / 1e6), w.slug(), mid, mid + zoom);
                final XYChart zoomed = chart(recording.spans(), z);
                if (zoomed != null) {
                    Charts.save(List.of(chart, zoomed), file);
                    files.add(file);
                    continue;
                }
            }
            Charts.save(chart, file);
            files.add(file);
        }
        return files;
    }

    /** The timeline of {@code w}, or null if no event falls into it. */
    static XYChart chart(final List<Span> all, final Window w) {
        final List<Span> spans = all.stream().filter(s -> s.end >= w.start && s.start <= w.end).toList();
        if (spans.isEmpty()) {
            return null;
        }
        final List<String> threads = new ArrayList<>(new TreeSet<>(spans.stream().map(Span::thread).toList()));
        final Map<String, Integer> row = new LinkedHashMap<>();
        for (int i = 0; i < threads.size(); i++) {
            row.put(threads.get(i), i);
        }
        final double spanMs = Math.max(1e-3, (w.end - w.start) / 1e6);
        final int width = 1100;
        final int height = Math.max(320, 140 + 60 * threads.size());
        // Boxes shorter than a pixel would vanish: draw them at least ~1.5 px wide (noted in the legend).
        final double minMs = spanMs / (width - 250) * 1.5;
        final StringBuilder counts = new StringBuilder();
        final XYChart chart = Charts.xy("JFR timeline: " + w.title(), "time since start (ms)", "thread", width, height);
        chart.getStyler().setYAxisMin(-0.6);
        chart.getStyler().setYAxisMax(threads.size() - 0.4);
        chart.getStyler().setXAxisMin(0.0);
        chart.getStyler().setXAxisMax(spanMs);
        // Rows are labelled by thread; other ticks get distinct blank labels (XChart drops all labels
        // of an axis whose labels repeat).
        final Map<Double, String> blanks = new HashMap<>();
        chart.getStyler().setyAxisTickLabelsFormattingFunction(v -> {
            final long r = Math.round(v);
            if (Math.abs(v - r) < 1e-6 && r >= 0 && r < threads.size()) {
                return shortName(threads.get((int) r));
            }
            return blanks.computeIfAbsent(v, k -> " ".repeat(blanks.size() + 1));
        });
        chart.getStyler().setYAxisTickMarkSpacingHint(Math.max(20, (height - 140) / Math.max(1, threads.size()) - 5));
        for (final Kind kind : Kind.values()) {
            final List<Double> xs = new ArrayList<>();
            final List<Double> ys = new ArrayList<>();
            int n = 0;
            for (final Span s : spans) {
                if (s.kind != kind) {
                    continue;
                }
                n++;
                final double y = row.get(s.thread) + kind.offset;
                final double x0 = (s.start - w.start) / 1e6;
                if (kind.instant) {
                    xs.add(x0);
                    ys.add(y);
                    continue;
                }
                final double x1 = Math.max((s.end - w.start) / 1e6, x0 + minMs);
                xs.add(x0);
                ys.add(y);
                xs.add(x1);
                ys.add(y);
                xs.add(x1);
                ys.add(Double.NaN); // a gap: one segment per event
            }
            if (n == 0) {
                continue;
            }
            counts.append(String.format(Locale.ROOT, "%s%d %s", counts.isEmpty() ? "" : ", ", n, kind.label));
            final XYSeries series = chart.addSeries(String.format(Locale.ROOT, "%s (%d)", kind.label, n), xs, ys);
            series.setLineColor(kind.color);
            series.setMarkerColor(kind.color);
            if (kind.instant) {
                series.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
                series.setMarker(switch (kind) {
                    case EPOCH_ADVANCE -> SeriesMarkers.DIAMOND;
                    case TOKEN_PASS -> SeriesMarkers.TRIANGLE_UP;
                    default -> SeriesMarkers.CROSS;
                });
            } else {
                series.setMarker(SeriesMarkers.NONE);
                series.setLineStyle(new BasicStroke(kind == Kind.RECLAMATION || kind == Kind.DEFERRED ? 14f : 9f,
                        BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER));
            }
        }
        chart.getStyler().setMarkerSize(7);
        return chart;
    }

    /** {@code limbo-trial-debra-3} becomes {@code worker 3}; other names stay (shortened). */
    static String shortName(final String thread) {
        final int dash = thread.lastIndexOf('-');
        if (thread.startsWith("limbo-trial-") && dash > 0) {
            return "worker " + thread.substring(dash + 1);
        }
        return thread.length() > 18 ? thread.substring(0, 16) + ".." : thread;
    }
}
