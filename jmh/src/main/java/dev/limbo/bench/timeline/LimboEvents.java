package dev.limbo.bench.timeline;

import dev.limbo.allocator.internal.CacheFlushEvent;
import dev.limbo.reclaim.internal.EpochAdvanceEvent;
import dev.limbo.reclaim.internal.HazardScanEvent;
import dev.limbo.reclaim.internal.NeutralizationEvent;
import dev.limbo.reclaim.internal.ReclamationEvent;
import dev.limbo.reclaim.internal.TokenPassEvent;
import jdk.jfr.Recording;

import java.time.Duration;
import java.util.List;

/** The names of Limbo's JFR events, and a recording that enables all of them. */
public final class LimboEvents {

    /** Every {@code dev.limbo.*} event the libraries and the bench command emit. */
    public static final List<String> NAMES = List.of(EpochAdvanceEvent.NAME, ReclamationEvent.NAME,
            HazardScanEvent.NAME, CacheFlushEvent.NAME, TokenPassEvent.NAME, NeutralizationEvent.NAME, TrialEvent.NAME);

    private LimboEvents() {
    }

    /** A recording (not started) with every Limbo event enabled, no threshold, no stack traces. */
    public static Recording newRecording() {
        final Recording r = new Recording();
        r.setName("limbo");
        for (final String name : NAMES) {
            r.enable(name).withThreshold(Duration.ZERO).withoutStackTrace();
        }
        r.setToDisk(true);
        return r;
    }
}
