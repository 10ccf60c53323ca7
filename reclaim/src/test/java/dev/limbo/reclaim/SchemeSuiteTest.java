package dev.limbo.reclaim;

import static dev.limbo.reclaim.ReclaimTestSupport.RECORD;
import static dev.limbo.reclaim.ReclaimTestSupport.assertAllFreed;
import static dev.limbo.reclaim.ReclaimTestSupport.checkNode;
import static dev.limbo.reclaim.ReclaimTestSupport.closeAndMeasure;
import static dev.limbo.reclaim.ReclaimTestSupport.drain;
import static dev.limbo.reclaim.ReclaimTestSupport.drainCells;
import static dev.limbo.reclaim.ReclaimTestSupport.debugAllocator;
import static dev.limbo.reclaim.ReclaimTestSupport.exchange;
import static dev.limbo.reclaim.ReclaimTestSupport.leakedBytes;
import static dev.limbo.reclaim.ReclaimTestSupport.leaks;
import static dev.limbo.reclaim.ReclaimTestSupport.replaceAndRetire;
import static dev.limbo.reclaim.ReclaimTestSupport.runThreads;
import static dev.limbo.reclaim.ReclaimTestSupport.seq;
import static dev.limbo.reclaim.ReclaimTestSupport.settle;
import static dev.limbo.reclaim.ReclaimTestSupport.writeNode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.limbo.allocator.AllocatorStats;
import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Participants;
import dev.limbo.core.Words;
import dev.limbo.core.internal.Native;
import dev.limbo.core.testing.Progress;
import java.time.Duration;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAccumulator;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The contract every reclamation scheme must meet, run over every {@link Scheme#values() scheme}
 * (a scheme added to the enum joins automatically): protected nodes are never freed, everything
 * retired is freed once threads are quiescent and flushed (except {@code none}, which leaks by
 * design), thread churn leaks nothing, stalled threads bound or do not bound garbage as each
 * scheme documents, and sections are re-entrant.
 */
@Timeout(60)
class SchemeSuiteTest {

    private static final String ALL = "dev.limbo.reclaim.ReclaimTestSupport#allSchemes";
    /** Shared pointer cells that writers replace and readers protect. */
    private static final int CELLS = 8;
    /**
     * Seconds the sides of a {@link Progress}-gated test may take to reach their targets: far above
     * the second or less they need, and below those tests' own timeout (this plus 60 s), so a
     * starved side is reported by name rather than as a bare timeout.
     */
    private static final int PROGRESS_TIMEOUT = 120;

    // ------------------------------------------------------------------------------------- a

    /**
     * Writers allocate nodes, fill every word with a pattern derived from a unique sequence
     * number, publish them with a CAS into shared cells and retire the node they replaced; readers
     * protect cells in two slots and re-read the nodes several times while spinning. With a debug
     * allocator (freed blocks are poisoned with 0xDB past their first word) and a debug domain
     * (no pool: every free reaches the allocator), a node freed or reused while protected shows up
     * as poison or as a changed pattern. Afterwards every node is accounted for.
     */
    @ParameterizedTest
    @MethodSource(ALL)
    @Timeout(PROGRESS_TIMEOUT + 60)
    void noNodeIsFreedWhileProtectedOrPinned(final Scheme scheme) throws InterruptedException {
        final LimboAllocator a = debugAllocator();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = busyDebugDomain(scheme, a, 2);
        final long cells = a.allocateZeroed(CELLS * (long) Long.BYTES);
        final int writers = 2;
        final int readers = 2;
        // the readers' progress, and frees seen while they run, end the test, not a writer loop
        // count (see Progress); none frees nothing, so it needs no free
        final Progress progress = new Progress(PROGRESS_TIMEOUT, "replacements", 50_000, "nodes read", 2_000,
                "frees seen while running", leaks(scheme) ? 0 : 1);
        boolean closed = false;
        try {
            runThreads(writers + readers, progress, t -> {
                if (t < writers) {
                    for (int k = 0; !progress.done(); k++) {
                        replaceAndRetire(d, cells + (long) ((k * 3 + t) % CELLS) * Long.BYTES, seq(t, k));
                        progress.add(0, 1);
                        if (k % 256 == 255) {
                            progress.observe(2, d.stats().freed());
                        }
                    }
                } else {
                    for (int k = t; !progress.done(); k++) {
                        try (Guard g = d.pin()) {
                            final long p0 = g.protect(0, cells + (long) (k % CELLS) * Long.BYTES);
                            final long p1 = g.protect(1, cells + (long) ((k * 5 + 1) % CELLS) * Long.BYTES);
                            final long s0 = p0 == 0 ? 0 : Words.lp(p0);
                            final long s1 = p1 == 0 ? 0 : Words.lp(p1);
                            String damage = null;
                            for (int round = 0; round < 3; round++) {
                                if (p0 != 0 && damage == null) {
                                    damage = checkNode(p0, s0);
                                }
                                if (p1 != 0 && damage == null) {
                                    damage = checkNode(p1, s1);
                                }
                                for (int spin = 0; spin < 32; spin++) {
                                    Thread.onSpinWait();
                                }
                            }
                            g.poll(); // a neutralizing scheme confirms the reads here, or restarts
                            assertNull(damage);
                            progress.add(1, (p0 != 0 ? 1 : 0) + (p1 != 0 ? 1 : 0));
                        } catch (final Restart neutralized) {
                            // debra+: the read phase was neutralized, its reads are void; read again
                        }
                    }
                }
            });
            // something was freed while the readers ran: progress.done() waited for it
            final long replaced = progress.count(0);
            final long drained = drainCells(d, cells, CELLS);
            d.flush();
            assertAllFreed(scheme, d.stats(), replaced);
            assertTrue(drained > 0 && drained <= CELLS, "drained " + drained);
            closed = true;
            assertEquals(baseline + leakedBytes(scheme, replaced), closeAndMeasure(d, a, cells));
        } finally {
            if (!closed) {
                d.close();
                a.free(cells);
            }
        }
    }

    /**
     * protectIfEqual compares the whole word, marks included: it returns true when the word at the
     * address equals the expected one and false when it differs (another pointer, null, or the same
     * pointer with another mark). A true call protects the pointer without its marks (for hp: in
     * the slot; the epoch schemes protect everything while pinned).
     */
    @ParameterizedTest
    @MethodSource(ALL)
    void protectIfEqualReturnsWhetherTheWordStillEqualsTheExpectedOne(final Scheme scheme) {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).slots(2).build();
        final long cell = a.allocateZeroed(Long.BYTES);
        final long node = d.allocateExclusive();
        final long other = d.allocateExclusive();
        try {
            try (Guard g = d.pin()) {
                g.store(cell, node);
                assertTrue(g.protectIfEqual(0, cell, node), "the word equals the expected pointer");
                assertInSection(d, g, node, true);
                assertFalse(g.protectIfEqual(1, cell, other), "the word holds another pointer");
                assertFalse(g.protectIfEqual(1, cell, 0), "the word is not null");
                g.store(cell, node | 1);
                assertFalse(g.protectIfEqual(0, cell, node), "the word carries a mark the expected one lacks");
                assertTrue(g.protectIfEqual(0, cell, node | 1), "the word equals the expected one, mark included");
                assertInSection(d, g, node, true);
                g.store(cell, 0);
                assertFalse(g.protectIfEqual(1, cell, node | 1), "the word became null");
            }
        } finally {
            d.freeExclusive(node);
            d.freeExclusive(other);
        }
        assertEquals(baseline, closeAndMeasure(d, a, cell));
    }

    /**
     * A node protected with protectIfEqual is not freed while protected: this thread reads the
     * cell, protects the word it read, and stays in its section while another thread unlinks and
     * retires the node and flushes (hp: scans) over and over. The node keeps its pattern (debug
     * allocator: poisoned if freed) until the section ends; then a flush frees it. A neutralizing
     * scheme may free it sooner, but only after neutralizing this thread, whose poll then restarts
     * ({@link #assertProtectedOrNeutralized}).
     */
    @ParameterizedTest
    @MethodSource(ALL)
    void aNodeProtectedByProtectIfEqualSurvivesAConcurrentRetireAndFlush(final Scheme scheme)
            throws InterruptedException {
        final LimboAllocator a = debugAllocator();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).debug(true)
                .scanThreshold(1).minCalls(1).build();
        final long cell = a.allocateZeroed(Long.BYTES);
        boolean closed = false;
        try {
            final long node = d.allocateExclusive();
            writeNode(node, seq(0, 9));
            try (Guard g = d.pin()) {
                g.store(cell, node);
                final long seen = Words.la(cell);
                assertTrue(g.protectIfEqual(0, cell, seen));
                runThreads(1, t -> {
                    try (Guard h = d.pin()) {
                        h.retire(exchange(h, cell, 0));
                    }
                    for (int i = 0; i < 50; i++) {
                        try (Guard h = d.pin()) {
                            h.protect(0, cell);
                        }
                        d.flush();
                    }
                });
                assertProtectedOrNeutralized(d, g, seen, seq(0, 9));
            }
            d.flush(); // adopts the dead thread's retired node; the section has ended
            assertAllFreed(scheme, d.stats(), 1);
            closed = true;
            assertEquals(baseline + leakedBytes(scheme, 1), closeAndMeasure(d, a, cell));
        } finally {
            if (!closed) {
                d.close();
                a.free(cell);
            }
        }
    }

    /**
     * protectIfEqual under concurrency: writers replace and retire nodes in shared cells (flushing
     * now and then; scans and advances are frequent); readers read a cell's word, protect it with
     * protectIfEqual and, when that succeeds, re-read the node while spinning. With the debug
     * allocator and a debug domain, a node freed or reused while so protected shows up as poison
     * or a changed pattern.
     */
    @ParameterizedTest
    @MethodSource(ALL)
    @Timeout(PROGRESS_TIMEOUT + 60)
    void noNodeIsFreedWhileProtectedByProtectIfEqual(final Scheme scheme) throws InterruptedException {
        final LimboAllocator a = debugAllocator();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = busyDebugDomain(scheme, a, 1);
        final long cells = a.allocateZeroed(CELLS * (long) Long.BYTES);
        final int writers = 2;
        final int readers = 2;
        // the readers' progress, not a writer loop count, ends the test (see Progress)
        final Progress progress = new Progress(PROGRESS_TIMEOUT, "replacements", 20_000, "nodes checked", 2_000);
        boolean closed = false;
        try {
            runThreads(writers + readers, progress, t -> {
                if (t < writers) {
                    for (int k = 0; !progress.done(); k++) {
                        replaceAndRetire(d, cells + (long) ((k * 3 + t) % CELLS) * Long.BYTES, seq(t, k));
                        progress.add(0, 1);
                        if (k % 64 == 63) {
                            d.flush();
                        }
                    }
                } else {
                    for (int k = t; !progress.done(); k++) {
                        try (Guard g = d.pin()) {
                            final long cell = cells + (long) (k % CELLS) * Long.BYTES;
                            final long seen = Words.la(cell);
                            if (seen != 0 && g.protectIfEqual(0, cell, seen)) {
                                final long seq = Words.lp(seen);
                                String damage = null;
                                for (int round = 0; round < 3; round++) {
                                    if (damage == null) {
                                        damage = checkNode(seen, seq);
                                    }
                                    for (int spin = 0; spin < 32; spin++) {
                                        Thread.onSpinWait();
                                    }
                                }
                                g.poll(); // a neutralizing scheme confirms the reads here, or restarts
                                assertNull(damage);
                                progress.add(1, 1);
                            }
                        } catch (final Restart neutralized) {
                            // debra+: the read phase was neutralized, its reads are void; read again
                        }
                    }
                }
            });
            final long drained = drainCells(d, cells, CELLS);
            d.flush();
            assertAllFreed(scheme, d.stats(), progress.count(0));
            assertTrue(drained > 0 && drained <= CELLS, "drained " + drained);
            closed = true;
            assertEquals(baseline + leakedBytes(scheme, d.stats().retired()), closeAndMeasure(d, a, cells));
        } finally {
            if (!closed) {
                d.close();
                a.free(cells);
            }
        }
    }

    /** The offset of the declared link in the nodes of {@link #linkedNodesStayWhileProtectedAndGoWithTheirHead}. */
    static final long LINK = Long.BYTES;

    /**
     * Nodes with a declared link ({@link ReclaimDomain#declareLinks}): writers publish pairs, a
     * head whose link (written with the guard's initLink) holds a fresh tail, in shared cells, and
     * retire both nodes of the pair they replace; readers protect a cell's head (slot 0), then its
     * tail through the head's link (slot 1), confirm that the cell still holds the head (so that a
     * scheme needing validation published slot 1 before the tail was retired), and re-read both
     * while spinning. A counting scheme frees the tail in the destructor of its head, when the
     * head's count reaches zero; every scheme keeps both intact while they are protected (debug
     * allocator and domain: poison or a changed pattern shows a premature free), and afterwards
     * every node is accounted for.
     */
    @ParameterizedTest
    @MethodSource(ALL)
    @Timeout(PROGRESS_TIMEOUT + 60)
    void linkedNodesStayWhileProtectedAndGoWithTheirHead(final Scheme scheme) throws InterruptedException {
        final LimboAllocator a = debugAllocator();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = busyDebugDomain(scheme, a, 2);
        d.declareLinks(LINK);
        final long cells = a.allocateZeroed(CELLS * (long) Long.BYTES);
        final AtomicLong retired = new AtomicLong();
        final Progress progress = new Progress(PROGRESS_TIMEOUT, "pairs replaced", 20_000, "pairs checked", 2_000,
                "frees seen while running", leaks(scheme) ? 0 : 1);
        boolean closed = false;
        try {
            runThreads(4, progress, t -> {
                if (t < 2) {
                    for (int k = 0; !progress.done(); k++) {
                        try (Guard g = d.pin()) {
                            final long tail = g.allocate();
                            writeLinked(g, tail, seq(t, 2L * k), 0);
                            final long head = g.allocate();
                            writeLinked(g, head, seq(t, 2L * k + 1), tail);
                            final long old = exchange(g, cells + (long) ((k * 3 + t) % CELLS) * Long.BYTES, head);
                            if (old != 0) {
                                final long oldTail = Words.lp(old + LINK);
                                g.retire(old);
                                g.retire(oldTail);
                                retired.addAndGet(2);
                            }
                        }
                        progress.add(0, 1);
                        if (k % 256 == 255) {
                            progress.observe(2, d.stats().freed());
                        }
                    }
                } else {
                    for (int k = t; !progress.done(); k++) {
                        try (Guard g = d.pin()) {
                            final long cell = cells + (long) (k % CELLS) * Long.BYTES;
                            final long head = g.protect(0, cell);
                            if (head == 0) {
                                continue;
                            }
                            final long tail = g.protect(1, head + LINK);
                            if (Words.la(cell) != head) {
                                continue; // replaced meanwhile: the tail may have been retired before slot 1
                            }
                            final long headSeq = Words.lp(head);
                            final long tailSeq = Words.lp(tail);
                            String damage = null;
                            for (int round = 0; round < 3 && damage == null; round++) {
                                damage = checkLinked(head, headSeq, tail);
                                if (damage == null) {
                                    damage = checkLinked(tail, tailSeq, 0);
                                }
                                for (int spin = 0; spin < 32; spin++) {
                                    Thread.onSpinWait();
                                }
                            }
                            g.poll(); // a neutralizing scheme confirms the reads here, or restarts
                            assertNull(damage);
                            progress.add(1, 1);
                        } catch (final Restart neutralized) {
                            // debra+: the read phase was neutralized, its reads are void; read again
                        }
                    }
                }
            });
            try (Guard g = d.pin()) {
                for (int c = 0; c < CELLS; c++) {
                    final long old = exchange(g, cells + (long) c * Long.BYTES, 0);
                    if (old != 0) {
                        final long oldTail = Words.lp(old + LINK);
                        assertNull(checkLinked(old, Words.lp(old), oldTail));
                        g.retire(old);
                        g.retire(oldTail);
                        retired.addAndGet(2);
                    }
                }
            }
            d.flush();
            assertAllFreed(scheme, d.stats(), retired.get());
            closed = true;
            assertEquals(baseline + leakedBytes(scheme, retired.get()), closeAndMeasure(d, a, cells));
        } finally {
            if (!closed) {
                d.close();
                a.free(cells);
            }
        }
    }

    /** Writes a linked node: {@code seq} in word 0, {@code target} in its link (counted), the pattern in the rest. */
    static void writeLinked(final Guard g, final long node, final long seq, final long target) {
        Words.sp(node, seq);
        g.initLink(node + LINK, target);
        for (int i = 2; i < ReclaimTestSupport.WORDS; i++) {
            Words.sp(node + (long) i * Long.BYTES, ReclaimTestSupport.patternWord(seq, i));
        }
    }

    /** {@link ReclaimTestSupport#checkNode} for a linked node whose link holds {@code target}. */
    private static String checkLinked(final long node, final long seq, final long target) {
        for (int i = 0; i < ReclaimTestSupport.WORDS; i++) {
            final long v = Words.lp(node + (long) i * Long.BYTES);
            final long want = i == 0 ? seq : i == 1 ? target : ReclaimTestSupport.patternWord(seq, i);
            if (v != want) {
                return String.format(java.util.Locale.ROOT,
                        "node 0x%x word %d is 0x%x, expected 0x%x: it was freed or reused while protected%s",
                        node, i, v, want, v == ReclaimTestSupport.POISON ? " (poisoned)" : "");
            }
        }
        return null;
    }

    // ------------------------------------------------------------------------------------- b

    /**
     * With the pool in front of the allocator (not debug): threads mix pins, protects,
     * allocations and retires, then terminate; the main thread adopts what they left (flush reaps
     * dead threads), and afterwards retired == freed and memory returns to its baseline on close.
     */
    @ParameterizedTest
    @MethodSource(ALL)
    void everythingRetiredIsFreedOnceThreadsAreQuiescentAndFlushed(final Scheme scheme)
            throws InterruptedException {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).build();
        final long cells = a.allocateZeroed(CELLS * (long) Long.BYTES);
        final int threads = 3;
        final int ops = 20_000;
        final AtomicLong retiredByWorkers = new AtomicLong();
        boolean closed = false;
        try {
            runThreads(threads, t -> {
                long retired = 0;
                for (int k = 0; k < ops; k++) {
                    try (Guard g = d.pin()) {
                        final long cell = cells + (long) ((k + t) % CELLS) * Long.BYTES;
                        readConfirmed(g, cell); // checks the node the cell holds, if any
                        if (k % 3 != 0) {
                            final long node = g.allocate();
                            writeNode(node, seq(t, k));
                            final long old = exchange(g, cell, node);
                            if (old != 0) {
                                g.retire(old);
                                retired++;
                            }
                        } else {
                            // a node that is never published may be retired directly
                            final long node = g.allocate();
                            g.retire(node);
                            retired++;
                        }
                    }
                }
                retiredByWorkers.addAndGet(retired);
            });
            final long drained = drainCells(d, cells, CELLS);
            d.flush();
            final ReclaimStats s = d.stats();
            assertAllFreed(scheme, s, retiredByWorkers.get() + drained);
            if (!leaks(scheme)) {
                assertTrue(s.freed() >= (long) threads * ops * 2 / 3, () -> "too few frees: " + s);
            }
            closed = true;
            assertEquals(baseline + leakedBytes(scheme, s.retired()), closeAndMeasure(d, a, cells));
        } finally {
            if (!closed) {
                d.close();
                a.free(cells);
            }
        }
    }

    /**
     * Threads retire nodes and die without any flush; the main thread, which never pinned the
     * domain, only reaps them and closes the domain. close() must still free the orphaned
     * retired nodes, the pool's shared stack and the orphans' blocks.
     */
    @ParameterizedTest
    @MethodSource(ALL)
    void closeFreesWhatDepartedThreadsLeftEvenIfNoThreadIsRegistered(final Scheme scheme)
            throws InterruptedException {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).build();
        final AtomicLong retired = new AtomicLong();
        try {
            runThreads(2, t -> {
                for (int k = 0; k < 3_000; k++) {
                    try (Guard g = d.pin()) {
                        g.retire(g.allocate());
                    }
                }
                retired.addAndGet(3_000);
            });
            Participants.reapTerminated();
            Participants.awaitReleases();
            assertEquals(retired.get(), d.stats().retired());
        } finally {
            d.close();
        }
        assertEquals(baseline + leakedBytes(scheme, retired.get()), closeAndMeasure(d, a));
    }

    /**
     * A departed thread's leftovers are handed on by whichever thread releases its participant id:
     * often the JDK's Cleaner thread, which never exits, or a thread in the middle of claiming an
     * id. The domain's release hook must free through paths that need no thread cache, or it
     * parks memory in that thread's allocator cache, where no trim reaches it (and a claiming
     * thread re-enters its own claim). Here a long-lived thread that never used the allocator
     * does the reaping; afterwards no memory may sit in any allocator cache.
     */
    @ParameterizedTest
    @MethodSource(ALL)
    void departuresReapedByALongLivedThreadParkNoMemoryInItsAllocatorCache(final Scheme scheme)
            throws InterruptedException {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).build();
        final CountDownLatch reaped = new CountDownLatch(1);
        final CountDownLatch exit = new CountDownLatch(1);
        Thread keeper = null;
        final long retired = 5_000;
        try {
            runThreads(1, t -> {
                for (int k = 0; k < retired; k++) {
                    try (Guard g = d.pin()) {
                        g.retire(g.allocate());
                    }
                }
            });
            keeper = Thread.ofPlatform().name("keeper").start(() -> {
                Participants.reapTerminated();
                Participants.awaitReleases();
                reaped.countDown();
                try {
                    exit.await();
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertTrue(reaped.await(30, TimeUnit.SECONDS));
            d.flush();
            assertAllFreed(scheme, d.stats(), retired);
            d.close();
            assertEquals(baseline + leakedBytes(scheme, retired), settle(a));
            final AllocatorStats s = a.stats();
            assertEquals(0, s.cachedBytes(), () -> "memory left in the reaping thread's allocator cache: " + s);
        } finally {
            exit.countDown();
            if (keeper != null) {
                keeper.join();
            }
            d.close();
        }
    }

    // ------------------------------------------------------------------------------------- c

    /**
     * 400 short-lived platform threads (4 at a time) each pin, protect, allocate, publish and
     * retire some nodes and exit. Nothing they leave behind leaks: after a flush every retired
     * node is freed, and after close the allocator is back to its baseline (plus, for none, the
     * retired nodes).
     */
    @ParameterizedTest
    @MethodSource(ALL)
    void threadChurnLeaksNothing(final Scheme scheme) throws InterruptedException {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).build();
        final long cells = a.allocateZeroed(CELLS * (long) Long.BYTES);
        final int batches = 100;
        final int parallel = 4;
        final int perThread = 30;
        final AtomicLong retired = new AtomicLong();
        boolean closed = false;
        try {
            for (int b = 0; b < batches; b++) {
                final int batch = b;
                runThreads(parallel, t -> retired.addAndGet(
                        churnWork(d, cells, batch * parallel + t, perThread)));
            }
            final long drained = drainCells(d, cells, CELLS);
            d.flush();
            final ReclaimStats s = d.stats();
            assertAllFreed(scheme, s, retired.get() + drained);
            assertEquals((long) batches * parallel * perThread, s.retired());
            closed = true;
            assertEquals(baseline + leakedBytes(scheme, s.retired()), closeAndMeasure(d, a, cells));
        } finally {
            if (!closed) {
                d.close();
                a.free(cells);
            }
        }
    }

    /**
     * Threads give up their participant id with {@link Participants#close()} half-way and go on:
     * the domain adopts their first guard's leftovers at once, the next pin registers a fresh
     * guard, and nothing leaks.
     */
    @ParameterizedTest
    @MethodSource(ALL)
    void threadsThatCloseTheirParticipantIdAndContinueLeakNothing(final Scheme scheme)
            throws InterruptedException {
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).build();
        final long cells = a.allocateZeroed(CELLS * (long) Long.BYTES);
        final AtomicLong retired = new AtomicLong();
        boolean closed = false;
        try {
            for (int b = 0; b < 25; b++) {
                final int batch = b;
                runThreads(4, t -> {
                    final Guard first;
                    try (Guard g = d.pin()) {
                        first = g;
                    }
                    retired.addAndGet(churnWork(d, cells, batch * 8 + t, 40));
                    Participants.close();
                    final Guard second;
                    try (Guard g = d.pin()) {
                        second = g;
                        assertEquals(1, g.depth());
                    }
                    assertNotSame(first, second, "the guard of a released participant id was reused");
                    retired.addAndGet(churnWork(d, cells, batch * 8 + 4 + t, 40));
                });
            }
            final long drained = drainCells(d, cells, CELLS);
            d.flush();
            final ReclaimStats s = d.stats();
            assertAllFreed(scheme, s, retired.get() + drained);
            assertEquals(25L * 4 * 80, s.retired());
            closed = true;
            assertEquals(baseline + leakedBytes(scheme, s.retired()), closeAndMeasure(d, a, cells));
        } finally {
            if (!closed) {
                d.close();
                a.free(cells);
            }
        }
    }

    /**
     * A thread that gave up its participant id while pinned would have its section ended under it
     * (the domain clears a released id's announcement and hazard slots) and its later unpin would
     * write into the slots of the id's next holder. So {@link Participants#close()} refuses while
     * the thread is pinned: it throws, and the thread keeps its id and its section (a node it
     * protects survives another thread's retire and flushes, or, with a neutralizing scheme, is
     * freed only after the thread was neutralized). After the unpin the close succeeds.
     */
    @ParameterizedTest
    @MethodSource(ALL)
    void closingTheParticipantIdWhilePinnedThrowsAndKeepsTheSection(final Scheme scheme)
            throws InterruptedException {
        final LimboAllocator a = debugAllocator();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).debug(true)
                .scanThreshold(1).minCalls(1).build();
        final long cell = a.allocateZeroed(Long.BYTES);
        boolean closed = false;
        try {
            final long node = d.allocateExclusive();
            writeNode(node, seq(0, 7));
            publish(d, cell, node);
            runThreads(1, t -> {
                final int id = Participants.current();
                final Guard g = d.pin();
                try {
                    assertEquals(node, g.protect(0, cell));
                    final IllegalStateException refused = assertThrows(IllegalStateException.class,
                            Participants::close, "Participants.close() while pinned");
                    assertTrue(refused.getMessage().contains("pinned"), refused.getMessage());
                    assertEquals(id, Participants.current(), "the participant id was released");
                    assertEquals(1, g.depth());
                    assertInSection(d, g, node, true);
                    runThreads(1, u -> {
                        try (Guard h = d.pin()) {
                            h.retire(exchange(h, cell, 0));
                        }
                        for (int i = 0; i < 20; i++) {
                            d.flush();
                        }
                    });
                    assertProtectedOrNeutralized(d, g, node, seq(0, 7));
                } catch (final InterruptedException e) {
                    throw new AssertionError(e);
                } finally {
                    g.close();
                }
                assertInSection(d, g, node, false);
                Participants.close();
            });
            d.flush();
            assertAllFreed(scheme, d.stats(), 1);
            closed = true;
            assertEquals(baseline + leakedBytes(scheme, 1), closeAndMeasure(d, a, cell));
        } finally {
            if (!closed) {
                d.close();
                a.free(cell);
            }
        }
    }

    /**
     * Allocates {@code n} nodes, publishes them in the cells and retires what they replace, each in a
     * section that first reads another cell as a read phase does (confirmed by a poll,
     * {@link #readConfirmed}); returns the number retired.
     */
    private static long churnWork(final ReclaimDomain d, final long cells, final int thread, final int n) {
        long retired = 0;
        for (int k = 0; k < n; k++) {
            try (Guard g = d.pin()) {
                final long cell = cells + (long) ((k + thread) % CELLS) * Long.BYTES;
                readConfirmed(g, cells + (long) ((k * 7 + thread + 3) % CELLS) * Long.BYTES);
                final long node = g.allocate();
                writeNode(node, seq(thread, k));
                final long old = exchange(g, cell, node);
                if (old != 0) {
                    g.retire(old);
                    retired++;
                }
            }
        }
        return retired;
    }

    /**
     * The epoch schemes' invariant, checked directly: while a thread is pinned at local epoch e,
     * the global epoch stays at most e + 1 (else nodes it retires would be freed at once and nodes
     * it reads could be freed under it). Threads outnumber cores and the epoch advances as often as
     * the scheme allows, so threads are often preempted between reading the epoch and announcing
     * it. Both fence modes: symmetric (a fence per pin), and asymmetric (no fence per pin, a
     * membarrier per epoch, here with no rationing so that epochs advance often).
     */
    @ParameterizedTest
    @MethodSource("dev.limbo.reclaim.ReclaimTestSupport#epochSchemes")
    @Timeout(2 * PROGRESS_TIMEOUT + 60) // two Progress-gated runs, one per fence mode
    void whilePinnedTheEpochAdvancesAtMostOnce(final Scheme scheme) throws InterruptedException {
        for (final boolean asymmetric : new boolean[] {false, true}) {
            final LimboAllocator a = LimboAllocator.create();
            final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).scanThreshold(1)
                    .minCalls(1).asymmetricFence(asymmetric).heavyBarrierInterval(Duration.ZERO).build();
            try {
                assertEquals(asymmetric && Native.MEMBARRIER, d.asymmetricFence, "fence mode");
                final EpochDomain epochs = (EpochDomain) d;
                final AtomicLong violations = new AtomicLong();
                final AtomicLong maxLead = new AtomicLong();
                // the pins and the advances end the run, not a loop count per thread: a thread
                // preempted while pinned holds the epoch back, and the others must not finish
                // their loops meanwhile and leave too few advances to have tested anything
                final Progress progress = new Progress(PROGRESS_TIMEOUT, "pins", 160_000, "advances", 51);
                runThreads(4, progress, t -> {
                    for (int i = 0; !progress.done(); i++) {
                        if ((i & 255) == 255) {
                            progress.add(0, 256);
                            progress.observe(1, epochs.advances());
                        }
                        try (Guard g = d.pin()) {
                            final long local = ((EpochDomain.EpochGuard) g).epoch;
                            final long fenced = d.asymmetricFence ? 0 : EpochDomain.FENCED;
                            assertEquals(local << 2 | fenced | EpochDomain.ACTIVE, epochs.announcementOf(g.id),
                                    "announcement");
                            for (int spin = 0; spin < (i & 15); spin++) {
                                Thread.onSpinWait();
                            }
                            final long lead = epochs.globalEpoch() - local;
                            if (lead > 1) {
                                violations.incrementAndGet();
                                maxLead.accumulateAndGet(lead, Math::max);
                            }
                        }
                    }
                });
                assertEquals(0, violations.get(), "pinned sections saw the epoch " + maxLead
                        + " ahead of their own (asymmetric fence: " + d.asymmetricFence + ")");
                // more than 50 advances during the run: progress.done() waited for them
            } finally {
                d.close();
            }
        }
    }

    /**
     * Asymmetric mode rations heavy barriers, and so epoch advances, to one per interval: with a
     * long interval and nobody flushing, a busy domain advances a few times at most, while
     * flush() issues its barrier at once and still frees everything.
     */
    @ParameterizedTest
    @MethodSource("dev.limbo.reclaim.ReclaimTestSupport#epochSchemes")
    void asymmetricModeAdvancesAtMostOncePerBarrierInterval(final Scheme scheme) {
        assumeTrue(Native.MEMBARRIER, "membarrier is not supported here");
        final LimboAllocator a = LimboAllocator.create();
        final long baseline = a.stats().bytesInUse();
        // debra+ issues a barrier at once when its limbo bag is over the suspect threshold (its
        // garbage bound comes first): the threshold is out of reach here, to test the rationing
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).scanThreshold(1)
                .minCalls(1).asymmetricFence(true).heavyBarrierInterval(Duration.ofHours(1))
                .suspectThreshold(Integer.MAX_VALUE).build();
        try {
            for (int i = 0; i < 20_000; i++) {
                try (Guard g = d.pin()) {
                    g.retire(g.allocate());
                }
            }
            assertTrue(d.stats().advances() <= 2, "advanced more often than the interval allows: " + d.stats());
            assertTrue(d.stats().inLimbo() > 10_000, "records were freed without grace periods: " + d.stats());
            d.flush();
            assertEquals(0, d.stats().inLimbo(), "flush left records in limbo: " + d.stats());
        } finally {
            d.close();
        }
        assertEquals(baseline, a.stats().bytesInUse(), "bytes in use after close");
    }

    // ------------------------------------------------------------------------------------- d

    /**
     * A stalled thread pins, protects the node in cell 0 (slot 0) and stays pinned while another
     * thread runs 20 000 replace-and-retire cycles (each in its own section) on the same cell.
     *
     * <p>Expectations, as each scheme declares them ({@link ReclaimDomain#garbageBound}, which every
     * scheme must implement, so a new scheme cannot pass without declaring its bound):
     * <ul>
     *   <li>A finite bound B per thread ({@code hp}: B = H + R, with H = slots * n protected nodes
     *       and R = 2 * slots * n + scanThreshold (100 by default), n =
     *       {@link Participants#highWater()}; n * B in all). Only the retiring thread retires here, so
     *       unreclaimed nodes stay within B (checked every 500 retires), far below 20 000.</li>
     *   <li>The era family ({@code ibr}, {@code he}, {@code wfe} and their -af forms): B = R +
     *       n * 150 * n (+ backlogLimit), the records born in the stalled reservation's era and the
     *       scan threshold, beyond the records alive when the stall began (here the protected one;
     *       see EraDomain, "Garbage bound").</li>
     *   <li>No bound ({@code Long.MAX_VALUE}: the epoch schemes {@code ebr}, {@code debra},
     *       {@code ebr-af}, {@code debra-af}, {@code qsbr}, {@code nebr} and their -af forms, whose
     *       epoch cannot pass the stalled thread's epoch + 1; {@code rcu} and {@code rcu-af}, whose
     *       stalled reservation holds back everything retired since; the Token-EBR schemes
     *       {@code token-*}, whose token stops at the stalled thread, never idle; and {@code none}): nothing retired after the stalled thread pinned is freed, so
     *       unreclaimed nodes are at least the number retired since.</li>
     *   <li>{@code none} frees nothing at all.</li>
     *   <li>Neutralizing schemes ({@link Capability#NEUTRALIZATION}: {@code debra+},
     *       {@code debra+-af}; {@code nbr}, {@code nbr+} and their -af forms, whose bound is
     *       scanThreshold + slots * maxNesting * n, plus backlogLimit for -af) declare a finite bound too: the retirer neutralizes the stalled
     *       thread, which never polls, so its protected node may be freed. The stalled thread's
     *       poll after the stall then throws {@link Restart}, and it does not use what it read.</li>
     * </ul>
     * In every other scheme the stalled thread's protected node stays intact (debug allocator: it
     * would be poisoned if freed), and once the stalled thread unpins and every thread has
     * terminated, a flush frees everything.
     */
    @ParameterizedTest
    @MethodSource(ALL)
    void stalledThread(final Scheme scheme) throws InterruptedException {
        final LimboAllocator a = debugAllocator();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).debug(true).build();
        final long cell = a.allocateZeroed(Long.BYTES);
        final int warmup = 1_000;
        final int cycles = 20_000;
        final CountDownLatch warmedUp = new CountDownLatch(1);
        final CountDownLatch pinned = new CountDownLatch(1);
        final CountDownLatch unstall = new CountDownLatch(1);
        final AtomicLong retiredBeforeStall = new AtomicLong(-1);
        final LongAccumulator maxInLimboDuringStall = new LongAccumulator(Math::max, 0);
        final AtomicLong inLimboAfterStall = new AtomicLong();
        boolean closed = false;
        try {
            runThreads(2, t -> {
                try {
                    if (t == 0) { // the stalled thread
                        await(warmedUp);
                        final long node;
                        try (Guard g = d.pin()) {
                            node = g.protect(0, cell);
                            assertNotEquals(0, node);
                            final long seq = Words.lp(node);
                            assertNull(checkNode(node, seq));
                            pinned.countDown();
                            await(unstall);
                            final String damage = checkNode(node, seq);
                            if (d.has(Capability.NEUTRALIZATION)) {
                                assertThrows(Restart.class, g::poll, "the stalled thread was not neutralized");
                            } else {
                                g.poll();
                                assertNull(damage, "the stalled thread's protected node was freed");
                            }
                        }
                    } else { // the retirer
                        long k = 0;
                        for (; k < warmup; k++) {
                            replaceAndRetire(d, cell, seq(7, k));
                        }
                        warmedUp.countDown();
                        await(pinned);
                        retiredBeforeStall.set(d.stats().retired());
                        for (int i = 0; i < cycles; i++, k++) {
                            replaceAndRetire(d, cell, seq(7, k));
                            if (i % 500 == 499) {
                                maxInLimboDuringStall.accumulate(d.stats().inLimbo());
                            }
                        }
                        inLimboAfterStall.set(d.stats().inLimbo());
                    }
                } catch (final InterruptedException e) {
                    throw new AssertionError(e);
                } finally {
                    warmedUp.countDown(); // never leave the other thread waiting after a failure
                    pinned.countDown();
                    if (t == 1) {
                        unstall.countDown();
                    }
                }
            });
            // The retirer released the stalled thread only after measuring (unstall is counted down
            // in its finally block), so these are the values during the stall.
            final long retiredDuringStall = cycles;
            final long inLimbo = inLimboAfterStall.get();
            // the first warm-up cycle found the cell empty
            assertEquals(warmup - 1, retiredBeforeStall.get(), "retired before the stall");
            final int n = Participants.highWater();
            final long bound = d.garbageBound(n);
            if (bound == Long.MAX_VALUE) {
                assertTrue(inLimbo >= retiredDuringStall, scheme + " declares no garbage bound, yet only " + inLimbo
                        + " unreclaimed after " + retiredDuringStall + " retires during the stall: something retired"
                        + " after the stalled thread pinned was freed");
            } else {
                final long max = maxInLimboDuringStall.get();
                assertTrue(max <= bound, scheme + " kept " + max + " unreclaimed nodes; one retiring thread may keep "
                        + "at most its declared bound " + bound + " (n = " + n + ")");
                assertTrue(inLimbo <= n * bound, scheme + ": " + inLimbo + " > n * bound = " + n * bound);
                if (!d.has(Capability.NEUTRALIZATION)) {
                    assertTrue(inLimbo >= 1, scheme + " freed the node that the stalled thread protects");
                }
                // the bound grows with the participant ids that earlier tests left in use, and may then
                // exceed the retires: the garbage itself must stay well below them
                assertTrue(4 * max < retiredDuringStall, scheme + " kept " + max + " of " + retiredDuringStall
                        + " records retired during the stall: the stalled thread held reclamation back");
            }
            if (leaks(scheme)) {
                assertEquals(warmup - 1 + retiredDuringStall, inLimbo);
            }
            assertEquals(1, drain(d, cell));
            d.flush();
            assertAllFreed(scheme, d.stats(), warmup + retiredDuringStall);
            closed = true;
            assertEquals(baseline + leakedBytes(scheme, warmup + retiredDuringStall), closeAndMeasure(d, a, cell));
        } finally {
            if (!closed) {
                d.close();
                a.free(cell);
            }
        }
    }

    /**
     * A read phase that follows the neutralization protocol: protects the cell's node, checks it and
     * confirms the check with a poll (a neutralizing scheme may have freed the node meanwhile, and
     * then the poll restarts), reading again, in the same section, after a {@link Restart}.
     */
    private static void readConfirmed(final Guard g, final long cell) {
        while (true) {
            try {
                final long node = g.protect(0, cell);
                final String damage = node == 0 ? null : checkNode(node);
                g.poll();
                assertNull(damage);
                return;
            } catch (final Restart neutralized) {
                // read again
            }
        }
    }

    private static void await(final CountDownLatch latch) throws InterruptedException {
        if (!latch.await(30, TimeUnit.SECONDS)) {
            fail("timed out waiting for the other thread");
        }
    }

    // ------------------------------------------------------------------------------------- e

    /**
     * A nested pin returns the same guard and counts depth; the section (announcement, hazard
     * slots) lasts until the outermost close: a node protected inside it and retired by another
     * thread stays allocated through the inner close and is freed only after the outer one (or, a
     * neutralizing scheme, only after neutralizing the thread). Closing more often than pinned throws.
     */
    @ParameterizedTest
    @MethodSource(ALL)
    void sectionsAreReentrant(final Scheme scheme) throws InterruptedException {
        final LimboAllocator a = debugAllocator();
        final long baseline = a.stats().bytesInUse();
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).debug(true)
                .scanThreshold(1).minCalls(1).build();
        final long cell = a.allocateZeroed(Long.BYTES);
        boolean closed = false;
        try {
            final long node = d.allocateExclusive();
            writeNode(node, seq(0, 42));
            publish(d, cell, node);
            final Guard outer = d.pin();
            try {
                assertEquals(1, outer.depth());
                final Guard inner = d.pin();
                assertSame(outer, inner);
                assertEquals(2, outer.depth());
                try (Guard third = d.pin()) {
                    assertSame(outer, third);
                    assertEquals(3, third.depth());
                }
                assertEquals(node, inner.protect(0, cell));
                inner.close();
                assertEquals(1, outer.depth());
                assertInSection(d, outer, node, true);

                // Another thread unlinks and retires the node and tries hard to free it.
                runThreads(1, t -> {
                    try (Guard g = d.pin()) {
                        assertNotSame(outer, g);
                        final long old = exchange(g, cell, 0);
                        assertEquals(node, old);
                        g.retire(old);
                    }
                    for (int i = 0; i < 50; i++) {
                        try (Guard g = d.pin()) {
                            g.protect(0, cell);
                        }
                        d.flush();
                    }
                });
                assertProtectedOrNeutralized(d, outer, node, seq(0, 42));
            } finally {
                outer.close();
            }
            assertEquals(0, outer.depth());
            assertInSection(d, outer, node, false);
            assertThrows(IllegalStateException.class, outer::close);
            assertEquals(0, outer.depth());
            assertThrows(IllegalStateException.class, () -> outer.protect(0, cell));

            d.flush(); // adopts the dead thread's retired node; the section has ended
            assertAllFreed(scheme, d.stats(), 1);
            closed = true;
            assertEquals(baseline + leakedBytes(scheme, 1), closeAndMeasure(d, a, cell));
        } finally {
            if (!closed) {
                d.close();
                a.free(cell);
            }
        }
    }

    /**
     * What the rest of the system sees of {@code g}'s section: its announcement, or whether a hazard
     * slot of any nesting window names {@code node}.
     */
    private static void assertInSection(final ReclaimDomain d, final Guard g, final long node, final boolean in) {
        if (d instanceof EpochDomain e && e.ebrShaped()) { // qsbr and nebr stay announced between sections
            assertEquals(in ? 1 : 0, ((EpochDomain) d).announcementOf(g.id) & 1, "announced active");
        } else if (d instanceof LockFreeRefCounting rc) {
            assertEquals(in, rc.holds(g, node), "a slot holds a count on the node");
        } else if (d instanceof HazardPointers) {
            boolean named = false;
            for (int w = 0; w < d.slotWords; w++) {
                named |= Words.la(g.row + ReclaimDomain.HAZARDS + (long) w * Long.BYTES) == node;
            }
            assertEquals(in, named, "a hazard slot names the node");
        }
    }

    // ------------------------------------------------------------------------------------- helpers

    /**
     * A debug domain (no pool: every free reaches the debug allocator {@code a}, which poisons it)
     * with {@code slots} slots, scanning and advancing often, for the tests that race readers
     * against writers.
     */
    private static ReclaimDomain busyDebugDomain(final Scheme scheme, final LimboAllocator a, final int slots) {
        return ReclaimDomain.builder(scheme).allocator(a).recordBytes(RECORD).slots(slots).debug(true)
                .scanThreshold(8).minCalls(8).build();
    }

    /** Stores {@code node} into {@code cell} through a guard's counted store, in a section of its own. */
    private static void publish(final ReclaimDomain d, final long cell, final long node) {
        try (Guard g = d.pin()) {
            g.store(cell, node);
        }
    }

    /**
     * After another thread unlinked and retired {@code node}, which {@code g} protects, and flushed
     * over and over: nothing was freed and the node keeps pattern {@code seq}; or the scheme
     * neutralizes (nbr frees at every flush), it freed the node, and {@code g}'s thread was
     * neutralized before: its poll throws {@link Restart}, so it never uses what it read.
     */
    private static void assertProtectedOrNeutralized(final ReclaimDomain d, final Guard g, final long node,
                                                     final long seq) {
        if (d.stats().freed() == 0) {
            assertNull(checkNode(node, seq), "freed while protected");
            return;
        }
        assertTrue(d.has(Capability.NEUTRALIZATION), "a node was freed while protected: " + d.stats());
        assertThrows(Restart.class, g::poll, "a node was freed while protected, and its protector was not neutralized");
    }
}
