package dev.limbo.bench.timeline;

import dev.limbo.bench.suite.Charts;
import dev.limbo.core.testing.Progress;
import dev.limbo.reclaim.ReclaimStats;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

public class TimelinesTest {

    public static TimedTrial.Result result(final String scheme) {
        final TimedTrial.Config c = new TimedTrial.Config(TimedTrial.Structure.TREE, scheme, 2, Duration.ZERO,
                Duration.ofMillis(100), Duration.ofMillis(50), 1000, 100, 1);
        return new TimedTrial.Result(c, List.of(new TimedTrial.Sample(0, 0, 0, 1 << 20, 4096, 0, 0, 0, 0),
                new TimedTrial.Sample(0.05, 120, 300, 2 << 20, 8192, 5000, 0.1, 3, 60)), 5000, 0.05, 0.01,
                new ReclaimStats(scheme, 300, 180, 120, 3, 4, 0, 0, 0, 0, 0));
    }

    @Test
    void csvHasOneLinePerSample(@TempDir final Path dir) throws Exception {
        final Path file = dir.resolve("timeline.csv");
        Timelines.writeCsv(List.of(result("debra"), result("hp")), file);
        final List<String> lines = Files.readAllLines(file);
        assertEquals(List.of(
                "scheme,structure,threads,seconds,unreclaimed_nodes,retired_nodes,committed_bytes,bytes_in_use,ops,mops_per_s,"
                        + "advances,epochs_per_s",
                "debra,tree,2,0,0,0,1048576,4096,0,0,0,0",
                "debra,tree,2,0.05,120,300,2097152,8192,5000,0.1,3,60",
                "hp,tree,2,0,0,0,1048576,4096,0,0,0,0",
                "hp,tree,2,0.05,120,300,2097152,8192,5000,0.1,3,60"), lines);
    }

    @Test
    void jsonHoldsTrialsSamplesAndFailures(@TempDir final Path dir) throws Exception {
        final Path file = dir.resolve("timeline.json");
        Timelines.writeJson(List.of(result("debra")), Map.of("hp", "boom \"quoted\""), file);
        final String json = Files.readString(file);
        assertTrue(json.contains("\"scheme\": \"debra\""), json);
        assertTrue(json.contains("\"peakUnreclaimed\": 120"), json);
        assertTrue(json.contains("\"unreclaimed\": [0, 120]"), json);
        assertTrue(json.contains("\"epochsPerSecond\": 60,"), json);
        assertTrue(json.contains("\"epochsPerSecond\": [0, 60]"), json);
        assertTrue(json.contains("\"failures\": {\"hp\": \"boom \\\"quoted\\\"\"}"), json);
        assertEquals("\"a\\nb\\u0001\"", Timelines.quote("a\nb\u0001"));
    }

