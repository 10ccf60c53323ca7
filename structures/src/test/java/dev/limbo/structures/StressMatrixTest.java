package dev.limbo.structures;

import dev.limbo.reclaim.Scheme;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import static dev.limbo.structures.OffHeapStructure.RESERVED;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every structure over every scheme ({@link Scheme#values()}: schemes added later join), with
 * workers on disjoint parts of it ({@link Workload}), so that every operation's result is checked
 * exactly however the threads interleave. Afterwards the structure holds exactly the union of what
 * the workers left (a stack or queue: every value added comes out exactly once), and once closed
 * the allocator's bytes in use are back at the baseline. The other structure tests add contended
 * keys, shape checks and linearizability.
 */
class StressMatrixTest {

    /** Operations per platform worker. */
    private static final int OPS = 20_000;
    /** Keys per worker. */
    private static final int KEYS = 64;

    @ParameterizedTest(name = "{0} over {1}")
    @MethodSource("dev.limbo.structures.Kind#withEveryScheme")
    void disjointWorkers(final Kind kind, final Scheme scheme) throws Exception {
        final int workers = 2 + (kind.ordinal() + scheme.ordinal()) % 3; // 2 to 4, spread over the matrix
        stress(kind, scheme, workers, false, OPS, 0);
    }

    /**
     * Cooperative neutralization (Guard, "Neutralization"): with restarts injected at about one
     * poll in 1,000 (a list's read phase polls up to a few hundred times, and must still end), under every scheme, every operation still returns exactly what the model says
     * and nothing leaks. A structure that lets a {@link dev.limbo.reclaim.Restart} escape, repeats
     * a write after its linearization point or keeps using a window across a restart fails here.
     */
    @ParameterizedTest(name = "{0} over {1}")
    @MethodSource("dev.limbo.structures.Kind#withEveryScheme")
    void restartsInjectedIntoEveryReadPhase(final Kind kind, final Scheme scheme) throws Exception {
        stress(kind, scheme, 2, false, OPS / 4, 1_000);
    }

    /**
     * Neutralization under structure stress: with a suspect threshold of 0 (a debra+ scanner
     * with anything in its current bag neutralizes every thread that holds the epoch back),
     * minCalls 8 and scanThreshold 8 (nbr and nbr+: a round that marks every thread each 8
     * retires), neutralizations happen throughout. Debug allocator and domain: a node freed
     * while a thread still uses it is poisoned, and shows up in the checked results. The workers
     * run their operations and go on until 50 neutralizations were counted; every result still
     * matches the model and nothing leaks.
     */
    @ParameterizedTest(name = "{0} over {1}")
    @MethodSource("dev.limbo.structures.Kind#withNeutralizingSchemes")
    @Timeout(300)
    void neutralizationsUnderStress(final Kind kind, final Scheme scheme) throws Exception {
        final Fixture f = new Fixture(kind, scheme, true, b -> b.suspectThreshold(0).minCalls(8).scanThreshold(8));
        stress(f, 3, false, OPS / 4, () -> f.domain.stats().neutralizations() >= 50);
        assertTrue(f.domain.stats().neutralizations() >= 50, () -> "too few neutralizations: " + f.domain.stats());
        f.closeAndCheckMemory();
    }

    @ParameterizedTest(name = "{0} virtual threads")
    @ValueSource(ints = {16, 64})
    void virtualThreads(final int workers) throws Exception {
        stress(Kind.TREE, Scheme.HP, workers, true, 4 * OPS / workers, 0);
    }

    private static void stress(final Kind kind, final Scheme scheme, final int workers, final boolean virtual,
                               final int ops, final int restartOneIn) throws Exception {
        final Fixture f = new Fixture(kind, scheme, false, restartOneIn);
        stress(f, workers, virtual, ops, null);
        if (restartOneIn > 0) {
            assertTrue(f.domain.stats().restarts() > 0, "no restart was injected");
        }
        f.closeAndCheckMemory();
    }

    /**
     * Runs {@code workers} over {@code f}'s structure, each for {@code ops} operations and then, if
     * {@code enough} is not null, until it holds (asked every 256 operations), and checks the contents.
     */
    private static void stress(final Fixture f, final int workers, final boolean virtual, final int ops,
                               final BooleanSupplier enough) throws Exception {
        final Kind kind = f.kind;
        final long seed = 31L * kind.ordinal() + f.scheme.ordinal();
        if (kind.keyed()) {
            final LongMapChecks.Subject s = f.keyed();
            final List<Workload.Keyed> done = Workers.run(workers, virtual, id -> {
                final Workload.Keyed w = new Workload.Keyed(s, kind.replaces(), id, workers, KEYS, seed);
                while (w.steps < ops || enough != null && (w.steps % 256 != 0 || !enough.getAsBoolean())) {
                    w.step();
                }
                return w;
            });
            final Map<Long, Long> union = new HashMap<>();
            done.forEach(w -> union.putAll(w.model));
            LongMapChecks.assertContents(s, union);
        } else {
            final Kind.Linear s = f.linear();
            final List<Workload.Linear> done = Workers.run(workers, virtual, id -> {
                final Workload.Linear w = new Workload.Linear(s, kind == Kind.QUEUE, id, workers, seed);
                while (w.steps < ops || enough != null && (w.steps % 256 != 0 || !enough.getAsBoolean())) {
                    w.step();
                }
                return w;
            });
            // what the workers left comes out once each, in each producer's order for the queue
            final Workload.Linear drain = new Workload.Linear(s, kind == Kind.QUEUE, -1, workers, seed);
            final LongMapChecks.LongList out = new LongMapChecks.LongList();
            for (long v; (v = s.take()) != RESERVED; ) {
                drain.check(v, "drain");
                out.add(v);
            }
            assertTrue(s.isEmpty());
            final LongMapChecks.LongList in = new LongMapChecks.LongList();
            for (final Workload.Linear w : done) {
                for (long n = 0; n < w.added; n++) {
                    in.add((long) w.id << 32 | n);
                }
                out.addAll(w.taken.toArray());
            }
            final long[] expected = in.toArray();
            final long[] actual = out.toArray();
            Arrays.sort(expected);
            Arrays.sort(actual);
            assertArrayEquals(expected, actual, "a value was lost or taken twice");
        }
    }
}
