package dev.limbo.reclaim;

import static dev.limbo.reclaim.ReclaimTestSupport.RECORD;
import static dev.limbo.reclaim.ReclaimTestSupport.checkNode;
import static dev.limbo.reclaim.ReclaimTestSupport.closeAndMeasure;
import static dev.limbo.reclaim.ReclaimTestSupport.joinAll;
import static dev.limbo.reclaim.ReclaimTestSupport.rethrow;
import static dev.limbo.reclaim.ReclaimTestSupport.runThreads;
import static dev.limbo.reclaim.ReclaimTestSupport.seq;
import static dev.limbo.reclaim.ReclaimTestSupport.writeNode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Participants;
import dev.limbo.core.Words;
import dev.limbo.reclaim.internal.TokenPassEvent;

import java.nio.file.Files;
import java.nio.file.Path;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Token-EBR ({@link TokenEbr}): each variant frees once the token went around; periodic passes in
 * the middle of a free; af frees one record per pin; a holder that goes offline, dies or stays
 * idle does not stop reclamation; and the ring survives a thousand threads joining and leaving.
 * No test sleeps: each waits for the progress it asserts, up to a deadline that fails it.
 */
@Timeout(60)
class TokenEbrTest {

    /** How long a deadline loop waits for the progress it asserts before it fails. */
    private static final long DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(30);

    static Stream<Scheme> tokenSchemes() {
        return Stream.of(Scheme.TOKEN_NAIVE, Scheme.TOKEN_PASSFIRST, Scheme.TOKEN_PERIODIC, Scheme.TOKEN_AF);
    }

