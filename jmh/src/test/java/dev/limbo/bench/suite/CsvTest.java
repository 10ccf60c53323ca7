package dev.limbo.bench.suite;

import dev.limbo.bench.timeline.JfrTimeline;
import dev.limbo.bench.timeline.Timelines;
import dev.limbo.bench.timeline.TimelinesTest;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;

class CsvTest {

    @Test
    void quotesOnlyWhatNeedsIt() {
        assertEquals("a,1,2.5,,\"x,y\",\"say \"\"hi\"\"\"", Csv.line("a", 1, 2.5, null, "x,y", "say \"hi\""));
        assertEquals("\"two\nlines\"", Csv.line("two\nlines"));
    }

    @Test
    void numbersAreLocaleFreeAndShort() {
        assertEquals("3", Csv.line(3.0));
        assertEquals("0.1", Csv.line(0.1));
        assertEquals("1.23457e+06", Csv.line(1234567.5));
        assertEquals("", Csv.line(Double.NaN));
        assertEquals("-2.5", Csv.line(-2.5));
    }

    @Test
    void resultsCsvHasOneLinePerMeasurementWithRatio(@TempDir final Path dir) throws Exception {
        final Path file = dir.resolve("results.csv");
        Report.writeCsv(Summary.groups(SummaryTest.sample()), file);
        final List<String> lines = Files.readAllLines(file);
        assertEquals(1 + SummaryTest.sample().size(), lines.size());
        assertEquals("family,benchmark,params,subject,threads,score,error,unit,samples,baseline,ratio,"
                + "unreclaimed_nodes,off_heap_bytes,committed_mib,peak_committed_mib,after_trim_percent_of_peak,"
                + "heap_bytes_per_op,gc_pause_ms,heap_bytes_per_entry,off_heap_bytes_per_entry,bytes_per_entry",
                lines.get(0));
        assertEquals("structures,TreeBench.operation,keyRange=10000,debra,1,8,,ops/us,4,none,0.8,7,,,,,,,,,", lines.get(4));
        assertEquals("alloc,AllocFastPath.pair,size=16,limbo,1,150,3,ops/us,4,malloc,3,7,,,,,,,,,", lines.get(6));
    }

    @Test
    void reportMarkdownHasTablesAndPlots() {
        final List<Summary.Group> groups = Summary.groups(SummaryTest.sample());
        final Report.Data d = new Report.Data(SuiteSpec.quickSuite(), "./limbo bench", "2026-01-01T00:00", 75,
                "2 cores", groups, Map.of(groups.get(0), "throughput-structures-TreeBench.png"), "alloc-comparison.png",
                null, List.of(), null, List.of(), List.of("X failed"), List.of(), List.of("report.md"));
        final String md = Report.markdown(d);
        org.junit.jupiter.api.Assertions.assertTrue(md.contains("# Limbo benchmarks: quick suite"), md);
        org.junit.jupiter.api.Assertions.assertTrue(md.contains("measured for 1:15"), md);
        org.junit.jupiter.api.Assertions.assertTrue(md.contains("## Structures"), md);
        org.junit.jupiter.api.Assertions.assertTrue(md.contains(Summary.markdown(groups.get(0))), md);
        org.junit.jupiter.api.Assertions.assertTrue(md.contains("![TreeBench.operation (keyRange=10000)]"
                + "(throughput-structures-TreeBench.png)"), md);
        org.junit.jupiter.api.Assertions.assertTrue(md.contains("![Allocator comparison](alloc-comparison.png)"), md);
        org.junit.jupiter.api.Assertions.assertTrue(md.contains("- X failed"), md);
        org.junit.jupiter.api.Assertions.assertTrue(md.contains("Unreclaimed nodes at the end of an iteration (mean):\n\n"
                + Summary.markdownSecondary(groups.get(0), "unreclaimedNodes")), md);
    }

    @Test
    void reportTablesTheAllocatorsCommittedMemoryWhereMeasured() {
        final String bench = "dev.limbo.bench.alloc.AllocLarson.churn";
        final List<Summary.Group> groups = Summary.groups(List.of(new Measurement(Family.ALLOC, bench,
                Map.of("allocator", "limbo"), 2, 1.5, 0.1, "ops/us", 4,
                Map.of("committedMiB", 3.0, "peakCommittedMiB", 3.25))));
        final String md = Report.markdown(new Report.Data(SuiteSpec.quickSuite(), "./limbo bench", "2026-01-01T00:00",
                75, "2 cores", groups, Map.of(), null, null, List.of(), null, List.of(), List.of(), List.of(),
                List.of("report.md")));
        org.junit.jupiter.api.Assertions.assertTrue(md.contains("MiB committed by Limbo's page allocator at the end of "
                + "an iteration (mean):\n\n" + Summary.markdownSecondary(groups.get(0), "committedMiB")), md);
        org.junit.jupiter.api.Assertions.assertTrue(md.contains(Summary.markdownSecondary(groups.get(0),
                "peakCommittedMiB")), md);
        org.junit.jupiter.api.Assertions.assertTrue(!md.contains("Unreclaimed nodes"), md);
        org.junit.jupiter.api.Assertions.assertTrue(!md.contains("trimming"), md);
    }

    @Test
    void reportTablesTheTrialsWithTheColumnsOfTheTokenPapersTable4() {
        final long t0 = 1_000_000_000_000L;
        final JfrTimeline.Window w = new JfrTimeline.Window("debra, tree, 2 threads", "debra", t0, t0 + 100_000_000);
        final JfrTimeline.Recording jfr = new JfrTimeline.Recording(List.of(
                new JfrTimeline.Span(JfrTimeline.Kind.RECLAMATION, "w0", t0 + 1_000_000, t0 + 3_500_000),
                new JfrTimeline.Span(JfrTimeline.Kind.RECLAMATION, "w1", t0 + 5_000_000, t0 + 5_100_000),
                new JfrTimeline.Span(JfrTimeline.Kind.RECLAMATION, "w1", t0 + 200_000_000, t0 + 290_000_000)),
                List.of(w));
        final Timelines.Outcome o = new Timelines.Outcome(List.of(TimelinesTest.result("debra"),
                TimelinesTest.result("hp")), Map.of(), null, null, null);
        final String md = Report.markdown(new Report.Data(SuiteSpec.quickSuite(), "./limbo bench", "2026-01-01T00:00",
                75, "2 cores", List.of(), Map.of(), null, o, List.of(), jfr, List.of(), List.of(), List.of(),
                List.of("report.md")));
        org.junit.jupiter.api.Assertions.assertTrue(md.contains("| scheme | Mops/s | epochs/s | longest batch free (ms) "
                + "| peak unreclaimed |"), md);
        // 3 advances in 0.05 s; the 90 ms batch began after the trial's window, so 2.5 ms is its longest
        org.junit.jupiter.api.Assertions.assertTrue(md.contains("| debra | 0.100 | 60.0 | 2.500 | 120 |"), md);
        org.junit.jupiter.api.Assertions.assertTrue(md.contains("| hp | 0.100 | 60.0 | - | 120 |"), md);
    }
}
