package dev.limbo.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.common.collect.testing.ConcurrentMapTestSuiteBuilder;
import com.google.common.collect.testing.ConcurrentNavigableMapTestSuiteBuilder;
import com.google.common.collect.testing.features.CollectionFeature;
import com.google.common.collect.testing.features.CollectionSize;
import com.google.common.collect.testing.features.MapFeature;
import dev.limbo.allocator.LimboAllocator;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;
import junit.framework.AssertionFailedError;
import junit.framework.Test;
import junit.framework.TestFailure;
import junit.framework.TestListener;
import junit.framework.TestResult;
import junit.framework.TestSuite;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Guava testlib's map suites over the views: {@code ConcurrentNavigableMapTestSuiteBuilder} over
 * {@code asNavigableMap()} of each ordered map, {@code ConcurrentMapTestSuiteBuilder} over
 * {@code asMap()} of every map, for the off-heap maps ({@link IndexMap#offHeap()}; the views' code
 * is the same over every map, and the reference map's run of these suites added only time). The navigable builder derives sub-map,
 * descending, key-set, entry-set and values suites: about 33,000 JUnit 3 tests per map.
 *
 * <p>Each (map, view) pair is a dynamic container with one dynamic test per top-level part of the
 * suite (the map's own testers, then each derived suite); each prints how many testlib tests it ran
 * and fails listing the first failures. Two costs are avoided: reporting each testlib
 * test to surefire on its own (the vintage engine) took several times the tests' own run time, and
 * each suite is built once and run over every map in turn ({@link LongMapGenerator#use}), and the
 * maps are cleared and reused from test to test ({@link LongMapGenerator#recycle}): making a new
 * off-heap map (its reclamation domain, its tree) for each of 33,000 tests took minutes.
 */
final class MapViewSuitesTest {

    private static final LimboAllocator ALLOCATOR = LimboAllocator.builder().checked(true).build();
    private static final long BASELINE = ALLOCATOR.stats().bytesInUse();
    private static final LongMapGenerator.Navigable NAVIGABLE = new LongMapGenerator.Navigable(ALLOCATOR);
    private static final LongMapGenerator PLAIN = new LongMapGenerator(ALLOCATOR);
    private static TestSuite navigableSuite;
    private static TestSuite plainSuite;

    /** Every map the suites made is closed, and the allocator is back at its baseline. */
    @AfterAll
    static void closeMaps() {
        NAVIGABLE.closeAll();
        PLAIN.closeAll();
        ALLOCATOR.trim();
        assertEquals(BASELINE, ALLOCATOR.stats().bytesInUse(), "bytes in use after the suites closed their maps");
        ALLOCATOR.close();
    }

    @TestFactory
    Stream<DynamicContainer> testlibSuites() {
        final List<DynamicContainer> suites = new ArrayList<>();
        for (IndexMap kind : IndexMap.offHeap()) {
            // the builders make maps too (kept as spares after the first test)
            if (kind.ordered()) {
                NAVIGABLE.use(kind);
                suites.add(parts(kind + " asNavigableMap", navigableSuite(), kind, NAVIGABLE));
            }
            PLAIN.use(kind);
            suites.add(parts(kind + " asMap", plainSuite(), kind, PLAIN));
        }
        return suites.stream();
    }

    /** One dynamic test per top-level part of a testlib suite (the map's testers, each derived suite). */
    private static DynamicContainer parts(String name, TestSuite suite, IndexMap kind, LongMapGenerator generator) {
        final List<DynamicTest> parts = new ArrayList<>();
        for (Test part : Collections.list(suite.tests())) {
            final String partName = name + ": " + (part instanceof TestSuite s ? s.getName() : part.toString());
            parts.add(DynamicTest.dynamicTest(partName, () -> {
                generator.use(kind);
                run(partName, part, generator);
            }));
        }
        return DynamicContainer.dynamicContainer(name, parts);
    }

    private static TestSuite navigableSuite() {
        if (navigableSuite == null) {
            navigableSuite = ConcurrentNavigableMapTestSuiteBuilder.using(NAVIGABLE)
                    .named("asNavigableMap")
                    .withFeatures(MapFeature.GENERAL_PURPOSE, CollectionFeature.KNOWN_ORDER,
                            CollectionFeature.SUPPORTS_ITERATOR_REMOVE, CollectionSize.ANY)
                    .createTestSuite();
        }
        return navigableSuite;
    }

    private static TestSuite plainSuite() {
        if (plainSuite == null) {
            plainSuite = ConcurrentMapTestSuiteBuilder.using(PLAIN)
                    .named("asMap")
                    .withFeatures(MapFeature.GENERAL_PURPOSE, CollectionFeature.SUPPORTS_ITERATOR_REMOVE,
                            CollectionSize.ANY)
                    .createTestSuite();
        }
        return plainSuite;
    }

    /**
     * Runs one testlib suite, recycling the maps each test made once it ends (the suites' derived
     * parts do not all run a builder's tear-down); fails listing the first failures.
     */
    private static void run(String name, Test suite, LongMapGenerator generator) {
        final TestResult result = new TestResult();
        result.addListener(new TestListener() {
            @Override
            public void addError(Test test, Throwable e) {
            }

            @Override
            public void addFailure(Test test, AssertionFailedError e) {
            }

            @Override
            public void endTest(Test test) {
                generator.recycle();
            }

            @Override
            public void startTest(Test test) {
            }
        });
        suite.run(result);
        final List<String> problems = new ArrayList<>();
        for (TestFailure f : Collections.list(result.failures())) {
            problems.add(f.failedTest() + ": " + f.trace());
        }
        for (TestFailure f : Collections.list(result.errors())) {
            problems.add(f.failedTest() + ": " + f.trace());
        }
        System.out.println(name + ": " + result.runCount() + " testlib tests, " + problems.size() + " failed");
        assertTrue(problems.isEmpty(), () -> name + ": " + problems.size() + " of " + result.runCount()
                + " testlib tests failed; the first:\n"
                + String.join("\n", problems.subList(0, Math.min(5, problems.size()))));
    }
}
