package dev.limbo.bench.suite;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The summary tables: per benchmark (and fixed parameters), one row per scheme or allocator, one
 * column per thread count, each cell the score with its error and its ratio to the family's
 * baseline ({@code malloc} for allocators, {@code none} for schemes; the structures' {@code jdk}
 * row is the on-heap JDK counterpart).
 */
public final class Summary {

    /**
     * The measurements of one benchmark at one set of fixed parameters.
     *
     * @param family    the family
     * @param benchmark package.Class.method
     * @param fixed     the other parameters' values
     * @param subject   the compared parameter ({@code scheme}, {@code allocator}) or null
     * @param baseline  the subject value ratios refer to, or null if it was not measured
     * @param unit      the score unit
     * @param subjects  the subject values, in the order first measured
     * @param threads   the thread counts, ascending
     * @param cells     subject value to threads to measurement
     */
    public record Group(Family family, String benchmark, Map<String, String> fixed, String subject, String baseline,
                       String unit, List<String> subjects, List<Integer> threads,
                       Map<String, Map<Integer, Measurement>> cells) {

        /** {@code TreeBench.operation (keyRange=10000, updatePercent=100)}. */
        public String title() {
            final String p = fixed.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                    .collect(Collectors.joining(", "));
            return JmhProgress.shortName(benchmark) + (p.isEmpty() ? "" : " (" + p + ")");
        }

        public Measurement cell(final String subjectValue, final int t) {
            return cells.getOrDefault(subjectValue, Map.of()).get(t);
        }

        /** {@code score / baseline score} at the same thread count, or NaN. */
        public double ratio(final String subjectValue, final int t) {
            final Measurement m = cell(subjectValue, t);
            final Measurement b = baseline == null ? null : cell(baseline, t);
            if (m == null || b == null || b.score() <= 0) {
                return Double.NaN;
            }
            return m.score() / b.score();
        }

        /** Whether any measurement has the secondary result {@code name}. */
        public boolean hasSecondary(final String name) {
            return cells.values().stream().flatMap(c -> c.values().stream())
                    .anyMatch(m -> m.secondary().containsKey(name));
        }
    }

    private Summary() {
    }

    /** Groups {@code ms} by family, benchmark and fixed parameters, in the order first measured. */
    public static List<Group> groups(final List<Measurement> ms) {
        final Map<String, List<Measurement>> byKey = new LinkedHashMap<>();
        for (final Measurement m : ms) {
            byKey.computeIfAbsent(m.benchmark() + " " + fixed(m), k -> new ArrayList<>()).add(m);
        }
        final List<Group> groups = new ArrayList<>();
        for (final List<Measurement> list : byKey.values()) {
            final Measurement first = list.get(0);
            final String subject = subjectOf(first);
            final Map<String, String> fixed = fixed(first);
            final List<String> subjects = new ArrayList<>();
            final TreeSet<Integer> threads = new TreeSet<>();
            final Map<String, Map<Integer, Measurement>> cells = new LinkedHashMap<>();
            for (final Measurement m : list) {
                final String s = subject == null ? "" : m.params().get(subject);
                if (!subjects.contains(s)) {
                    subjects.add(s);
                }
                threads.add(m.threads());
                cells.computeIfAbsent(s, k -> new TreeMap<>()).put(m.threads(), m);
            }
            final String wanted = first.family() == null ? null
                    : first.family().baseline(fixed.getOrDefault(KIND, ""));
            final String baseline = wanted != null && subjects.contains(wanted) ? wanted : null;
            groups.add(new Group(first.family(), first.benchmark(), fixed, subject, baseline, first.unit(), subjects,
                    new ArrayList<>(threads), cells));
        }
        return groups;
    }

    /** The pseudo-parameter of {@link Family#kind}: ordered and hashed index contenders get tables of their own. */
    static final String KIND = "kind";

    /**
     * The parameters a group's measurements share: all but the subject, plus the subject value's
     * {@link Family#kind} where it has one.
     */
    private static Map<String, String> fixed(final Measurement m) {
        final String subject = subjectOf(m);
        final Map<String, String> fixed = new TreeMap<>(m.params());
        fixed.remove(subject);
        final String kind = m.family() == null || subject == null ? "" : m.family().kind(m.params().get(subject));
        if (!kind.isEmpty()) {
            fixed.put(KIND, kind);
        }
        return fixed;
    }

    /** The parameter that the measurement's family compares, if the benchmark has it. */
    static String subjectOf(final Measurement m) {
        if (m.family() != null && m.params().containsKey(m.family().subject())) {
            return m.family().subject();
        }
        for (final String s : List.of("scheme", "allocator")) {
            if (m.params().containsKey(s)) {
                return s;
            }
        }
        return null;
    }

