package dev.limbo.bench.suite;

import java.io.PrintStream;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * The console side of a suite: one line per finished step (a JMH fork, a timed trial) with the
 * step count, the elapsed time and an estimate of the time left. The estimate scales the planned
 * time of the remaining steps by how long the finished ones really took compared with their plan.
 * On a terminal a transient status line (the iteration in progress) is redrawn in place.
 */
public final class Progress {

    private final PrintStream out;
    private final LongSupplier nanoClock;
    private final long start;
    private final boolean terminal;
    private final double plannedSeconds;
    private final int totalSteps;
    private double doneSeconds;
    private int doneSteps;
    private int transientLength;

    public Progress(final PrintStream out, final double plannedSeconds, final int totalSteps, final boolean terminal,
                    final LongSupplier nanoClock) {
        this.out = out;
        this.plannedSeconds = plannedSeconds;
        this.totalSteps = totalSteps;
        this.terminal = terminal;
        this.nanoClock = nanoClock;
        this.start = nanoClock.getAsLong();
    }

    /** Seconds since the suite started. */
    public double elapsed() {
        return (nanoClock.getAsLong() - start) / 1e9;
    }

    /** Estimated seconds left. */
    public double remaining() {
        final double left = Math.max(0, plannedSeconds - doneSeconds);
        if (doneSeconds <= 0) {
            return left;
        }
        return left * (elapsed() / doneSeconds);
    }

    /** A finished step that was planned to take {@code plannedSeconds}: prints {@code text} with the counters. */
    public synchronized void step(final double planned, final String text) {
        doneSeconds += planned;
        doneSteps++;
        clearTransient();
        out.println(prefix() + "  " + text);
        out.flush();
    }

    /** Prints a line between steps (a section header, a warning). */
    public synchronized void note(final String text) {
        clearTransient();
        out.println(text);
        out.flush();
    }

    /** On a terminal, shows {@code text} in place until the next line. */
    public synchronized void status(final String text) {
        if (!terminal) {
            return;
        }
        final String line = prefix() + "  " + text;
        final StringBuilder b = new StringBuilder("\r").append(line);
        for (int i = line.length(); i < transientLength; i++) {
            b.append(' ');
        }
        transientLength = line.length();
        out.print(b);
        out.flush();
    }

    private void clearTransient() {
        if (transientLength > 0) {
            out.print("\r" + " ".repeat(transientLength) + "\r");
            transientLength = 0;
        }
    }

    /** {@code [ 12/140  1:05 elapsed  ETA 3:10]}. */
    String prefix() {
        final int width = Integer.toString(totalSteps).length();
        return String.format(Locale.ROOT, "[%" + width + "d/%d %s elapsed, ETA %s]", Math.min(doneSteps, totalSteps),
                totalSteps, clock(elapsed()), clock(remaining()));
    }

    public int doneSteps() {
        return doneSteps;
    }

    /** {@code m:ss} (or {@code h:mm:ss}). */
    public static String clock(final double seconds) {
        final long s = Math.max(0, Math.round(seconds));
        if (s >= 3600) {
            return String.format(Locale.ROOT, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60);
        }
        return String.format(Locale.ROOT, "%d:%02d", s / 60, s % 60);
    }
}
