package dev.limbo.bench.suite;

import dev.limbo.reclaim.Scheme;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PlannerTest {

    static final List<BenchmarkInfo> BENCHMARKS = List.of(
            new BenchmarkInfo("dev.limbo.bench.alloc.AllocFastPath.pair",
                    Map.of("allocator", List.of("limbo", "malloc", "arena", "bump", "netty"), "size", List.of("16"))),
            new BenchmarkInfo("dev.limbo.bench.alloc.AllocLarson.run",
                    Map.of("allocator", List.of("limbo", "malloc"))),
            new BenchmarkInfo("dev.limbo.bench.reclaim.ReclaimGuardPtr.guardPtr",
                    Map.of("scheme", List.of("none", "ebr"))),
            new BenchmarkInfo("dev.limbo.bench.structures.HashMapBench.cdrc",
                    Map.of("scheme", List.of("jdk", "none"))),
            new BenchmarkInfo("dev.limbo.bench.structures.TreeBench.operation",
                    Map.of("scheme", List.of("jdk", "none"), "keyRange", List.of("1000000"),
                            "updatePercent", List.of("100"))),
            new BenchmarkInfo("dev.limbo.bench.Demo.notAFamily", Map.of()));

    static final List<String> ALL = Arrays.stream(Scheme.values()).map(Scheme::id).toList();

    static Planner.Request request(final SuiteSpec spec) {
        return new Planner.Request(spec, EnumSet.allOf(Family.class), null, null, null, Map.of());
    }

    @Test
    void quickSuiteTakesItsSubsetOfBenchmarksAndSchemes() {
        final List<PlannedRun> runs = Planner.plan(request(SuiteSpec.quickSuite()), BENCHMARKS);
        final List<String> names = runs.stream().map(r -> r.benchmark().shortName() + "@" + r.threads()).toList();
        assertEquals(List.of("AllocFastPath.pair@1", "AllocFastPath.pair@2", "ReclaimGuardPtr.guardPtr@1",
                "ReclaimGuardPtr.guardPtr@2", "TreeBench.operation@1", "TreeBench.operation@2"), names);
        assertEquals(List.of("limbo", "malloc", "netty", "bump"), runs.get(0).params().get("allocator"));
        assertEquals(Planner.QUICK_SCHEMES, runs.get(2).params().get("scheme"), "the quick representatives, not @Param");
        final List<String> withJdk = new ArrayList<>(List.of("jdk"));
        withJdk.addAll(Planner.QUICK_SCHEMES);
        assertEquals(withJdk, runs.get(4).params().get("scheme"));
        assertEquals(List.of("10000"), runs.get(4).params().get("keyRange"));
        assertEquals(List.of("10000"), runs.get(4).overrides().get("keyRange"));
        assertEquals(Set.of("10000:100"), shapes(runs.subList(4, 6)));
        assertEquals(withJdk.size() * 2, runs.get(4).forks());
    }

    @Test
    void quickSchemesAreKnownAndTheFullSuiteTakesEverySchemeFromTheEnum() {
        Planner.QUICK_SCHEMES.forEach(Scheme::of);
        assertEquals(ALL, Planner.schemes(SuiteSpec.full(2)));
        assertEquals(ALL, Planner.plan(request(SuiteSpec.full(2)), BENCHMARKS).stream()
                .filter(r -> r.benchmark().shortName().equals("ReclaimGuardPtr.guardPtr")).findFirst().orElseThrow()
                .params().get("scheme"), "schemes come from Scheme.values(), not @Param");
    }

    @Test
    void fullSuiteRunsEveryBenchmarkWithDeclaredParameters() {
        final List<PlannedRun> runs = Planner.plan(request(SuiteSpec.full(2)), BENCHMARKS);
        assertEquals(List.of(1, 2, 4), SuiteSpec.full(2).threads());
        assertEquals((4 + 2) * 3, runs.size(), "TreeBench runs once per parameter set");
        assertTrue(runs.stream().anyMatch(r -> r.benchmark().shortName().equals("HashMapBench.cdrc")));
        final PlannedRun pair = runs.get(0);
        assertEquals(List.of("limbo", "malloc", "arena", "bump", "netty"), pair.params().get("allocator"));
        assertTrue(!pair.overrides().containsKey("allocator"), "declared allocators are JMH's defaults");
        final PlannedRun guard = runs.get(6);
        assertEquals("ReclaimGuardPtr.guardPtr", guard.benchmark().shortName());
        assertEquals(Set.of("scheme"), guard.overrides().keySet(), "no parameter set: declared values");
    }

    /** The full suite's TreeBench: the papers' five shapes, not the cross product of their values. */
    @Test
    void fullSuiteRunsTreeBenchInThePapersShapes() {
        final List<PlannedRun> tree = Planner.plan(request(SuiteSpec.full(2)), BENCHMARKS).stream()
                .filter(r -> r.benchmark().className().equals("TreeBench")).toList();
        assertEquals(List.of(1, 2, 4, 1, 2, 4), tree.stream().map(PlannedRun::threads).toList());
        assertEquals(Set.of("200000:1", "200000:10", "200000:50", "10000:100", "1000000:100"), shapes(tree));
        for (final PlannedRun r : tree) {
            assertEquals(r.params().get("keyRange"), r.overrides().get("keyRange"), "passed to JMH");
            assertEquals(r.params().get("updatePercent"), r.overrides().get("updatePercent"), "passed to JMH");
        }
        assertEquals(3 * (ALL.size() + 1) * 3, tree.get(0).forks());
        assertEquals(3 * (ALL.size() + 1) * 2, tree.get(3).forks());

        final Planner.Request p = new Planner.Request(SuiteSpec.full(2), EnumSet.of(Family.STRUCTURES), null, null,
                Pattern.compile("TreeBench"), Map.of("keyRange", List.of("10000")));
        assertEquals(Set.of("10000:1", "10000:10", "10000:50", "10000:100"), shapes(Planner.plan(p, BENCHMARKS)),
                "-p replaces one parameter in every set");
        final Planner.Request both = new Planner.Request(SuiteSpec.full(2), EnumSet.of(Family.STRUCTURES), null, null,
                Pattern.compile("TreeBench"), Map.of("keyRange", List.of("10000"), "updatePercent", List.of("100")));
        assertEquals(3, Planner.plan(both, BENCHMARKS).size(), "sets made equal by -p run once");
    }

    /** The keyRange:updatePercent combinations that {@code runs} measure. */
    static Set<String> shapes(final List<PlannedRun> runs) {
        final Set<String> shapes = new HashSet<>();
        for (final PlannedRun r : runs) {
            for (final String k : r.params().get("keyRange")) {
                for (final String u : r.params().get("updatePercent")) {
                    shapes.add(k + ":" + u);
                }
            }
        }
        return shapes;
    }

    @Test
    void aGroupBenchmarkRunsWholeGroupsEachThreadCountOnce() {
        final BenchmarkInfo handOff = new BenchmarkInfo("dev.limbo.bench.alloc.AllocRemoteBatchFree.handOff",
                Map.of("allocator", List.of("limbo-owner-return")), 2);
        final List<PlannedRun> runs = Planner.plan(request(SuiteSpec.full(2)), List.of(handOff));
        assertEquals(List.of(2, 4), runs.stream().map(PlannedRun::threads).toList(), "1 and 2 threads are one group");
        assertEquals(3, new BenchmarkInfo("x.y.Z.m", Map.of()).threadsFor(3));
    }

    @Test
    void filtersAndOverrides() {
        final Planner.Request r = new Planner.Request(SuiteSpec.quickSuite(), EnumSet.of(Family.STRUCTURES),
                List.of("debra", "hp"), null, Pattern.compile("HashMap"), Map.of("scheme", List.of("hp")));
        final List<PlannedRun> runs = Planner.plan(r, BENCHMARKS);
        assertEquals(2, runs.size(), "--include lifts the quick subset");
        assertEquals(List.of("hp"), runs.get(0).params().get("scheme"), "-p wins over --schemes");
        final Planner.Request jdkOnly = new Planner.Request(SuiteSpec.quickSuite(),
                EnumSet.of(Family.RECLAIM, Family.STRUCTURES), List.of("jdk"), null, null, Map.of());
        final List<PlannedRun> jdk = Planner.plan(jdkOnly, BENCHMARKS);
        assertTrue(jdk.stream().allMatch(p -> p.family() == Family.STRUCTURES), "the guard benchmark has no jdk");
        assertEquals(List.of("jdk"), jdk.get(0).params().get("scheme"));
    }

    @Test
    void estimates() {
        final SuiteSpec q = SuiteSpec.quickSuite();
        assertEquals(0.3 + 0.4 + SuiteSpec.FORK_OVERHEAD_SECONDS, q.forkSeconds(), 1e-9);
        final List<PlannedRun> runs = Planner.plan(request(q), BENCHMARKS);
        assertEquals(runs.stream().mapToInt(PlannedRun::forks).sum() * q.forkSeconds(), Planner.estimateSeconds(runs),
                1e-9);
        assertEquals(List.of(1, 2, 4, 8, 16, 32), SuiteSpec.sweep(16));
        assertEquals(List.of(1, 2, 4, 8, 12, 16, 24), SuiteSpec.sweep(12));
        assertEquals(List.of(1, 2), SuiteSpec.sweep(1));
    }

    @Test
    void familiesByPackage() {
        assertEquals(Family.ALLOC, Family.ofBenchmark("dev.limbo.bench.alloc.X.y"));
        assertEquals(Family.STRUCTURES, Family.ofBenchmark("dev.limbo.bench.structures.New.op"));
        assertEquals(null, Family.ofBenchmark("dev.limbo.bench.Demo.main"));
        assertEquals(Family.TIMELINE, Family.of(" Timeline "));
        assertEquals(Family.STAMP_IT, Family.ofBenchmark("dev.limbo.bench.stampit.StampItBench.queue"));
        assertEquals(Family.STAMP_IT, Family.of("stamp-it"));
    }

    /** Stamp-it's family reproduces its base-cost figure: one thread, every scheme; the quick suite leaves it out. */
    @Test
    void stampItFamilyRunsAtOneThreadInTheFullSuite() {
        final BenchmarkInfo queue = new BenchmarkInfo("dev.limbo.bench.stampit.StampItBench.queue",
                Map.of("scheme", List.of("none", "stampit")));
        final List<PlannedRun> runs = Planner.plan(request(SuiteSpec.full(2)), List.of(queue));
        assertEquals(1, runs.size());
        assertEquals(1, runs.get(0).threads());
        assertEquals(ALL, runs.get(0).params().get("scheme"));
        assertTrue(!Family.STAMP_IT.quick());
        assertTrue(!Family.CDRC.quick());
        assertTrue(Arrays.stream(Family.values()).filter(f -> f != Family.STAMP_IT && f != Family.CDRC)
                .allMatch(Family::quick));
    }
}
