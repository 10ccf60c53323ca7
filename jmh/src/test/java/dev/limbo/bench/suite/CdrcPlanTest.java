package dev.limbo.bench.suite;

import dev.limbo.bench.cdrc.CdrcHashMap;
import dev.limbo.bench.cdrc.CdrcList;
import dev.limbo.bench.cdrc.CdrcLoadStore;
import dev.limbo.bench.cdrc.CdrcScheme;
import dev.limbo.bench.cdrc.CdrcStack;
import dev.limbo.bench.cdrc.CdrcTree;
import dev.limbo.reclaim.Scheme;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.annotations.Param;

import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The cdrc family (issue 17's JMH part) plans its own contenders: the {@code scheme} values its
 * benchmarks declare ({@code cdrc}, {@code cdrc-rc} and the manual schemes it is compared with, or
 * {@code heap} for the load/store array), not every {@link Scheme}; {@code --schemes} narrows them,
 * and its ids never reach another family's benchmarks.
 */
class CdrcPlanTest {

    static List<String> declared(final Class<?> type, final String field) throws NoSuchFieldException {
        return List.of(type.getField(field).getAnnotation(Param.class).value());
    }

    static BenchmarkInfo tree() {
        return new BenchmarkInfo("dev.limbo.bench.cdrc.CdrcTree.operation", Map.of("scheme",
                List.of("cdrc", "cdrc-rc", "ebr", "hp", "none"), "keys", List.of("100000"),
                "updatePercent", List.of("1", "10", "50")));
    }

    static BenchmarkInfo loadStore() {
        return new BenchmarkInfo("dev.limbo.bench.cdrc.CdrcLoadStore.loadStore", Map.of("scheme",
                List.of("cdrc", "heap"), "size", List.of("10", "10000000"), "storePercent", List.of("10", "50")));
    }

    static BenchmarkInfo structureTree() {
        return new BenchmarkInfo("dev.limbo.bench.structures.TreeBench.operation",
                Map.of("scheme", List.of("jdk", "none"), "keyRange", List.of("1000000"), "updatePercent", List.of("100")));
    }

    static List<PlannedRun> plan(final SuiteSpec spec, final List<String> schemes, final BenchmarkInfo... bs) {
        return Planner.plan(new Planner.Request(spec, EnumSet.of(Family.CDRC, Family.STRUCTURES), schemes, null, null,
                Map.of()), List.of(bs));
    }

    @Test
    void declaresTheIssuesContenders() throws Exception {
        assertEquals(List.of("cdrc", "cdrc-rc", "ebr", "hp", "none"), declared(CdrcScheme.class, "scheme"));
        for (final String id : declared(CdrcScheme.class, "scheme")) {
            assertTrue(Planner.CDRC_SCHEMES.contains(id) || Scheme.of(id) != null, id);
        }
        assertEquals(List.of("cdrc", "heap"), declared(CdrcLoadStore.Cells.class, "scheme"));
        assertEquals(List.of("10", "10000000"), declared(CdrcLoadStore.Cells.class, "size"));
        assertEquals(List.of("10", "50"), declared(CdrcLoadStore.Cells.class, "storePercent"));
        assertTrue(Planner.CDRC_SCHEMES.containsAll(declared(CdrcLoadStore.Cells.class, "scheme")));
        assertEquals(List.of("1", "10", "50"), declared(CdrcStack.Stacks.class, "updatePercent"));
        assertEquals(List.of("10"), declared(CdrcList.Set.class, "updatePercent"));
        assertEquals(List.of("10"), declared(CdrcHashMap.Map.class, "updatePercent"));
        assertEquals(List.of("100000"), declared(CdrcTree.Tree.class, "keys"), "10^7 through the full suite or -p");
        assertEquals(List.of("1", "10", "50"), declared(CdrcTree.Tree.class, "updatePercent"));
    }

    /** The summary divides by cdrc's throughput and the report tables the space overhead. */
    @Test
    void summaryComparesWithCdrc() {
        final String bench = "dev.limbo.bench.cdrc.CdrcTree.operation";
        final List<Summary.Group> groups = Summary.groups(List.of(
                new Measurement(Family.CDRC, bench, Map.of("scheme", "ebr", "keys", "100000", "updatePercent", "10"), 2,
                        4.0, 0.1, "ops/us", 10, Map.of("unreclaimedNodes", 3000.0)),
                new Measurement(Family.CDRC, bench, Map.of("scheme", "cdrc", "keys", "100000", "updatePercent", "10"), 2,
                        3.0, 0.1, "ops/us", 10, Map.of("unreclaimedNodes", 60.0))));
        assertEquals(1, groups.size());
        assertEquals("cdrc", groups.get(0).baseline());
        assertTrue(groups.get(0).hasSecondary("unreclaimedNodes"));
    }

    @Test
    void familyOfThePackageComparedWithCdrcAndProfiledForHeapAllocation() {
        assertSame(Family.CDRC, Family.ofBenchmark("dev.limbo.bench.cdrc.CdrcList.operation"));
        assertSame(Family.CDRC, Family.of("cdrc"));
        assertEquals("cdrc", Family.CDRC.baseline());
        assertEquals("scheme", Family.CDRC.subject());
        assertTrue(Family.CDRC.profilesGc(), "the load path's bar: ~0 B/op");
        assertTrue(!Family.CDRC.quick(), "the prefills are too large for the default quick run");
    }

    @Test
    void runsItsDeclaredSchemesNotEveryScheme() {
        for (final SuiteSpec spec : List.of(SuiteSpec.quickSuite(), SuiteSpec.full(2))) {
            final List<PlannedRun> runs = plan(spec, null, tree(), loadStore());
            assertTrue(!runs.isEmpty());
            for (final PlannedRun r : runs) {
                final List<String> expected = r.benchmark().className().equals("CdrcTree")
                        ? List.of("cdrc", "cdrc-rc", "ebr", "hp", "none") : List.of("cdrc", "heap");
                assertEquals(expected, r.params().get("scheme"), r.describe());
            }
        }
    }

    @Test
    void schemesNarrowTheFamilyAndItsIdsStayInIt() {
        final List<PlannedRun> runs = plan(SuiteSpec.full(2), List.of("cdrc", "hp"), tree(), loadStore(),
                structureTree());
        final Map<String, List<String>> byClass = new java.util.TreeMap<>();
        runs.forEach(r -> byClass.put(r.benchmark().className(), r.params().get("scheme")));
        assertEquals(List.of("cdrc", "hp"), byClass.get("CdrcTree"));
        assertEquals(List.of("cdrc"), byClass.get("CdrcLoadStore"));
        assertEquals(List.of("hp"), byClass.get("TreeBench"), "cdrc is no reclamation scheme");
        assertTrue(plan(SuiteSpec.full(2), List.of("ebr"), loadStore()).isEmpty(), "no contender left: no run");
    }

    @Test
    void fullSuiteRunsThePapersTreeShapesAndTheQuickSuiteOne() {
        assertEquals(Set.of("100000:1", "100000:10", "100000:50", "10000000:10"),
                shapes(plan(SuiteSpec.full(2), null, tree())));
        assertEquals(Set.of("100000:10"), shapes(plan(SuiteSpec.quickSuite(), null, tree())));
        final List<PlannedRun> quickLoadStore = plan(SuiteSpec.quickSuite(), null, loadStore());
        assertEquals(List.of("10"), quickLoadStore.get(0).params().get("size"));
        assertEquals(List.of("10", "50"), quickLoadStore.get(0).params().get("storePercent"));
        final List<PlannedRun> large = Planner.plan(new Planner.Request(SuiteSpec.full(2), EnumSet.of(Family.CDRC),
                null, null, Pattern.compile("CdrcTree"), Map.of("keys", List.of("10000000"))), List.of(tree()));
        assertEquals(Set.of("10000000:1", "10000000:10", "10000000:50"), shapes(large), "-p replaces keys in each set");
    }

    /** The keys:updatePercent combinations that {@code runs} measure. */
    static Set<String> shapes(final List<PlannedRun> runs) {
        final Set<String> shapes = new HashSet<>();
        for (final PlannedRun r : runs) {
            for (final String k : r.params().get("keys")) {
                for (final String u : r.params().get("updatePercent")) {
                    shapes.add(k + ":" + u);
                }
            }
        }
        return shapes;
    }
}
