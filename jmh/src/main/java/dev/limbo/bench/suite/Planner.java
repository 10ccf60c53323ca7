package dev.limbo.bench.suite;

import dev.limbo.bench.index.Contender;
import dev.limbo.reclaim.Scheme;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Turns the benchmarks found in the jar into the runs of a suite. In the full suite,
 * {@code scheme} parameters take every {@link Scheme#values() Scheme} (plus {@code jdk} where the
 * benchmark declares that baseline), so a scheme added to the enum is benchmarked without edits;
 * the quick suite takes the representatives in {@link #QUICK_SCHEMES}.
 * Benchmarks are found by package ({@link Family}); the quick suite only narrows a few expensive
 * ones, and the full suite gives a few benchmarks the parameter sets of their papers.
 *
 * <p>A benchmark runs its declared {@code @Param} values unless a suite's table lists parameter
 * sets for its class. Each set is one JMH run per thread count over the cross product of its
 * values, so a table with several sets pairs values that a single cross product would mix.
 */
public final class Planner {

    /** The on-heap baseline of the structure benchmarks. */
    public static final String JDK = "jdk";

    /** Quick suite: the allocator benchmarks it runs (short-name patterns; the rest only in full). */
    static final List<Pattern> QUICK_ALLOC = List.of(Pattern.compile("AllocFastPath\\.pair"),
            Pattern.compile("AllocThreadtest\\..*"));
    /**
     * Quick suite: the schemes its benchmarks and timed trials run (the baseline, the two epoch
     * schemes and DEBRA's amortized form, hazard pointers, QSBR and Token-EBR with amortized free);
     * the full suite runs them all.
     */
    static final List<String> QUICK_SCHEMES = List.of("none", "ebr", "debra", "debra-af", "hp", "qsbr",
            "token-af");
    /** Quick suite: the allocators (arena is very slow; it runs only in full). */
    static final List<String> QUICK_ALLOCATORS = List.of("limbo", "malloc", "netty", "bump");
    /** Quick suite: structure benchmarks left out (prefilling 100K keys per fork is too slow for it). */
    static final List<Pattern> QUICK_SKIP = List.of(Pattern.compile("HashMapBench\\..*"));
    /** Quick suite: the threads of the index family (those of its performance bars). */
    static final List<Integer> QUICK_INDEX_THREADS = List.of(2);
    /** Quick suite: the non-Limbo index contenders (the bars' baselines). */
    static final List<String> QUICK_INDEX_BASELINES = List.of("cslm", "chm", "nbhml");
    /** The index mixes; hashed contenders run all but the last (range scans). */
    static final List<String> INDEX_MIXES = List.of("50i50d", "read90", "read100", "scan100");
    /** Quick suite: the index mixes of the ordered contenders (the hashed ones run read90 only). */
    static final List<String> QUICK_INDEX_MIXES = List.of("50i50d", "read90");
    /**
     * The heap of the Limbo contenders' forks: issue 18 asks for 2·10^7 keys in a 1 GiB heap. The
     * other contenders keep IndexBench's {@code @Fork(jvmArgs)} (4 GiB).
     */
    public static final List<String> LIMBO_HEAP = List.of("-Xms1g", "-Xmx1g");

    /**
     * The {@code scheme} values of the cdrc family that are not reclamation schemes: CDRC with
     * snapshots, with counted loads only, and the on-heap baseline of its load/store array.
     */
    public static final List<String> CDRC_SCHEMES = List.of("cdrc", "cdrc-rc", "heap");

    /** Quick suite: parameter sets by benchmark class (parameters not named keep their declared values). */
    static final Map<String, List<Map<String, List<String>>>> QUICK_PARAMS = Map.of(
            "ListBench", List.of(Map.of("updatePercent", List.of("20"))),
            "TreeBench", List.of(Map.of("keyRange", List.of("10000"), "updatePercent", List.of("100"))),
            "IndexBench", indexSets(true),
            "CdrcLoadStore", List.of(Map.of("size", List.of("10"))),
            "CdrcStack", List.of(Map.of("updatePercent", List.of("10"))),
            "CdrcTree", List.of(Map.of("keys", List.of("100000"), "updatePercent", List.of("10"))));
    /**
     * Full suite: parameter sets by benchmark class. TreeBench: CDRC's 100K keys in a 200K range
     * at 1, 10 and 50 % updates, and DEBRA's 50 % insert / 50 % delete at key ranges 10^4 and 10^6.
     * CdrcTree: the paper's 10^5 keys at 1, 10 and 50 % updates, and the large tree (10^7 keys
     * here, the paper's 10^8 scaled down) at 10 % only.
     */
    static final Map<String, List<Map<String, List<String>>>> FULL_PARAMS = Map.of(
            "TreeBench", List.of(
                    Map.of("keyRange", List.of("200000"), "updatePercent", List.of("1", "10", "50")),
                    Map.of("keyRange", List.of("10000", "1000000"), "updatePercent", List.of("100"))),
            "IndexBench", indexSets(false),
            "CdrcTree", List.of(
                    Map.of("keys", List.of("100000"), "updatePercent", List.of("1", "10", "50")),
                    Map.of("keys", List.of("10000000"), "updatePercent", List.of("10"))));

    /**
     * IndexBench's parameter sets: ordered and hashed contenders apart (hashed ones skip the scan
     * mix), Limbo's apart from the others (their forks get {@link #LIMBO_HEAP}). Quick: 10^6 keys,
     * the bars' contenders and mixes; full: every key count, contender and mix.
     */
    static List<Map<String, List<String>>> indexSets(final boolean quick) {
        final List<Map<String, List<String>>> sets = new ArrayList<>();
        for (final boolean ordered : List.of(true, false)) {
            final List<String> mixes = ordered ? (quick ? QUICK_INDEX_MIXES : INDEX_MIXES)
                    : (quick ? List.of("read90") : INDEX_MIXES.subList(0, INDEX_MIXES.size() - 1));
            for (final boolean limbo : List.of(true, false)) {
                final List<String> contenders = Arrays.stream(Contender.Library.values())
                        .filter(l -> l.ordered() == ordered && l.limbo() == limbo).map(Contender.Library::id)
                        .filter(id -> !quick || limbo || QUICK_INDEX_BASELINES.contains(id)).toList();
                final Map<String, List<String>> set = new LinkedHashMap<>();
                set.put("contender", contenders);
                set.put("mix", mixes);
                if (quick) {
                    set.put("keys", List.of("1000000"));
                }
                sets.add(set);
            }
        }
        return sets;
    }

    /**
     * The JVM arguments of a run's forks in place of the benchmark's, or none: {@link #LIMBO_HEAP}
     * where every index contender of the run is Limbo's.
     */
    static List<String> jvmArgs(final BenchmarkInfo b, final Map<String, List<String>> params) {
        final List<String> contenders = params.get("contender");
        if (b.family() != Family.INDEX || contenders == null) {
            return List.of();
        }
        for (final String c : contenders) {
            try {
                if (!Contender.of(c).library().limbo()) {
                    return List.of();
                }
            } catch (final IllegalArgumentException e) {
                return List.of(); // JMH reports the unknown contender
            }
        }
        return LIMBO_HEAP;
    }

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

    /** The schemes {@code spec} runs when none are asked for: {@link #QUICK_SCHEMES} or all of them. */
    public static List<String> schemes(final SuiteSpec spec) {
        return spec.quick() ? QUICK_SCHEMES : allSchemes();
    }

    /** The runs of {@code r} over {@code benchmarks}: by family, benchmark name, parameter set, then threads. */
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
                // A group benchmark runs whole groups: requests that round to the same count run once.
                final Set<Integer> threads = new LinkedHashSet<>();
                for (final int t : family == Family.STAMP_IT ? List.of(1)
                        : family == Family.INDEX && r.spec().quick() ? QUICK_INDEX_THREADS : r.spec().threads()) {
                    threads.add(b.threadsFor(t));
                }
                for (final Map<String, List<String>> overrides : overrides(r, b)) {
                    final Map<String, List<String>> params = new LinkedHashMap<>(b.params());
                    params.putAll(overrides);
                    if (params.values().stream().anyMatch(List::isEmpty)) {
                        continue; // e.g. --schemes jdk for a benchmark without the jdk baseline
                    }
                    for (final int t : threads) {
                        runs.add(new PlannedRun(family, b, t, params, overrides, r.spec(), jvmArgs(b, params)));
                    }
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

    /** The parameters to pass to JMH, one map per parameter set (distinct once the user's -p applied). */
    private static Set<Map<String, List<String>>> overrides(final Request r, final BenchmarkInfo b) {
        final Map<String, List<String>> o = new LinkedHashMap<>();
        final List<String> declaredSchemes = b.params().get("scheme");
        if (declaredSchemes != null && b.family() == Family.CDRC) {
            // the family's own contenders, as declared (CDRC's schemes and the manual ones it is compared with)
            o.put("scheme", r.schemes() == null ? declaredSchemes
                    : declaredSchemes.stream().filter(r.schemes()::contains).toList());
        } else if (declaredSchemes != null) {
            final List<String> ids = r.schemes() != null ? r.schemes() : schemes(r.spec());
            final List<String> schemes = new ArrayList<>();
            if (declaredSchemes.contains(JDK) && (r.schemes() == null || r.schemes().contains(JDK))) {
                schemes.add(JDK);
            }
            for (final String id : ids) {
                if (!id.equals(JDK) && !CDRC_SCHEMES.contains(id)) {
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
        final Set<Map<String, List<String>>> sets = new LinkedHashSet<>();
        final Map<String, List<Map<String, List<String>>>> table = r.spec().quick() ? QUICK_PARAMS : FULL_PARAMS;
        for (final Map<String, List<String>> values : table.getOrDefault(b.className(), List.of(Map.of()))) {
            final Map<String, List<String>> set = new LinkedHashMap<>(o);
            putDeclared(set, values, b);
            putDeclared(set, r.params(), b);
            sets.add(set);
        }
        return sets;
    }

    /** Puts the entries of {@code values} whose parameter {@code b} declares. */
    private static void putDeclared(final Map<String, List<String>> to, final Map<String, List<String>> values,
                                    final BenchmarkInfo b) {
        for (final Map.Entry<String, List<String>> e : values.entrySet()) {
            if (b.params().containsKey(e.getKey())) {
                to.put(e.getKey(), e.getValue());
            }
        }
    }

    /** Expected seconds of all runs. */
    public static double estimateSeconds(final List<PlannedRun> runs) {
        return runs.stream().mapToDouble(PlannedRun::estimateSeconds).sum();
    }
}
