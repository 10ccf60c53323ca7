package dev.limbo.structures;

import dev.limbo.reclaim.Scheme;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Closing a structure: while other threads operate on it, after its domain was closed, and while
 * an operation stays in flight.
 */
class CloseTest {

    /** Workers, and the operations each completes before the structure is closed under them. */
    private static final int WORKERS = 3;
    private static final int OPS_BEFORE_CLOSE = 5_000;
    /** Keys per worker: about half of them are present, so that freeing the nodes takes a while. */
    private static final int KEYS = 1_024;

    /**
     * Workers operate (each result checked exactly) until the structure refuses them; the main
     * thread closes it once each has completed {@value #OPS_BEFORE_CLOSE} operations. The only
     * exception a worker may see is the structure's "closed"; the debug allocator and domain turn a
     * node freed twice, retired twice, or used after its free into a failure; and every byte comes
     * back.
     */
    @ParameterizedTest(name = "{0} over {1}")
    @MethodSource("dev.limbo.structures.Kind#withEveryScheme")
    void closeWhileThreadsOperate(final Kind kind, final Scheme scheme) throws Exception {
        final Fixture f = new Fixture(kind, scheme, true);
        final CountDownLatch progressed = new CountDownLatch(WORKERS);
        final Workers<Long> workers = Workers.start(WORKERS, false, id -> {
            final Workload w = Workload.of(f, id, WORKERS, KEYS, scheme.ordinal());
            try {
                while (true) {
                    w.step();
                    if (w.steps == OPS_BEFORE_CLOSE) {
                        progressed.countDown();
                    }
                }
            } catch (final IllegalStateException e) {
                assertEquals(kind.closedMessage(), e.getMessage(), "the only exception allowed");
                assertTrue(w.steps >= OPS_BEFORE_CLOSE, "closed before this worker's progress");
                return w.steps;
            } finally {
                progressed.countDown(); // a failed worker must not hold the close back
            }
        });
        assertTrue(progressed.await(Workers.TIMEOUT_SECONDS, TimeUnit.SECONDS), "workers made no progress");
        f.structure.close();
        assertTrue(f.structure.isClosed());
        workers.join();
        f.closeAndCheckMemory();
    }

    /**
     * Closing the domain first, then the structure: the structure still frees every node (the
     * domain has let go of its retired ones), refuses operations, and a second close does nothing.
     */
    @ParameterizedTest(name = "{0} over {1}")
    @MethodSource("dev.limbo.structures.Kind#withEveryScheme")
    void closeAfterTheDomainFreesTheNodes(final Kind kind, final Scheme scheme) {
        final Fixture f = new Fixture(kind, scheme, true);
        final Workload w = Workload.of(f, 0, 1, KEYS, 5);
        while (w.steps < 2_000) {
            w.step();
        }
        final long leaked = f.leakedByNone();
        f.domain.close();
        f.structure.close();
        assertTrue(f.structure.isClosed());
        f.assertBytesBack(leaked);
        f.structure.close();
        f.assertBytesBack(leaked);
        final IllegalStateException e = assertThrows(IllegalStateException.class, w::step);
        assertEquals(kind.closedMessage(), e.getMessage());
    }

    /**
     * An operation that stays in flight: close waits for it, refusing new operations meanwhile,
     * and frees the nodes only after it ended; a close whose timeout runs out throws, frees
     * nothing, and can be repeated.
     */
    @ParameterizedTest
    @EnumSource(Kind.class)
    void closeWaitsForAnOperationInFlight(final Kind kind) throws Exception {
        final Fixture f = new Fixture(kind, Scheme.DEBRA, false);
        final Workload w = Workload.of(f, 0, 1, KEYS, 9);
        while (w.steps < 2_000) {
            w.step();
        }
        final long filled = f.allocator.stats().bytesInUse();
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final Workers<Void> operation = Workers.start(1, false, id -> {
            final int stripe = f.structure.enter();
            entered.countDown();
            release.await();
            f.structure.exit(stripe);
            return null;
        });
        assertTrue(entered.await(Workers.TIMEOUT_SECONDS, TimeUnit.SECONDS));

        final IllegalStateException timedOut = assertThrows(IllegalStateException.class,
                () -> f.structure.close(Duration.ofMillis(20)));
        assertEquals(kind.type.getSimpleName() + ".close(): 1 operation still in flight after 20 ms; it refuses "
                        + "new operations but has not freed its nodes: close it again once they have ended",
                timedOut.getMessage().replaceAll("after \\d+ ms", "after 20 ms"));
        assertTrue(f.structure.isClosed());
        final IllegalStateException refused = assertThrows(IllegalStateException.class, w::step);
        assertEquals(kind.closedMessage(), refused.getMessage());
        assertEquals(filled, f.allocator.stats().bytesInUse(), "a timed-out close freed nodes");

        // a close without a timeout to run out: it waits (parked between polls) until the operation ends
        final Workers<Void> closer = Workers.start(1, false, id -> {
            f.structure.close(Duration.ofDays(1));
            return null;
        });
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Workers.TIMEOUT_SECONDS);
        Thread.State state;
        while ((state = closer.thread(0).getState()) != Thread.State.TIMED_WAITING && state != Thread.State.TERMINATED) {
            assertTrue(System.nanoTime() < deadline, "the closer neither waits nor ends: " + state);
            Thread.onSpinWait();
        }
        assertEquals(Thread.State.TIMED_WAITING, state, "close did not wait");
        assertEquals(filled, f.allocator.stats().bytesInUse(), "close freed nodes under an operation in flight");
        release.countDown();
        operation.join();
        closer.join();
        assertTrue(f.allocator.stats().bytesInUse() < filled, "the operation ended, but close freed nothing");
        f.closeAndCheckMemory();
    }

    /** The timeout is checked before anything happens. */
    @ParameterizedTest
    @EnumSource(Kind.class)
    void closeRejectsABadTimeout(final Kind kind) {
        final Fixture f = new Fixture(kind, Scheme.EBR, false);
        assertThrows(NullPointerException.class, () -> f.structure.close(null));
        assertThrows(IllegalArgumentException.class, () -> f.structure.close(Duration.ofMillis(-1)));
        assertFalse(f.structure.isClosed());
        f.closeAndCheckMemory();
    }
}
