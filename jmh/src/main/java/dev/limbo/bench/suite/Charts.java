package dev.limbo.bench.suite;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** XChart with one look for every plot, written as PNG; headless. */
public final class Charts {

    static {
        System.setProperty("java.awt.headless", "true");
    }

    /** Series colours, in order: distinguishable and colour-blind friendly (Okabe-Ito, then greys). */
    public static final Color[] COLORS = {
        new Color(0x0072B2), new Color(0xD55E00), new Color(0x009E73), new Color(0xCC79A7),
        new Color(0xE69F00), new Color(0x56B4E9), new Color(0xF0E442), new Color(0x000000),
        new Color(0x999999), new Color(0x661100),
    };

    public static final int WIDTH = 900;
    public static final int HEIGHT = 540;

    private Charts() {
    }

    /** An XY chart with lines and markers. */
    public static XYChart xy(final String title, final String xTitle, final String yTitle) {
        return xy(title, xTitle, yTitle, WIDTH, HEIGHT);
    }

    public static XYChart xy(final String title, final String xTitle, final String yTitle, final int width,
                             final int height) {
        final XYChart chart = new XYChart(width, height);
        chart.setTitle(title);
        chart.setXAxisTitle(xTitle);
        chart.setYAxisTitle(yTitle);
        style(chart.getStyler());
        chart.getStyler().setSeriesMarkers(new org.knowm.xchart.style.markers.Marker[] {
            SeriesMarkers.CIRCLE, SeriesMarkers.DIAMOND, SeriesMarkers.SQUARE, SeriesMarkers.TRIANGLE_UP,
            SeriesMarkers.TRIANGLE_DOWN, SeriesMarkers.CROSS, SeriesMarkers.CIRCLE, SeriesMarkers.DIAMOND,
        });
        return chart;
    }

    /** A grouped bar chart. */
    public static CategoryChart bars(final String title, final String xTitle, final String yTitle) {
        final CategoryChart chart = new CategoryChart(WIDTH, HEIGHT);
        chart.setTitle(title);
        chart.setXAxisTitle(xTitle);
        chart.setYAxisTitle(yTitle);
        style(chart.getStyler());
        chart.getStyler().setXAxisLabelRotation(20);
        return chart;
    }

    private static void style(final Styler s) {
        s.setChartBackgroundColor(Color.WHITE);
        s.setLegendPosition(Styler.LegendPosition.OutsideE);
        s.setLegendBorderColor(Color.LIGHT_GRAY);
        s.setSeriesColors(COLORS);
        s.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
        s.setLegendFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        s.setAntiAlias(true);
        if (s instanceof org.knowm.xchart.style.AxesChartStyler a) {
            a.setPlotGridLinesColor(new Color(0xE0E0E0));
            a.setAxisTitleFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
            a.setAxisTickLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        }
    }

    /** Writes {@code chart} to {@code file} as PNG. */
    public static void save(final Chart<?, ?> chart, final Path file) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        try (OutputStream out = Files.newOutputStream(file)) {
            BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
        }
    }

    /** Writes {@code charts} stacked vertically into one PNG. */
    public static void save(final List<? extends Chart<?, ?>> charts, final Path file) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        try (OutputStream out = Files.newOutputStream(file)) {
            BitmapEncoder.saveBitmap(new java.util.ArrayList<>(charts), charts.size(), 1, out,
                    BitmapEncoder.BitmapFormat.PNG);
        }
    }

    /**
     * Why plotting cannot work here (no fonts, no AWT), or null when it can: renders a tiny chart.
     * Java2D needs fontconfig and at least one font even headless.
     */
    public static String unavailableReason() {
        try {
            final XYChart probe = xy("probe", "x", "y", 120, 80);
            probe.addSeries("s", new double[] {0, 1}, new double[] {0, 1});
            BitmapEncoder.getBufferedImage(probe);
            return null;
        } catch (final Throwable t) {
            return t.getClass().getSimpleName() + ": " + t.getMessage()
                    + " (Java2D needs fontconfig and a font, e.g. 'apt-get install fontconfig fonts-dejavu-core')";
        }
    }

    /** A file-name-safe version of {@code s}. */
    public static String slug(final String s) {
        final String t = s.replaceAll("[^A-Za-z0-9._-]+", "-").replaceAll("-+", "-");
        return t.replaceAll("^-|-$", "");
    }
}
