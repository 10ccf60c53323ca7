package dev.limbo.bench.suite;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SummaryTest {

    static Measurement m(final String bench, final Map<String, String> params, final int threads, final double score,
                         final double error) {
        return new Measurement(Family.ofBenchmark(bench), bench, params, threads, score, error, "ops/us", 4,
                Map.of("unreclaimedNodes", 7.0));
    }

    static final String TREE = "dev.limbo.bench.structures.TreeBench.operation";
    static final String PAIR = "dev.limbo.bench.alloc.AllocFastPath.pair";

    static List<Measurement> sample() {
        return List.of(
                m(TREE, Map.of("scheme", "jdk", "keyRange", "10000"), 1, 12.0, 0.5),
                m(TREE, Map.of("scheme", "none", "keyRange", "10000"), 1, 10.0, 0.2),
                m(TREE, Map.of("scheme", "debra", "keyRange", "10000"), 1, 8.0, Double.NaN),
                m(TREE, Map.of("scheme", "none", "keyRange", "10000"), 2, 20.0, 1.0),
                m(TREE, Map.of("scheme", "debra", "keyRange", "10000"), 2, 15.0, 1.0),
                m(PAIR, Map.of("allocator", "limbo", "size", "16"), 1, 150.0, 3.0),
                m(PAIR, Map.of("allocator", "malloc", "size", "16"), 1, 50.0, 1.0));
    }

    @Test
    void groupsByBenchmarkAndFixedParameters() {
        final List<Summary.Group> groups = Summary.groups(sample());
        assertEquals(2, groups.size());
        final Summary.Group tree = groups.get(0);
        assertEquals("scheme", tree.subject());
        assertEquals("none", tree.baseline());
        assertEquals(List.of("jdk", "none", "debra"), tree.subjects());
        assertEquals(List.of(1, 2), tree.threads());
        assertEquals(Map.of("keyRange", "10000"), tree.fixed());
        assertEquals("TreeBench.operation (keyRange=10000)", tree.title());
        assertEquals(0.8, tree.ratio("debra", 1), 1e-12);
        assertEquals(0.75, tree.ratio("debra", 2), 1e-12);
        assertEquals(1.2, tree.ratio("jdk", 1), 1e-12);
        assertTrue(Double.isNaN(tree.ratio("jdk", 2)), "jdk was not measured at 2 threads");
        final Summary.Group pair = groups.get(1);
        assertEquals("allocator", pair.subject());
        assertEquals("malloc", pair.baseline());
        assertEquals(3.0, pair.ratio("limbo", 1), 1e-12);
    }

    @Test
    void noBaselineWhenItWasNotMeasured() {
        final List<Summary.Group> groups = Summary.groups(List.of(
                m(TREE, Map.of("scheme", "debra"), 1, 8.0, 0.1)));
        assertNull(groups.get(0).baseline());
        assertTrue(Double.isNaN(groups.get(0).ratio("debra", 1)));
    }

    @Test
    void textTableAlignsColumnsAndShowsRatios() {
        final String text = Summary.text(Summary.groups(sample()));
        final String expected = String.join(System.lineSeparator(),
                "structures  TreeBench.operation (keyRange=10000)  [ops/us; x = ratio to none]",
                "  scheme             threads=1            threads=2",
                "  jdk      12.0 ± 0.500  1.20x                    -",
                "  none     10.0 ± 0.200   base   20.0 ± 1.00   base",
                "  debra            8.00  0.80x   15.0 ± 1.00  0.75x",
                "",
                "alloc  AllocFastPath.pair (size=16)  [ops/us; x = ratio to malloc]",
                "  allocator            threads=1",
                "  limbo        150 ± 3.00  3.00x",
                "  malloc      50.0 ± 1.00   base",
                "", "");
        assertEquals(expected, text);
    }

    @Test
    void markdownTables() {
        final Summary.Group tree = Summary.groups(sample()).get(0);
        assertEquals("""
                | scheme | 1 thread | 2 threads |
                |---|---:|---:|
                | jdk | 12.0 ± 0.500  1.20x | - |
                | none | 10.0 ± 0.200   base | 20.0 ± 1.00   base |
                | debra | 8.00  0.80x | 15.0 ± 1.00  0.75x |
                """, Summary.markdown(tree));
        assertEquals("""
                | scheme | 1 thread | 2 threads |
                |---|---:|---:|
                | jdk | - | - |
                | none | 7.00 | 7.00 |
                | debra | 7.00 | 7.00 |
                """, Summary.markdownSecondary(tree, "unreclaimedNodes"));
    }

    @Test
    void aGaugeThatDoesNotApplyToASubjectIsADash() {
        final Summary.Group g = Summary.groups(List.of(
                new Measurement(Family.ALLOC, PAIR, Map.of("allocator", "limbo"), 1, 150.0, 3.0, "ops/us", 4,
                        Map.of("committedMiB", 3.5)),
                new Measurement(Family.ALLOC, PAIR, Map.of("allocator", "malloc"), 1, 50.0, 1.0, "ops/us", 4,
                        Map.of("committedMiB", Double.NaN)))).get(0);
        assertEquals("""
                | allocator | 1 thread |
                |---|---:|
                | limbo | 3.50 |
                | malloc | - |
                """, Summary.markdownSecondary(g, "committedMiB"));
    }

    @Test
    void numbersHaveThreeSignificantDigits() {
        assertEquals("123", Summary.number(123.4));
        assertEquals("12.3", Summary.number(12.34));
        assertEquals("1.23", Summary.number(1.234));
        assertEquals("0.123", Summary.number(0.1234));
        assertEquals("0.00123", Summary.number(0.001234));
        assertEquals("1.23e+07", Summary.number(12_345_678));
        assertEquals("0", Summary.number(0));
        assertEquals("?", Summary.number(Double.NaN));
        assertEquals("1.05x", Summary.ratio(1.049));
        assertEquals("12x", Summary.ratio(12.2));
    }
}
