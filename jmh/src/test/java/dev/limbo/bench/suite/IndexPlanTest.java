package dev.limbo.bench.suite;

import dev.limbo.bench.index.Contender;
import dev.limbo.bench.index.IndexBench;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.annotations.Param;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The index family plans IndexBench as issue 18 asks: the quick suite only the performance bars'
 * cells (10^6 keys, 2 threads; ordered contenders at 50i50d and read90, hashed ones at read90),
 * the full suite every cell but the hashed contenders' range scans; Limbo's forks with a 1 GiB heap.
 */
class IndexPlanTest {

    static List<String> declared(final String field) throws NoSuchFieldException {
        return List.of(IndexBench.Index.class.getField(field).getAnnotation(Param.class).value());
    }

    static BenchmarkInfo indexBench() throws NoSuchFieldException {
        return new BenchmarkInfo("dev.limbo.bench.index.IndexBench.operation", Map.of("keys", declared("keys"),
                "mix", declared("mix"), "contender", declared("contender")));
    }

    static List<PlannedRun> plan(final SuiteSpec spec) throws NoSuchFieldException {
        return Planner.plan(new Planner.Request(spec, EnumSet.of(Family.INDEX), null, null, null, Map.of()),
                List.of(indexBench()));
    }

    /** Every contender:mix:keys:threads cell of {@code runs}, failing on a cell planned twice. */
    static Set<String> cells(final List<PlannedRun> runs) {
        final Set<String> cells = new HashSet<>();
        for (final PlannedRun r : runs) {
            for (final String c : r.params().get("contender")) {
                for (final String m : r.params().get("mix")) {
                    for (final String k : r.params().get("keys")) {
                        assertTrue(cells.add(c + ":" + m + ":" + k + ":" + r.threads()), "planned twice: " + c + " " + m);
                    }
                }
            }
        }
        return cells;
    }

    @Test
    void declaresEveryLibraryAndTheIssuesParameters() throws Exception {
        assertEquals(Arrays.stream(Contender.Library.values()).map(Contender.Library::id).toList(),
                declared("contender"));
        assertEquals(List.of("1000000", "20000000"), declared("keys"));
        assertEquals(Planner.INDEX_MIXES, declared("mix"));
    }

    @Test
    void quickSuitePlansTheBarsCellsOnly() throws Exception {
        final List<PlannedRun> runs = plan(SuiteSpec.quickSuite());
        final Set<String> expected = new HashSet<>();
        for (final Contender.Library l : Contender.Library.values()) {
            if (!l.limbo() && !Planner.QUICK_INDEX_BASELINES.contains(l.id())) {
                continue;
            }
            for (final String mix : l.ordered() ? List.of("50i50d", "read90") : List.of("read90")) {
                expected.add(l.id() + ":" + mix + ":1000000:2");
            }
        }
        assertEquals(expected, cells(runs));
        assertTrue(expected.containsAll(Set.of("cslm:50i50d:1000000:2", "cslm:read90:1000000:2",
                "chm:read90:1000000:2", "nbhml:read90:1000000:2")));
        assertHeaps(runs);
    }

    @Test
    void fullSuitePlansEveryCellButHashedScans() throws Exception {
        final SuiteSpec full = SuiteSpec.full(2);
        final List<PlannedRun> runs = plan(full);
        final Set<String> expected = new HashSet<>();
        for (final Contender.Library l : Contender.Library.values()) {
            for (final String mix : Planner.INDEX_MIXES) {
                for (final String keys : List.of("1000000", "20000000")) {
                    for (final int t : full.threads()) {
                        if (l.ordered() || !mix.equals("scan100")) {
                            expected.add(l.id() + ":" + mix + ":" + keys + ":" + t);
                        }
                    }
                }
            }
        }
        assertEquals(expected, cells(runs));
        assertTrue(cells(runs).stream().noneMatch(c -> c.startsWith("chm:scan100")));
        assertHeaps(runs);
    }

    /** Limbo's forks get the 1 GiB heap; the others keep the benchmark's own JVM arguments. */
    static void assertHeaps(final List<PlannedRun> runs) {
        for (final PlannedRun r : runs) {
            final boolean limbo = r.params().get("contender").stream().allMatch(c -> Contender.of(c).library().limbo());
            assertEquals(limbo ? Planner.LIMBO_HEAP : List.of(), r.jvmArgs(), r.describe());
        }
    }

    @Test
    void contendersWithASchemeAreLimbosAndUnknownOnesAreRefused() {
        final Contender hp = Contender.of("limbo-ordered-hp");
        assertEquals(Contender.Library.LIMBO_ORDERED, hp.library());
        assertEquals(dev.limbo.reclaim.Scheme.HP, hp.scheme());
        assertEquals("ordered", Family.INDEX.kind("limbo-ordered-hp"));
        assertEquals(null, Contender.of("limbo-hash").scheme(), "the builder's default");
        assertTrue(!Contender.of("limbo-hash-ebr").ordered());
        assertTrue(Contender.of("cslm").ordered() && !Contender.of("chm").ordered());
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> Contender.of("limbo-hash-no-such-scheme"));
        final IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(
                IllegalArgumentException.class, () -> Contender.of("treemap"));
        assertTrue(e.getMessage().contains("unknown contender 'treemap'"), e.getMessage());
        assertEquals("", Family.INDEX.kind("treemap"));
    }

    /** Ordered and hashed contenders get tables of their own, against cslm and chm. */
    @Test
    void orderedAndHashedContendersAreTabledApart() {
        final String bench = "dev.limbo.bench.index.IndexBench.operation";
        final List<Measurement> ms = List.of(
                measurement(bench, "cslm", 2.0), measurement(bench, "mapdb-btree", 1.0),
                measurement(bench, "chm", 4.0), measurement(bench, "nbhml", 8.0));
        final List<Summary.Group> groups = Summary.groups(ms);
        assertEquals(2, groups.size());
        assertEquals("cslm", groups.get(0).baseline());
        assertEquals(List.of("cslm", "mapdb-btree"), groups.get(0).subjects());
        assertEquals(0.5, groups.get(0).ratio("mapdb-btree", 2), 1e-9);
        assertEquals("chm", groups.get(1).baseline());
        assertEquals(2.0, groups.get(1).ratio("nbhml", 2), 1e-9);
        assertEquals("IndexBench.operation (keys=1000000, kind=hashed, mix=read90)", groups.get(1).title());
        final String md = Report.markdown(new Report.Data(SuiteSpec.quickSuite(), "./limbo bench -f index",
                "2026-01-01T00:00", 75, "2 cores", groups, Map.of(), null, null, List.of(), null, List.of(),
                List.of(), List.of(), List.of("report.md")));
        assertTrue(md.contains("## Off-heap index"), md);
        assertTrue(md.contains("MapDB 3.1.0"), md);
        // 1.5 ms of GC per iteration over 4 measured iterations
        assertTrue(md.contains("| nbhml | 2 | 16.0 | 6.00 | 40.0 | 0 | 40.0 |"), md);
    }

    static Measurement measurement(final String bench, final String contender, final double score) {
        return new Measurement(Family.INDEX, bench, Map.of("contender", contender, "keys", "1000000", "mix", "read90"),
                2, score, 0.1, "ops/us", 4, Map.of("gc.alloc.rate.norm", 16.0, "gcPauseMs", 1.5,
                "heapBytesPerEntry", 40.0, "offHeapBytesPerEntry", 0.0, "bytesPerEntry", 40.0));
    }
}