    /** The plain-text tables for the console. */
    public static String text(final List<Group> groups) {
        final StringBuilder b = new StringBuilder();
        for (final Group g : groups) {
            b.append(String.format(Locale.ROOT, "%s  %s  [%s%s]%n", g.family() == null ? "-" : g.family().id(),
                    g.title(), g.unit(), g.baseline() == null ? "" : "; x = ratio to " + g.baseline()));
            final List<List<String>> rows = new ArrayList<>();
            final List<String> header = new ArrayList<>();
            header.add(g.subject() == null ? "" : g.subject());
            for (final int t : g.threads()) {
                header.add("threads=" + t);
            }
            rows.add(header);
            for (final String s : g.subjects()) {
                final List<String> row = new ArrayList<>();
                row.add(s.isEmpty() ? "-" : s);
                for (final int t : g.threads()) {
                    row.add(cell(g, s, t));
                }
                rows.add(row);
            }
            b.append(align(rows, "  ")).append(System.lineSeparator());
        }
        return b.toString();
    }

    /** One markdown table of the group's scores. */
    public static String markdown(final Group g) {
        final StringBuilder b = new StringBuilder();
        b.append('|').append(g.subject() == null ? "" : " " + g.subject() + " ").append('|');
        for (final int t : g.threads()) {
            b.append(" ").append(t).append(t == 1 ? " thread" : " threads").append(" |");
        }
        b.append('\n').append("|---|");
        for (int i = 0; i < g.threads().size(); i++) {
            b.append("---:|");
        }
        b.append('\n');
        for (final String s : g.subjects()) {
            b.append("| ").append(s.isEmpty() ? "-" : s).append(" |");
            for (final int t : g.threads()) {
                b.append(' ').append(cell(g, s, t)).append(" |");
            }
            b.append('\n');
        }
        return b.toString();
    }

    /** A markdown table of one secondary result (e.g. {@code unreclaimedNodes}) per subject and thread count. */
    public static String markdownSecondary(final Group g, final String name) {
        final StringBuilder b = new StringBuilder();
        b.append("| ").append(Objects.requireNonNullElse(g.subject(), "")).append(" |");
        for (final int t : g.threads()) {
            b.append(' ').append(t).append(t == 1 ? " thread" : " threads").append(" |");
        }
        b.append("\n|---|").append("---:|".repeat(g.threads().size())).append('\n');
        for (final String s : g.subjects()) {
            b.append("| ").append(s.isEmpty() ? "-" : s).append(" |");
            for (final int t : g.threads()) {
                final Measurement m = g.cell(s, t);
                // the on-heap baseline has no off-heap nodes: its gauges read 0, shown as "-"; a gauge
                // reads NaN where it does not apply (Limbo's memory under another allocator)
                final Double v = m == null || s.equals(Planner.JDK) ? null : m.secondary().get(name);
                b.append(' ').append(v == null || v.isNaN() ? "-" : number(v)).append(" |");
            }
            b.append('\n');
        }
        return b.toString();
    }

    /** {@code 12.3 ± 0.4  1.05x}; {@code -} when not measured. */
    static String cell(final Group g, final String s, final int t) {
        final Measurement m = g.cell(s, t);
        if (m == null) {
            return "-";
        }
        final String err = Double.isNaN(m.error()) || Double.isInfinite(m.error()) ? "" : " ± " + number(m.error());
        final double r = g.ratio(s, t);
        final String ratio = Double.isNaN(r) ? "" : String.format(Locale.ROOT, "  %5s", s.equals(g.baseline()) ? "base"
                : ratio(r));
        return number(m.score()) + err + ratio;
    }

    /** Three significant digits, no exponent below 10^7. */
    public static String number(final double v) {
        if (Double.isNaN(v)) {
            return "?";
        }
        final double a = Math.abs(v);
        if (a >= 1e7) {
            return String.format(Locale.ROOT, "%.3g", v);
        }
        if (a >= 100 || a == 0) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (a >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        if (a >= 1) {
            return String.format(Locale.ROOT, "%.2f", v);
        }
        if (a >= 0.01) {
            return String.format(Locale.ROOT, "%.3f", v);
        }
        return String.format(Locale.ROOT, "%.3g", v);
    }

    /** {@code 1.05x}, {@code 0.31x}, {@code 12x}. */
    public static String ratio(final double r) {
        if (Double.isNaN(r)) {
            return "";
        }
        return (r >= 10 ? String.format(Locale.ROOT, "%.0f", r) : String.format(Locale.ROOT, "%.2f", r)) + "x";
    }

    /** Left-aligns the first column and right-aligns the others. */
    static String align(final List<List<String>> rows, final String indent) {
        final int cols = rows.stream().mapToInt(List::size).max().orElse(0);
        final int[] w = new int[cols];
        for (final List<String> r : rows) {
            for (int i = 0; i < r.size(); i++) {
                w[i] = Math.max(w[i], r.get(i).length());
            }
        }
        final StringBuilder b = new StringBuilder();
        for (final List<String> r : rows) {
            b.append(indent);
            for (int i = 0; i < r.size(); i++) {
                final String c = r.get(i);
                if (i == 0) {
                    b.append(c).append(" ".repeat(w[i] - c.length()));
                } else {
                    b.append("   ").append(" ".repeat(w[i] - c.length())).append(c);
                }
            }
            b.append(System.lineSeparator());
        }
        return b.toString();
    }
}
