package dev.limbo.bench.suite;

import org.openjdk.jmh.runner.BenchmarkList;
import org.openjdk.jmh.runner.BenchmarkListEntry;
import org.openjdk.jmh.runner.format.OutputFormat;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.VerboseMode;

import java.io.OutputStream;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A JMH benchmark as the bench command sees it: its name, its declared {@code @Param} values and
 * the threads of one of its groups.
 *
 * @param name         package.Class.method, or package.Class.group for an asymmetric benchmark
 * @param params       parameter name to the values its {@code @Param} declares, sorted by name
 * @param groupThreads the threads of one group ({@code @Group} benchmarks); 1 for the others
 */
public record BenchmarkInfo(String name, Map<String, List<String>> params, int groupThreads) {

    public BenchmarkInfo {
        params = java.util.Collections.unmodifiableMap(new TreeMap<>(params));
        if (groupThreads < 1) {
            throw new IllegalArgumentException("a group has at least one thread, was " + groupThreads);
        }
    }

    /** A benchmark that is not a group. */
    public BenchmarkInfo(final String name, final Map<String, List<String>> params) {
        this(name, params, 1);
    }

    /** The threads JMH runs for {@code threads} requested: whole groups, so rounded up to a multiple of a group. */
    public int threadsFor(final int threads) {
        return (threads + groupThreads - 1) / groupThreads * groupThreads;
    }

    /** {@code Class.method}. */
    public String shortName() {
        final int method = name.lastIndexOf('.');
        final int cls = name.lastIndexOf('.', method - 1);
        return name.substring(cls + 1);
    }

    /** The simple class name. */
    public String className() {
        final String s = shortName();
        return s.substring(0, s.indexOf('.'));
    }

    public Family family() {
        return Family.ofBenchmark(name);
    }

    /** Every benchmark compiled into this jar (from JMH's META-INF/BenchmarkList), in name order. */
    public static List<BenchmarkInfo> discover() {
        final OutputFormat silent = OutputFormatFactory.createFormatInstance(
                new PrintStream(OutputStream.nullOutputStream()), VerboseMode.SILENT);
        final Map<String, BenchmarkInfo> byName = new TreeMap<>();
        for (final BenchmarkListEntry e : BenchmarkList.defaultList().getAll(silent, List.of())) {
            final Map<String, List<String>> params = new LinkedHashMap<>();
            if (e.getParams().hasValue()) {
                for (final Map.Entry<String, String[]> p : e.getParams().get().entrySet()) {
                    params.put(p.getKey(), Arrays.asList(p.getValue()));
                }
            }
            byName.putIfAbsent(e.getUsername(), new BenchmarkInfo(e.getUsername(), params,
                    Arrays.stream(e.getThreadGroups()).sum()));
        }
        return List.copyOf(byName.values());
    }
}
