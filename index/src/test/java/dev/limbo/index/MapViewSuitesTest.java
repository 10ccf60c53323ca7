package dev.limbo.index;

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
import junit.framework.Test;
import junit.framework.TestFailure;
import junit.framework.TestResult;
import junit.framework.TestSuite;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Guava testlib's map suites over the views: {@code ConcurrentNavigableMapTestSuiteBuilder} over
 * {@code asNavigableMap()} of each ordered map, {@code ConcurrentMapTestSuiteBuilder} over
 * {@code asMap()} of every map ({@link IndexMap#all()}). The navigable builder derives sub-map,
 * descending, key-set, entry-set and values suites: about 33,000 JUnit 3 tests per map.
 *
 * <p>Each (map, view) pair is a dynamic container with one dynamic test per top-level part of the
 * suite (the map's own testers, then each derived suite); each prints how many testlib tests it ran
 * and fails listing the first failures. Two costs are avoided: reporting each testlib
 * test to surefire on its own (the vintage engine) took several times the tests' own run time, and
 * each suite is built once and run over every map in turn ({@link LongMapGenerator#use}).
 */
final class MapViewSuitesTest {

    private static final LimboAllocator ALLOCATOR = LimboAllocator.builder().checked(true).build();
    private static final LongMapGenerator.Navigable NAVIGABLE = new LongMapGenerator.Navigable(ALLOCATOR);
    private static final LongMapGenerator PLAIN = new LongMapGenerator(ALLOCATOR);
    private static TestSuite navigableSuite;
    private static TestSuite plainSuite;

    @TestFactory
    Stream<DynamicContainer> testlibSuites() {
        final List<DynamicContainer> suites = new ArrayList<>();
        for (IndexMap kind : IndexMap.all()) {
            // the builders make maps too (closed by the first tear-down)
            if (kind.ordered()) {
                NAVIGABLE.use(kind);
                suites.add(parts(kind + " asNavigableMap", navigableSuite(), () -> NAVIGABLE.use(kind)));
            }
            PLAIN.use(kind);
            suites.add(parts(kind + " asMap", plainSuite(), () -> PLAIN.use(kind)));
        }
        return suites.stream();
    }

    /** One dynamic test per top-level part of a testlib suite (the map's testers, each derived suite). */
    private static DynamicContainer parts(String name, TestSuite suite, Runnable choose) {
        final List<DynamicTest> parts = new ArrayList<>();
        for (Test part : Collections.list(suite.tests())) {
            final String partName = name + ": " + (part instanceof TestSuite s ? s.getName() : part.toString());
            parts.add(DynamicTest.dynamicTest(partName, () -> {
                choose.run();
                run(partName, part);
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
                    .withTearDown(NAVIGABLE::closeAll)
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
                    .withTearDown(PLAIN::closeAll)
                    .createTestSuite();
        }
        return plainSuite;
    }

    /** Runs one testlib suite; fails listing its first failures. */
    private static void run(String name, Test suite) {
        final TestResult result = new TestResult();
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
