package dev.limbo.bench.suite;

import dev.limbo.bench.index.Contender;

import java.util.Arrays;
import java.util.Locale;

/**
 * The bench command's families. A JMH benchmark belongs to the family of its package:
 * {@code dev.limbo.bench.<package>.*}, so a benchmark class added to one of these packages joins
 * its family without other edits.
 */
public enum Family {
    /** Allocator benchmarks ({@code dev.limbo.bench.alloc}), parameter {@code allocator}. */
    ALLOC("alloc", "allocator", "malloc"),
    /** Reclamation benchmarks ({@code dev.limbo.bench.reclaim}), parameter {@code scheme}. */
    RECLAIM("reclaim", "scheme", "none"),
    /** Structure benchmarks ({@code dev.limbo.bench.structures}), parameter {@code scheme}. */
    STRUCTURES("structures", "scheme", "none"),
    /**
     * The off-heap index against the Java maps people use ({@code dev.limbo.bench.index}),
     * parameter {@code contender}; ordered contenders are compared with {@code cslm}, hashed ones
     * with {@code chm} ({@link #kind}).
     */
    INDEX("index", "contender", "cslm"),
    /** Timed trials: garbage over time ({@code dev.limbo.bench.timeline}); not JMH. */
    TIMELINE("timeline", "scheme", "none"),
    /**
     * Stamp-it's benchmarks at one thread ({@code dev.limbo.bench.stampit}), parameter
     * {@code scheme}: its base-cost figure (Fig. 5). Full suite only.
     */
    STAMP_IT("stamp-it", "stampit", "scheme", "none"),
    /**
     * The CDRC paper's benchmarks ({@code dev.limbo.bench.cdrc}), parameter {@code scheme} with
     * the family's own values ({@code cdrc}, {@code cdrc-rc}, the manual schemes {@code ebr},
     * {@code hp}, {@code none}, and {@code heap} for the load/store array), compared with
     * {@code cdrc}. Not in the default quick run (its prefills are large): ask for it with
     * {@code -f cdrc}.
     */
    CDRC("cdrc", "scheme", "cdrc");

    /** The package prefix of all benchmarks. */
    public static final String ROOT = "dev.limbo.bench.";

    private final String id;
    private final String pkg;
    private final String subject;
    private final String baseline;

    Family(final String id, final String subject, final String baseline) {
        this(id, id, subject, baseline);
    }

    Family(final String id, final String pkg, final String subject, final String baseline) {
        this.id = id;
        this.pkg = pkg;
        this.subject = subject;
        this.baseline = baseline;
    }

    public String id() {
        return id;
    }

    /** The parameter whose values are compared (the rows of the summary). */
    public String subject() {
        return subject;
    }

    /** The subject value the others are divided by. */
    public String baseline() {
        return baseline;
    }

    /**
     * The table a subject value belongs to within a benchmark's results: {@code ordered} or
     * {@code hashed} for the index contenders (each kind against its own baseline), "" otherwise.
     */
    public String kind(final String subjectValue) {
        if (this != INDEX) {
            return "";
        }
        try {
            return Contender.of(subjectValue).ordered() ? "ordered" : "hashed";
        } catch (final IllegalArgumentException e) {
            return "";
        }
    }

    /** The baseline of a table of {@code kind} ({@link #kind}): {@code chm} for hashed index contenders. */
    public String baseline(final String kind) {
        return this == INDEX && kind.equals("hashed") ? "chm" : baseline;
    }

    /** Whether JMH's GC profiler runs with the family's benchmarks (heap bytes per operation). */
    public boolean profilesGc() {
        return this == INDEX || this == CDRC;
    }

    /** Whether the quick suite runs the family when no families are asked for. */
    public boolean quick() {
        return this != STAMP_IT && this != CDRC;
    }

    /** Whether the family runs through JMH. */
    public boolean jmh() {
        return this != TIMELINE;
    }

    /** The family of the benchmark named {@code username} (package.Class.method), or null. */
    public static Family ofBenchmark(final String username) {
        for (final Family f : values()) {
            if (f.jmh() && username.startsWith(ROOT + f.pkg + ".")) {
                return f;
            }
        }
        return null;
    }

    public static Family of(final String id) {
        for (final Family f : values()) {
            if (f.id.equals(id.trim().toLowerCase(Locale.ROOT))) {
                return f;
            }
        }
        throw new IllegalArgumentException("unknown family '" + id + "'; known: "
                + Arrays.stream(values()).map(Family::id).toList());
    }

    @Override
    public String toString() {
        return id;
    }
}
