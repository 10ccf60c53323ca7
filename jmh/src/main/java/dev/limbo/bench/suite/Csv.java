package dev.limbo.bench.suite;

import java.util.List;
import java.util.Locale;
import java.util.StringJoiner;

/** RFC 4180 CSV lines, numbers in the root locale. */
public final class Csv {

    private Csv() {
    }

    /** One line (without the line break) of {@code values}. */
    public static String line(final Object... values) {
        return line(java.util.Arrays.asList(values));
    }

    public static String line(final List<?> values) {
        final StringJoiner j = new StringJoiner(",");
        for (final Object v : values) {
            j.add(field(v));
        }
        return j.toString();
    }

    static String field(final Object v) {
        if (v == null) {
            return "";
        }
        final String s;
        if (v instanceof Double d) {
            s = Double.isNaN(d) ? "" : number(d);
        } else if (v instanceof Float f) {
            s = number(f);
        } else {
            s = v.toString();
        }
        if (s.indexOf(',') >= 0 || s.indexOf('"') >= 0 || s.indexOf('\n') >= 0 || s.indexOf('\r') >= 0) {
            return '"' + s.replace("\"", "\"\"") + '"';
        }
        return s;
    }

    /** A double without exponent noise: integers plainly, others with up to 6 significant decimals. */
    static String number(final double d) {
        if (d == Math.rint(d) && Math.abs(d) < 1e15) {
            return Long.toString((long) d);
        }
        return String.format(Locale.ROOT, "%.6g", d).replaceAll("(\\.\\d*?)0+(e|$)", "$1$2").replace(".e", "e")
                .replaceAll("\\.$", "");
    }
}
