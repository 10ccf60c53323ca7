package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.rc.Cdrc;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;

import static dev.limbo.structures.StructureLifecycle.RESERVED;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every CDRC structure ({@link CdrcKind#values()}: kinds added later join) in both modes, with
 * workers on disjoint parts of it ({@link Workload}), so that every operation's result is checked
 * exactly however the threads interleave. Afterwards the structure holds exactly the union of what
 * the workers left (a stack: every value pushed comes out exactly once), and once the structure
 * and then the domain are closed, the debug allocator's bytes in use are back at the baseline:
 * every node was freed, none while still in use (a poisoned node would break a checked result).
 */
class CdrcMatrixTest {

    /** Operations per worker. */
    private static final int OPS = 10_000;
    /** Keys per worker. */
    private static final int KEYS = 64;

    @ParameterizedTest(name = "{0}, snapshots {1}")
    @MethodSource("dev.limbo.structures.CdrcKind#withBothModes")
    @Timeout(120)
    void disjointWorkers(final CdrcKind kind, final boolean snapshots) throws Exception {
        final CdrcFixture f = new CdrcFixture(kind, snapshots);
        final int workers = 2 + (kind.ordinal() + (snapshots ? 1 : 0)) % 3; // 2 to 4, spread over the matrix
        check(f.rc, f.structure, kind, workers, false, 31L * kind.ordinal() + (snapshots ? 1 : 0));
        f.closeAndCheckMemory();
    }

    /** Many virtual threads (more than carriers, so they are descheduled holding snapshots) on every kind, one domain each. */
    @ParameterizedTest(name = "{0}, snapshots {1}")
    @MethodSource("dev.limbo.structures.CdrcKind#withBothModes")
    @Timeout(120)
    void virtualThreads(final CdrcKind kind, final boolean snapshots) throws Exception {
        final CdrcFixture f = new CdrcFixture(kind, snapshots);
        check(f.rc, f.structure, kind, 16, true, 7);
        f.closeAndCheckMemory();
    }

    /**
     * close() while workers operate: once every worker has done some operations, the main thread
     * closes the structure; each worker then gets the closed-structure exception (and nothing
     * else) from its next operation and stops. Every node is freed once the domain closes too.
     */
    @ParameterizedTest(name = "{0}, snapshots {1}")
    @MethodSource("dev.limbo.structures.CdrcKind#withBothModes")
    @Timeout(60)
    void closeWhileWorkersOperate(final CdrcKind kind, final boolean snapshots) throws Exception {
        final CdrcFixture f = new CdrcFixture(kind, snapshots);
        final int workers = 3;
        final AtomicLongArray done = new AtomicLongArray(workers);
        final Workers<IllegalStateException> running = Workers.start(workers, false, id -> {
            final Workload w = kind.keyed()
                    ? new Workload.Keyed(f.keyed(), true, id, workers, KEYS, 3)
                    : new Workload.Linear(f.linear(), false, id, workers, 3);
            while (true) {
                try {
                    w.step();
                } catch (final IllegalStateException closed) {
                    return closed;
                }
                done.incrementAndGet(id);
            }
        });
        for (int id = 0; id < workers; id++) {
            while (done.get(id) < 500) {
                Thread.onSpinWait();
            }
        }
        f.structure.close();
        for (final IllegalStateException e : running.join()) {
            assertEquals(kind.type.getSimpleName() + " is closed", e.getMessage());
        }
        f.closeAndCheckMemory();
    }

    /**
     * One domain shared by every kind in both modes at once, each structure with workers of its
     * own, all running together: the structures' nodes, types and delayed decrements mix in one
     * acquire-retire instance. Every result is checked, then everything is freed.
     */
    @Test
    @Timeout(120)
    void everyKindSharesOneDomain() throws Exception {
        final LimboAllocator allocator = LimboAllocator.builder().checked(true).debug(true).build();
        final long baseline = allocator.stats().bytesInUse();
        final Cdrc rc = new Cdrc(allocator);
        final List<StructureLifecycle> structures = new ArrayList<>();
        final List<CdrcKind> kinds = new ArrayList<>();
        for (final CdrcKind kind : CdrcKind.values()) {
            for (final boolean snapshots : new boolean[] {true, false}) {
                structures.add(kind.create(rc, snapshots));
                kinds.add(kind);
            }
        }
        final List<Thread> runners = new ArrayList<>();
        final List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
        for (int i = 0; i < structures.size(); i++) {
            final int s = i;
            runners.add(Thread.ofPlatform().start(() -> {
                try {
                    check(rc, structures.get(s), kinds.get(s), 2, false, s);
                } catch (final Throwable e) {
                    failures.add(e);
                }
            }));
        }
        for (final Thread t : runners) {
            t.join();
        }
        assertEquals(List.of(), failures);
        structures.forEach(StructureLifecycle::close);
        rc.close();
        allocator.trim();
        assertEquals(baseline, allocator.stats().bytesInUse(), "bytes in use after closing every structure and the domain");
    }

    /**
     * Runs {@code workers} over {@code s} for {@link #OPS} operations each, each holding the
     * snapshot slots that the kind's operations must leave free (none may be evicted), then checks
     * the contents against the union of the workers' models (keyed) or the values pushed (stack).
     */
    private static void check(final Cdrc rc, final StructureLifecycle s, final CdrcKind kind, final int workers,
                              final boolean virtual, final long seed) throws Exception {
        final int ops = virtual ? 2 * OPS / workers : OPS;
        final int keys = virtual ? KEYS / 4 : KEYS; // a list of 16 workers' keys stays short
        if (kind.keyed()) {
            final LongMapChecks.Subject map = kind.keyed(s);
            final List<Workload.Keyed> done = Workers.run(workers, virtual, id -> {
                final Workload.Keyed w = new Workload.Keyed(map, true, id, workers, keys, seed);
                try (CdrcFixture.Held spare = CdrcFixture.holdSpareSnapshots(rc, kind)) {
                    while (w.steps < ops) {
                        w.step();
                    }
                    assertEquals(0, spare.evictions(), "worker " + id + ": an operation held more than SNAPSHOTS snapshots");
                }
                return w;
            });
            final Map<Long, Long> union = new HashMap<>();
            done.forEach(w -> union.putAll(w.model));
            LongMapChecks.assertContents(map, union);
        } else {
            final Kind.Linear stack = kind.linear(s);
            final List<Workload.Linear> done = Workers.run(workers, virtual, id -> {
                final Workload.Linear w = new Workload.Linear(stack, false, id, workers, seed);
                try (CdrcFixture.Held spare = CdrcFixture.holdSpareSnapshots(rc, kind)) {
                    while (w.steps < ops) {
                        w.step();
                    }
                    assertEquals(0, spare.evictions(), "worker " + id + ": an operation held more than SNAPSHOTS snapshots");
                }
                return w;
            });
            final Workload.Linear drain = new Workload.Linear(stack, false, -1, workers, seed);
            final LongMapChecks.LongList out = new LongMapChecks.LongList();
            for (long v; (v = stack.take()) != RESERVED; ) {
                drain.check(v, "drain");
                out.add(v);
            }
            assertTrue(stack.isEmpty());
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
