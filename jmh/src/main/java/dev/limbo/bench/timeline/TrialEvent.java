package dev.limbo.bench.timeline;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * JFR event {@code dev.limbo.Trial}: one timed trial, from the workers' start to their end. The
 * {@code jfr-timeline} command uses it to cut a recording into one timeline per trial.
 */
@Name(TrialEvent.NAME)
@Label("Timed Trial")
@Category({"Limbo", "Benchmark"})
@Description("A timed trial of the bench command's timeline family")
@StackTrace(false)
public final class TrialEvent extends jdk.jfr.Event {

    /** The event's name in recordings. */
    public static final String NAME = "dev.limbo.Trial";

    @Label("Scheme")
    public String scheme;

    @Label("Structure")
    public String structure;

    @Label("Threads")
    public int threads;
}
