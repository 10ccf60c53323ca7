package dev.limbo.bench.suite;

import dev.limbo.bench.timeline.TimedTrial;
import dev.limbo.bench.timeline.TimelinesTest;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PlotsTest {

    @BeforeAll
    static void fonts() {
        Assumptions.assumeTrue(Charts.unavailableReason() == null, "no fonts for Java2D here");
    }

    static void png(final Path file) throws Exception {
        final byte[] b = Files.readAllBytes(file);
        assertTrue(b.length > 1000 && b[1] == 'P' && b[2] == 'N' && b[3] == 'G', file + " is no PNG");
    }

    @Test
    void throughputAndAllocatorPlots(@TempDir final Path dir) throws Exception {
        final List<Summary.Group> groups = Summary.groups(SummaryTest.sample());
        final Path tree = Plots.throughput(groups.get(0), dir);
        assertEquals("throughput-structures-TreeBench.operation-keyRange-10000.png", tree.getFileName().toString());
        png(tree);
        png(Plots.allocComparison(groups, dir));
        assertNull(Plots.allocComparison(groups.subList(0, 1), dir), "no allocator group, no comparison");
    }

    @Test
    void timelinePlots(@TempDir final Path dir) throws Exception {
        final List<TimedTrial.Result> results = List.of(TimelinesTest.result("none"), TimelinesTest.result("debra"));
        png(Plots.garbage(results, dir));
        png(Plots.committed(results, dir));
        png(Plots.throughputOverTime(results, dir));
        png(Plots.epochsOverTime(results, dir));
        assertNull(Plots.garbage(List.of(), dir));
    }

    @Test
    void slugs() {
        assertEquals("TreeBench.operation-keyRange-10000", Charts.slug("TreeBench.operation (keyRange=10000)"));
    }
}