    private static ReclaimDomain domain(final Scheme scheme, final LimboAllocator a) {
        return ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).build();
    }

    private static void retireBatch(final ReclaimDomain d, final int n) {
        try (Guard g = d.pin()) {
            for (int i = 0; i < n; i++) {
                g.retire(g.allocate());
            }
        }
    }

    /** Pins until {@code target} records are freed, failing at the deadline; returns the pins it took. */
    private static int pinUntilFreed(final ReclaimDomain d, final long target) {
        final long start = System.nanoTime();
        int pins = 0;
        while (d.stats().freed() < target) {
            if (System.nanoTime() - start > DEADLINE_NANOS) {
                fail("only " + d.stats().freed() + " of " + target + " freed after " + pins + " pins: " + d.stats());
            }
            d.pin().close();
            pins++;
        }
        return pins;
    }

    @ParameterizedTest
    @MethodSource("tokenSchemes")
    void eachVariantFreesWhatWasRetiredOnceTheTokenWentAround(final Scheme scheme) {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = domain(scheme, a);
        try {
            retireBatch(d, 300); // the first pin joins the ring and takes the token: a ring of one
            assertEquals(0, d.stats().freed(), "freed in the section that retired");
            d.pin().close(); // a turn: the batch moves to previous
            assertEquals(0, d.stats().freed(), "freed one turn after the retire: the token had not gone around");
            pinUntilFreed(d, 300);
            assertTrue(d.stats().advances() >= 3, () -> "turns not counted: " + d.stats());
            retireBatch(d, 50);
            d.flush();
            assertEquals(350, d.stats().freed(), () -> "flush left records: " + d.stats());
            assertEquals(0, d.stats().inLimbo());
        } finally {
            d.close();
        }
        assertEquals(baseline, closeAndMeasure(d, a), "bytes in use after close");
    }

    /**
     * A ring of two, driven step by step (this thread and a single-thread executor): a record
     * retired in the operation whose pin passed the token (after the receipt) waits a full extra
     * round, and one retired an operation later is not freed with it; while the other thread does
     * not pin, the token does not come back and nothing is freed (paper §4's two-bag rotation; the
     * off-by-one of the digest's §8.2).
     */
    @ParameterizedTest
    @MethodSource("tokenSchemes")
    void aRecordRetiredAfterAReceiptWaitsAFullExtraRound(final Scheme scheme) throws Exception {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = domain(scheme, a);
        final TokenEbr ring = (TokenEbr) d;
        final ExecutorService other = Executors.newSingleThreadExecutor();
        try {
            final int me = Participants.current();
            d.pin().close(); // joins: a ring of one, the token passed to itself
            final int peer = other.submit(() -> {
                d.pin().close(); // joins; the token stays here
                return Participants.current();
            }).get(30, TimeUnit.SECONDS);
            assertEquals(me, ring.holderNow());
            retireBatch(d, 1); // its pin's turn passed the token to the peer: this retire follows the receipt
            assertEquals(peer, ring.holderNow());
            for (int i = 0; i < 3; i++) {
                d.pin().close(); // no turn: the peer holds the token
            }
            assertEquals(0, d.stats().freed(), "freed while the token was away");
            other.submit(() -> d.pin().close()).get(30, TimeUnit.SECONDS); // the peer passes it back
            retireBatch(d, 1); // a turn: the first record moves to previous; the second goes to current
            assertEquals(0, d.stats().freed(), "a record retired after a receipt was freed at the next receipt");
            other.submit(() -> d.pin().close()).get(30, TimeUnit.SECONDS);
            d.pin().close(); // a turn: frees the first record (token-af: splices it, and frees one)
            assertEquals(1, d.stats().freed(), "the first record, and only it, is freed a full round later");
            other.submit(() -> d.pin().close()).get(30, TimeUnit.SECONDS);
            d.pin().close();
            assertEquals(2, d.stats().freed());
        } finally {
            other.shutdown();
            assertTrue(other.awaitTermination(30, TimeUnit.SECONDS));
            d.close();
        }
        assertEquals(baseline, closeAndMeasure(d, a), "bytes in use after close");
    }

    /**
     * Each turn emits a dev.limbo.TokenPass JFR event while a recording enables it: in a ring of
     * one, the thread passes to itself, and the turn that frees a batch names its size.
     */
    @Test
    void turnsEmitTokenPassEventsWhileRecorded() throws Exception {
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = domain(Scheme.TOKEN_PASSFIRST, a);
        final Path file = Files.createTempFile("token-pass", ".jfr");
        try (Recording recording = new Recording()) {
            recording.enable(TokenPassEvent.NAME);
            recording.start();
            retireBatch(d, 7);
            d.pin().close();
            d.pin().close(); // frees the batch of 7
            recording.stop();
            recording.dump(file);
            final int me = Participants.current();
            final List<RecordedEvent> passes = RecordingFile.readAllEvents(file).stream()
                    .filter(e -> e.getEventType().getName().equals(TokenPassEvent.NAME))
                    .filter(e -> e.getInt("passer") == me)
                    .toList();
            assertTrue(passes.size() >= 3, () -> "token passes recorded: " + passes);
            for (final RecordedEvent e : passes) {
                assertEquals("token-passfirst", e.getString("scheme"));
                assertEquals(me, e.getInt("successor"), "a ring of one passes to itself");
                assertFalse(e.getBoolean("onBehalf"), "a turn is no pass on behalf");
            }
            assertTrue(passes.stream().anyMatch(e -> e.getLong("records") == 7), () -> "no turn freed the batch: " + passes);
        } finally {
            Files.deleteIfExists(file);
            d.close();
        }
    }

    /**
     * token-periodic checks for the token every 100 frees and passes it again if it came back; in a
     * ring of one it always has, so a turn that frees 1,000 records counts ten receipts, while
     * token-passfirst's counts one.
     */
    @Test
    void periodicPassesTheTokenAgainInTheMiddleOfAFree() {
        for (final Scheme scheme : new Scheme[] {Scheme.TOKEN_PERIODIC, Scheme.TOKEN_PASSFIRST}) {
            final LimboAllocator a = LimboAllocator.create();
            final ReclaimDomain d = domain(scheme, a);
            try {
                retireBatch(d, 1_000);
                d.pin().close(); // the batch moves to previous
                final long before = d.stats().advances();
                d.pin().close(); // frees it
                assertEquals(1_000, d.stats().freed(), () -> scheme + ": " + d.stats());
                final long expected = scheme == Scheme.TOKEN_PERIODIC ? 1_000 / TokenEbr.PERIODIC_CHECK : 1;
                assertEquals(expected, d.stats().advances() - before, scheme + ": receipts in the freeing turn");
            } finally {
                d.close();
            }
        }
    }

    /** token-af splices a safe batch into the freeable list and frees one record per pin. */
    @Test
    void amortizedFreesOneRecordPerOperation() {
        final LimboAllocator a = LimboAllocator.create();
        final ReclaimDomain d = ReclaimDomain.builder(Scheme.TOKEN_AF).allocator(a).recordBytes(RECORD)
                .adaptive(false).build();
        try {
            retireBatch(d, 100);
            d.pin().close(); // the batch moves to previous
            for (int i = 1; i <= 100; i++) {
                d.pin().close();
                assertEquals(i, d.stats().freed(), "one free per pin");
            }
        } finally {
            d.close();
        }
    }

    /**
     * A thread that holds the token and then goes offline passes it as it leaves; one that dies
     * holding it is passed over once its nesting shows it outside every section (its id is not
     * even reaped here). Either way the other thread's retires are freed by its pins alone.
     */
    @ParameterizedTest
    @MethodSource("tokenSchemes")
    void aHolderThatGoesOfflineOrDiesDoesNotStopReclamation(final Scheme scheme) throws InterruptedException {
        for (final boolean dies : new boolean[] {false, true}) {
            final LimboAllocator a = LimboAllocator.create();
            final ReclaimDomain d = domain(scheme, a);
            final TokenEbr ring = (TokenEbr) d;
            final CountDownLatch joined = new CountDownLatch(1);
            final CountDownLatch holding = new CountDownLatch(1);
            final AtomicInteger holderId = new AtomicInteger(-1);
            final List<Throwable> failures = new CopyOnWriteArrayList<>();
            try {
                d.pin().close(); // this thread joins and holds the token
                final Thread other = Thread.ofPlatform().name("token-holder").start(() -> {
                    try {
                        d.pin().close(); // joins
                        holderId.set(Participants.current());
                        joined.countDown();
                        assertTrue(holding.await(30, TimeUnit.SECONDS), "not handed the token");
                        if (!dies) {
                            d.offline();
                            assertNotEquals(Participants.current(), ring.holderNow(), "offline kept the token");
                        }
                    } catch (final Throwable t) {
                        failures.add(t);
                    } finally {
                        joined.countDown();
                    }
                });
                assertTrue(joined.await(30, TimeUnit.SECONDS));
                d.pin().close(); // this thread's turn passes the token to the other, its only successor
                assertEquals(holderId.get(), ring.holderNow(), "the token went to the other thread");
                holding.countDown();
                joinAll(List.of(other));
                rethrow(failures);
                retireBatch(d, 10);
                pinUntilFreed(d, 10);
            } finally {
                holding.countDown();
                d.close();
            }
        }
    }

    /**
     * This thread pins once (it joins the ring and holds the token) and then waits, registered,
     * outside every section, as a main thread that filled a structure does. A worker's retires
     * must still be freed by the worker's pins: it passes the token on this thread's behalf.
     */
    @ParameterizedTest
    @MethodSource("tokenSchemes")
    void anIdleRegisteredThreadDoesNotHoldTheTokenHostage(final Scheme scheme) throws InterruptedException {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = domain(scheme, a);
        final long target = 5_000;
        try {
            d.pin().close();
            assertEquals(Participants.current(), ((TokenEbr) d).holderNow());
            runThreads(1, t -> {
                final long start = System.nanoTime();
                while (d.stats().freed() < target) {
                    if (System.nanoTime() - start > DEADLINE_NANOS) {
                        fail("the idle thread held the token: " + d.stats());
                    }
                    retireBatch(d, 1);
                }
            });
            assertTrue(d.stats().scans() > 0, () -> "no pass on the idle thread's behalf: " + d.stats());
            d.flush();
            assertEquals(d.stats().retired(), d.stats().freed(), () -> "flush left records: " + d.stats());
        } finally {
            d.close();
        }
        assertEquals(baseline, closeAndMeasure(d, a), "bytes in use after close");
    }

    /**
     * A thousand threads join the ring, run operations (pin, protect, allocate, publish, retire)
     * and leave: 600 platform threads, four at a time, then 400 virtual threads, 32 at a time (more
     * threads than carriers: members unmounted in and between sections). Participant ids are
     * reused all along. Once all have left, this thread flushes: everything retired is freed, and
     * after close the allocator is back to its baseline.
     */
    @ParameterizedTest
    @MethodSource("tokenSchemes")
    void theRingSurvivesAThousandThreadsJoiningAndLeaving(final Scheme scheme) throws InterruptedException {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = domain(scheme, a);
        final int cellCount = 8;
        final long cells = a.allocateZeroed(cellCount * (long) Long.BYTES);
        final AtomicLong retired = new AtomicLong();
        final int ops = 40;
        boolean closed = false;
        try {
            for (int batch = 0; batch < 150; batch++) {
                final int b = batch;
                runThreads(4, t -> retired.addAndGet(work(d, cells, cellCount, b * 4 + t, ops)));
            }
            final List<Throwable> failures = new CopyOnWriteArrayList<>();
            final List<Thread> virtual = new ArrayList<>();
            // a few dozen alive at once: more than the carriers, few enough to keep participant ids
            // (Participants.highWater(), which other tests' scans walk) low
            final Semaphore alive = new Semaphore(32);
            for (int v = 0; v < 400; v++) {
                final int n = 600 + v;
                assertTrue(alive.tryAcquire(30, TimeUnit.SECONDS), "virtual threads hung");
                virtual.add(Thread.ofVirtual().name("token-churn-" + n).start(() -> {
                    try {
                        retired.addAndGet(work(d, cells, cellCount, n, ops));
                    } catch (final Throwable e) {
                        failures.add(e);
                    } finally {
                        alive.release();
                    }
                }));
            }
            joinAll(virtual);
            rethrow(failures);
            long drained = 0;
            try (Guard g = d.pin()) {
                for (int c = 0; c < cellCount; c++) {
                    final long old = Words.xchg(cells + (long) c * Long.BYTES, 0);
                    if (old != 0) {
                        g.retire(old);
                        drained++;
                    }
                }
            }
            d.flush();
            final ReclaimStats s = d.stats();
            assertEquals(retired.get() + drained, s.retired(), () -> "retired: " + s);
            assertEquals(s.retired(), s.freed(), () -> "not everything was freed once all threads left: " + s);
            assertTrue(s.advances() > 0, () -> "no turns: " + s);
            closed = true;
            assertEquals(baseline, closeAndMeasure(d, a, cells), "bytes in use after close");
        } finally {
            if (!closed) {
                d.close();
                a.free(cells);
            }
        }
    }

    /** {@code ops} operations: each reads a cell's node, replaces it with a fresh one and retires the old. */
    private static long work(final ReclaimDomain d, final long cells, final int cellCount, final int thread,
                             final int ops) {
        long retired = 0;
        for (int k = 0; k < ops; k++) {
            try (Guard g = d.pin()) {
                final long cell = cells + (long) ((k + thread) % cellCount) * Long.BYTES;
                final long seen = g.protect(0, cell);
                if (seen != 0) {
                    assertNull(checkNode(seen));
                }
                final long node = g.allocate();
                writeNode(node, seq(thread, k));
                final long old = Words.xchg(cell, node);
                if (old != 0) {
                    g.retire(old);
                    retired++;
                }
            }
        }
        return retired;
    }
}