    @Test
    void configRejectsNonsense() {
        assertThrows(IllegalArgumentException.class, () -> new TimedTrial.Config(TimedTrial.Structure.TREE, "debra", 0,
                Duration.ZERO, Duration.ofSeconds(1), Duration.ofMillis(50), 100, 50, 1));
        assertThrows(IllegalArgumentException.class, () -> new TimedTrial.Config(TimedTrial.Structure.TREE, "debra", 1,
                Duration.ZERO, Duration.ofSeconds(1), Duration.ofMillis(50), 100, 101, 1));
        assertThrows(IllegalArgumentException.class, () -> new TimedTrial.Config(TimedTrial.Structure.TREE, "debra", 1,
                Duration.ZERO, Duration.ofSeconds(1), Duration.ofMillis(50), 100, 50, 1, 0, 0, false));
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TimedTrial.Structure.of("skiplist"));
        assertTrue(e.getMessage().endsWith("known: " + TimedTrial.Structure.ids()), e.getMessage());
    }

    @Test
    void structuresAreNamedByTheirIds() {
        for (final TimedTrial.Structure s : TimedTrial.Structure.values()) {
            assertEquals(s, TimedTrial.Structure.of(s.id()));
            assertTrue(TimedTrial.Structure.ids().contains(s.id()), TimedTrial.Structure.ids());
        }
        assertEquals(2000, TimedTrial.Structure.LIST.keyRange(100_000), "the list's O(n) operations cap its keys");
        assertEquals(100_000, TimedTrial.Structure.TREE.keyRange(100_000));
    }

    /**
     * A trial runs for a fixed time, so how many samples it takes and whether its workers operate
     * in that time is up to the scheduler: a sampler woken late by more than an interval skips
     * samples, and workers that do not get the CPU count no operations. So every trial is checked
     * for what holds whatever the scheduling (samples never early, the last at the end, the
     * operations adding up), and trials run until one has also sampled on time (at least 6 of its
     * 7 samples), counted operations and retired nodes (a {@link Progress}, 120 s at most).
     */
    @ParameterizedTest
    @EnumSource(TimedTrial.Structure.class)
    void shortTrialSamplesGarbageAndThroughput(final TimedTrial.Structure structure) throws Exception {
        final TimedTrial.Config c = new TimedTrial.Config(structure, "debra", 2, Duration.ofMillis(50),
                Duration.ofMillis(300), Duration.ofMillis(50), 2000, 100, 7);
        final Progress progress = new Progress(120, "trials sampled on time, with operations and retires", 1);
        TimedTrial.Result r = null;
        try {
            do {
                r = TimedTrial.run(c, () -> { }, () -> { });
                final List<TimedTrial.Sample> samples = r.samples();
                assertEquals(0, samples.get(0).seconds());
                assertTrue(samples.size() >= 2 && samples.size() <= 7, "samples: " + samples.size());
                for (int i = 1; i < samples.size(); i++) {
                    // sample i is due at i intervals (the last at the end of the trial), never before
                    final double due = Math.min(i * 0.05, 0.3) - 1e-6;
                    assertTrue(samples.get(i).seconds() >= due, "sample " + i + " at " + samples.get(i).seconds());
                    assertTrue(i == samples.size() - 1 || samples.get(i).seconds() < 0.3,
                            "sample " + i + " at " + samples.get(i).seconds() + " is past the end but not last");
                }
                assertTrue(samples.get(samples.size() - 1).seconds() >= 0.3 - 1e-6, "the last sample ends the trial");
                assertEquals(r.totalOps(), samples.stream().mapToLong(TimedTrial.Sample::ops).sum());
                if (samples.size() >= 6 && r.totalOps() > 0 && r.stats().retired() > 0) {
                    progress.add(0, 1);
                }
            } while (!progress.done());
        } catch (final AssertionError e) {
            throw new AssertionError(e.getMessage() + "; last trial: " + (r == null ? "none"
                    : r.samples().size() + " samples, " + r.totalOps() + " operations, " + r.stats()), e);
        }
    }

    /**
     * Three rounds of fresh workers with a stalled thread pinned before the first started: under
     * debra nothing that the workers retire is freed (the epoch cannot pass the stalled thread's
     * epoch + 1, and the tree's prefill retires nothing), however the rounds are scheduled; trials
     * run until one has retired nodes (a {@link Progress}, 120 s at most). The workers of every
     * round count into the same totals.
     */
    @Test
    void roundsOfFreshThreadsAroundAStalledThread() throws Exception {
        final TimedTrial.Config c = new TimedTrial.Config(TimedTrial.Structure.TREE, "debra", 2, Duration.ZERO,
                Duration.ofMillis(300), Duration.ofMillis(50), 2000, 100, 7, 0, 3, true);
        final Progress progress = new Progress(120, "stalled trials with retires", 1);
        do {
            final TimedTrial.Result r = TimedTrial.run(c, () -> { }, () -> { });
            assertEquals(r.totalOps(), r.samples().stream().mapToLong(TimedTrial.Sample::ops).sum());
            assertEquals(0, r.stats().freed(), () -> "debra freed nodes past a stalled thread: " + r.stats());
            assertEquals(r.stats().retired(), r.stats().inLimbo());
            if (r.stats().retired() > 0) {
                progress.add(0, 1);
            }
        } while (!progress.done());
    }

    @Test
    void jfrTimelineDrawsOneRowPerThread(@TempDir final Path dir) throws Exception {
        Assumptions.assumeTrue(Charts.unavailableReason() == null, "no fonts for Java2D here");
        final long t0 = 1_000_000_000_000L;
        final List<JfrTimeline.Span> spans = List.of(
                new JfrTimeline.Span(JfrTimeline.Kind.RECLAMATION, "limbo-trial-debra-0", t0 + 1_000_000, t0 + 3_000_000),
                new JfrTimeline.Span(JfrTimeline.Kind.EPOCH_ADVANCE, "limbo-trial-debra-1", t0 + 2_000_000,
                        t0 + 2_000_000),
                new JfrTimeline.Span(JfrTimeline.Kind.HAZARD_SCAN, "other", t0 + 90_000_000, t0 + 91_000_000));
        final JfrTimeline.Window w = new JfrTimeline.Window("debra", "debra", t0, t0 + 100_000_000);
        final JfrTimeline.Recording rec = new JfrTimeline.Recording(spans, List.of(w));
        assertEquals(1, rec.count(JfrTimeline.Kind.RECLAMATION, w));
        assertNotNull(JfrTimeline.chart(spans, w));
        assertNull(JfrTimeline.chart(spans, new JfrTimeline.Window("empty", "e", t0 + 200_000_000, t0 + 300_000_000)));
        final List<Path> files = JfrTimeline.render(rec, dir, "t", 10);
        assertEquals(List.of(dir.resolve("t-debra.png")), files);
        assertTrue(Files.size(files.get(0)) > 1000);
        assertEquals("worker 3", JfrTimeline.shortName("limbo-trial-ebr-af-3"));
    }
}
