package dev.limbo.bench.alloc;

import dev.limbo.allocator.LimboAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.openjdk.jmh.infra.Control;

import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The hand-off of {@link AllocRemoteBatchFree}, driven without JMH: a worker thread and this thread as reclaimer. */
@Timeout(60)
class AllocRemoteBatchFreeTest {

    private final AllocRemoteBatchFree bench = new AllocRemoteBatchFree();
    private final Control control = new Control();
    private final AllocGauges memory = new AllocGauges();

    private static AllocRemoteBatchFree.HandOff handOff(final String allocator, final String mode) {
        final AllocRemoteBatchFree.HandOff h = new AllocRemoteBatchFree.HandOff();
        h.allocator = allocator;
        h.mode = mode;
        h.prepare(1);
        return h;
    }

    private static int full(final AllocRemoteBatchFree.HandOff h) {
        int n = 0;
        for (int i = 0; i < h.buffers.length; i++) {
            n += h.states.get(i * AllocRemoteBatchFree.STRIDE) == AllocRemoteBatchFree.FULL ? 1 : 0;
        }
        return n;
    }

    @ParameterizedTest
    @CsvSource({"limbo-checked, loop", "limbo-checked, batch", "limbo-flush-all, batch", "limbo-partial-flush, loop",
            "limbo-owner-return, batch", "malloc, batch"})
    void everyBlockAWorkerAllocatesIsFreedOnceByTheReclaimer(final String allocator, final String mode) throws Exception {
        final AllocRemoteBatchFree.HandOff h = handOff(allocator, mode);
        final int rounds = 3 * AllocRemoteBatchFree.DEPTH;
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread worker = Thread.ofPlatform().start(() -> {
            try {
                final AllocRemoteBatchFree.Cursor c = new AllocRemoteBatchFree.Cursor();
                for (int r = 0; r < rounds; r++) {
                    bench.work(h, c, control, memory); // waits whenever it is DEPTH batches ahead
                }
            } catch (final Throwable e) {
                failure.set(e);
            }
        });
        final AllocRemoteBatchFree.Cursor reclaimer = new AllocRemoteBatchFree.Cursor();
        for (int r = 0; r < rounds - 2; r++) {
            bench.reclaim(h, reclaimer, control, memory);
        }
        worker.join();
        assertNull(failure.get());
        assertEquals(2, full(h), "the two batches the reclaimer did not take");
        h.freeLeftovers();
        assertEquals(0, full(h));
        if (h.alloc instanceof LimboAllocator limbo) {
            assertEquals(0, limbo.stats().bytesInUse(), limbo.stats()::toString);
        }
    }

    @Test
    void bothSidesReturnWhenTheMeasurementEndsWhileTheyWait() {
        final AllocRemoteBatchFree.HandOff h = handOff("limbo", "batch");
        final AllocRemoteBatchFree.Cursor worker = new AllocRemoteBatchFree.Cursor();
        for (int r = 0; r < AllocRemoteBatchFree.DEPTH; r++) {
            bench.work(h, worker, control, memory);
        }
        control.stopMeasurement = true;
        assertEquals(0, bench.work(h, worker, control, memory), "every buffer is full: the worker would wait");
        final AllocRemoteBatchFree.Cursor reclaimer = new AllocRemoteBatchFree.Cursor();
        for (int r = 0; r < AllocRemoteBatchFree.DEPTH; r++) {
            bench.reclaim(h, reclaimer, control, memory);
        }
        assertEquals(0, bench.reclaim(h, reclaimer, control, memory), "every buffer is empty: the reclaimer would wait");
        assertEquals(0, full(h));
    }
}
