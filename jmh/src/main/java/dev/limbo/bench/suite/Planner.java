package dev.limbo.bench.suite;

import dev.limbo.reclaim.Scheme;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Turns the benchmarks found in the jar into the runs of a suite. Nothing here names a scheme:
 * {@code scheme} parameters take every {@link Scheme#values() Scheme} (plus {@code jdk} where the
 * benchmark declares that baseline), so a scheme added to the enum is benchmarked without edits.
 * Benchmarks are found by package ({@link Family}); the quick suite only narrows a few expensive
 * ones.
 */
public final class Planner {

    /** The on-heap baseline of the structure benchmarks. */
    public static final String JDK = "jdk";

    /** Quick suite: the allocator benchmarks it runs (short-name patterns; the rest only in full). */
    static final List<Pattern> QUICK_ALLOC = List.of(Pattern.compile("AllocFastPath\\.pair"),
            Pattern.compile("AllocThreadtest\\..*"));
    /** Quick suite: the allocators (arena is very slow; it runs only in full). */
    static final List<String> QUICK_ALLOCATORS = List.of("limbo", "malloc", "netty", "bump");
    /** Quick suite: structure benchmarks left out (prefilling 100K keys per fork is too slow for it). */
    static final List<Pattern> QUICK_SKIP = List.of(Pattern.compile("HashMapBench\\..*"));
    /** Quick suite: parameter values by benchmark class (the rest keep their declared values). */
    static final Map<String, Map<String, List<String>>> QUICK_PARAMS = Map.of(
            "ListBench", Map.of("updatePercent", List.of("20")),
            "TreeBench", Map.of("keyRange", List.of("10000"), "updatePercent", List.of("100")));

    /**
     * What to plan.
     *
     * @param spec       the suite
     * @param families   families to run
     * @param schemes    scheme ids for {@code scheme} parameters, or null for all of {@link Scheme#values()}
     * @param allocators allocator ids for {@code allocator} parameters, or null for the suite's choice
     * @param include    only benchmarks whose name this finds, or null
     * @param params     parameter values that replace any other choice, by parameter name
     */
    public record Request(SuiteSpec spec, Set<Family> families, List<String> schemes, List<String> allocators,
                          Pattern include, Map<String, List<String>> params) {
        public Request {
            families = families.isEmpty() ? EnumSet.noneOf(Family.class) : EnumSet.copyOf(families);
            params = params == null ? Map.of() : Map.copyOf(params);
        }
    }

    private Planner() {
    }

    /** All scheme ids, in enum order. */
    public static List<String> allSchemes() {
        return Arrays.stream(Scheme.values()).map(Scheme::id).toList();
    }

    /** The runs of {@code r} over {@code benchmarks}: by family, benchmark name, then threads. */
    public static List<PlannedRun> plan(final Request r, final List<BenchmarkInfo> benchmarks) {
        final List<PlannedRun> runs = new ArrayList<>();
        for (final Family family : Family.values()) {
            if (!family.jmh() || !r.families().contains(family)) {
                continue;
            }
            for (final BenchmarkInfo b : benchmarks) {
                if (b.family() != family || !selected(r, b)) {
                    continue;
                }
                final Map<String, List<String>> overrides = overrides(r, b);
                final Map<String, List<String>> params = new LinkedHashMap<>(b.params());
                params.putAll(overrides);
                if (params.values().stream().anyMatch(List::isEmpty)) {
                    continue; // e.g. --schemes jdk for a benchmark without the jdk baseline
                }
                for (final int t : r.spec().threads()) {
                    runs.add(new PlannedRun(family, b, t, params, overrides, r.spec()));
                }
            }
        }
        return runs;
    }

    private static boolean selected(final Request r, final BenchmarkInfo b) {
        if (r.include() != null && !r.include().matcher(b.name()).find()) {
            return false;
        }
        if (!r.spec().quick() || r.include() != null) {
            return true;
        }
        return switch (b.family()) {
            case ALLOC -> QUICK_ALLOC.stream().anyMatch(p -> p.matcher(b.shortName()).matches());
            case STRUCTURES -> QUICK_SKIP.stream().noneMatch(p -> p.matcher(b.shortName()).matches());
            default -> true;
        };
    }

    private static Map<String, List<String>> overrides(final Request r, final BenchmarkInfo b) {
        final Map<String, List<String>> o = new LinkedHashMap<>();
        final List<String> declaredSchemes = b.params().get("scheme");
        if (declaredSchemes != null) {
            final List<String> ids = r.schemes() != null ? r.schemes() : allSchemes();
            final List<String> schemes = new ArrayList<>();
            if (declaredSchemes.contains(JDK) && (r.schemes() == null || r.schemes().contains(JDK))) {
                schemes.add(JDK);
            }
            for (final String id : ids) {
                if (!id.equals(JDK)) {
                    schemes.add(id);
                }
            }
            o.put("scheme", schemes);
        }
        if (b.params().containsKey("allocator")) {
            if (r.allocators() != null) {
                o.put("allocator", r.allocators());
            } else if (r.spec().quick()) {
                o.put("allocator", QUICK_ALLOCATORS);
            }
        }
        if (r.spec().quick()) {
            for (final Map.Entry<String, List<String>> e : QUICK_PARAMS.getOrDefault(b.className(), Map.of()).entrySet()) {
                if (b.params().containsKey(e.getKey())) {
                    o.put(e.getKey(), e.getValue());
                }
            }
        }
        for (final Map.Entry<String, List<String>> e : r.params().entrySet()) {
            if (b.params().containsKey(e.getKey())) {
                o.put(e.getKey(), e.getValue());
            }
        }
        return o;
    }

    /** Expected seconds of all runs. */
    public static double estimateSeconds(final List<PlannedRun> runs) {
        return runs.stream().mapToDouble(PlannedRun::estimateSeconds).sum();
    }
}
