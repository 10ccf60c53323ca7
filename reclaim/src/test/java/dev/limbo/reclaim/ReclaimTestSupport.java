package dev.limbo.reclaim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Participants;
import dev.limbo.core.Words;
import dev.limbo.core.testing.Progress;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import java.util.stream.Stream;

/** Helpers shared by the reclamation tests: node patterns, thread runners, memory accounting. */
final class ReclaimTestSupport {

    /** A word of a freed block in a debug allocator (every byte past the first 8 is 0xDB). */
    static final long POISON = 0xDBDB_DBDB_DBDB_DBDBL;
    /** The record size used by the tests: exactly one 32-byte size class. */
    static final long RECORD = 32;
    /** Words per record. */
    static final int WORDS = (int) (RECORD / Long.BYTES);

    private ReclaimTestSupport() {
    }

    /** Every scheme, so that a scheme added to {@link Scheme} joins the parameterized tests. */
    static Stream<Scheme> allSchemes() {
        return Arrays.stream(Scheme.values());
    }

    /** The schemes that free safe records a few per pin. */
    static Stream<Scheme> amortizedSchemes() {
        return allSchemes().filter(Scheme::amortized);
    }

    /**
     * The EBR-shaped epoch schemes ({@link EpochDomain#ebrShaped()}: ebr, debra and their -af
     * forms), whose pins announce a validated epoch and whose unpins announce quiescence; qsbr,
     * nebr and rcu, also built on {@link EpochDomain}, have tests of their own.
     */
    static Stream<Scheme> epochSchemes() {
        return allSchemes().filter(s -> {
            final ReclaimDomain probe = ReclaimDomain.builder(s).allocator(PROBE).recordBytes(RECORD).build();
            try {
                return probe instanceof EpochDomain e && e.ebrShaped();
            } finally {
                probe.close();
            }
        });
    }

    private static final LimboAllocator PROBE = LimboAllocator.create();

    /** The schemes that never free anything (only {@code none} today). */
    static boolean leaks(final Scheme scheme) {
        return scheme == Scheme.NONE;
    }

    /** Word {@code i} (1..WORDS-1) of a node whose word 0 is {@code seq}; never the poison value. */
    static long patternWord(final long seq, final int i) {
        long x = seq * 0x9E37_79B9_7F4A_7C15L + (long) i * 0xC2B2_AE3D_27D4_EB4FL;
        x ^= x >>> 29;
        x *= 0xBF58_476D_1CE4_E5B9L;
        x ^= x >>> 32;
        return x == POISON ? x + 1 : x;
    }

    /** A node sequence number: nonzero, never the poison value, unique per (thread, counter). */
    static long seq(final int thread, final long counter) {
        return ((long) (thread + 1) << 40) | (counter + 1);
    }

    /** Writes node {@code seq}'s pattern into every word of {@code node}. */
    static void writeNode(final long node, final long seq) {
        Words.sp(node, seq);
        for (int i = 1; i < WORDS; i++) {
            Words.sp(node + (long) i * Long.BYTES, patternWord(seq, i));
        }
    }

    /**
     * Checks that {@code node} holds the pattern of {@code seq} in every word and no poison;
     * returns null if it does, else what is wrong.
     */
    static String checkNode(final long node, final long seq) {
        for (int i = 0; i < WORDS; i++) {
            final long v = Words.lp(node + (long) i * Long.BYTES);
            final long want = i == 0 ? seq : patternWord(seq, i);
            if (v == POISON) {
                return String.format(Locale.ROOT, "node 0x%x word %d is poisoned: it was freed while protected",
                        node, i);
            }
            if (v != want) {
                return String.format(Locale.ROOT,
                        "node 0x%x word %d is 0x%x, expected 0x%x: it was freed or reused while protected",
                        node, i, v, want);
            }
        }
        return null;
    }

    /** Checks a node read through a protected pointer, whose sequence number is its word 0. */
    static String checkNode(final long node) {
        final long seq = Words.lp(node);
        if (seq == POISON) {
            return String.format(Locale.ROOT, "node 0x%x word 0 is poisoned", node);
        }
        return checkNode(node, seq);
    }

    /** In one section: publishes a new node with pattern {@code seq} in {@code cell} and retires the one it replaces. */
    static void replaceAndRetire(final ReclaimDomain d, final long cell, final long seq) {
        try (Guard g = d.pin()) {
            final long node = g.allocate();
            writeNode(node, seq);
            final long old = exchange(g, cell, node);
            if (old != 0) {
                g.retire(old);
            }
        }
    }

    /** A debug allocator: freed blocks are poisoned and quarantined. */
    static LimboAllocator debugAllocator() {
        return LimboAllocator.builder().debug(true).build();
    }

    /**
     * Runs {@code body(i)} on {@code n} new platform threads, waits for all of them to terminate,
     * and rethrows the first failure (with the others suppressed).
     */
    static void runThreads(final int n, final IntConsumer body) throws InterruptedException {
        final List<Throwable> failures = new CopyOnWriteArrayList<>();
        final List<Thread> threads = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                final int id = i;
                threads.add(Thread.ofPlatform().name("reclaim-test-" + i).start(() -> {
                    try {
                        body.accept(id);
                    } catch (final Throwable t) {
                        failures.add(t);
                    }
                }));
            }
        } finally {
            joinAll(threads);
        }
        rethrow(failures);
    }

    /**
     * {@link #runThreads(int, IntConsumer)} for threads that loop {@code while (!progress.done())}:
     * a thread that fails stops {@code progress}, so the others end at once and its failure is
     * rethrown without waiting for the progress deadline.
     */
    static void runThreads(final int n, final Progress progress, final IntConsumer body)
            throws InterruptedException {
        runThreads(n, id -> {
            try {
                body.accept(id);
            } catch (final Throwable t) {
                progress.stop();
                throw t;
            }
        });
    }

    /** Joins every thread, even if interrupted. */
    static void joinAll(final List<Thread> threads) throws InterruptedException {
        InterruptedException interrupted = null;
        for (final Thread t : threads) {
            while (t.isAlive()) {
                try {
                    t.join();
                } catch (final InterruptedException e) {
                    interrupted = e;
                }
            }
        }
        if (interrupted != null) {
            throw interrupted;
        }
    }

    static void rethrow(final List<Throwable> failures) {
        if (failures.isEmpty()) {
            return;
        }
        final AssertionError e = new AssertionError(failures.size() + " thread(s) failed: " + failures.get(0),
                failures.get(0));
        for (int i = 1; i < failures.size(); i++) {
            e.addSuppressed(failures.get(i));
        }
        throw e;
    }

    /**
     * Closes {@code domain} (if not closed), frees {@code extra} pointers, trims, reaps dead
     * threads' caches and returns the allocator's bytes in use.
     */
    static long closeAndMeasure(final ReclaimDomain domain, final LimboAllocator allocator, final long... extra) {
        domain.close();
        for (final long p : extra) {
            if (p != 0) {
                allocator.free(p);
            }
        }
        return settle(allocator);
    }

    /** Reaps dead threads, trims the calling thread's cache, and returns the allocator's bytes in use. */
    static long settle(final LimboAllocator allocator) {
        Participants.reapTerminated();
        Participants.awaitReleases();
        allocator.trim();
        return allocator.stats().bytesInUse();
    }

    /** Asserts that every retired node was freed, or (none) that every one leaked. */
    static void assertAllFreed(final Scheme scheme, final ReclaimStats s, final long expectedRetired) {
        assertEquals(expectedRetired, s.retired(), () -> "retired: " + s);
        if (leaks(scheme)) {
            assertEquals(0, s.freed(), () -> "none freed something: " + s);
            assertEquals(s.retired(), s.inLimbo(), () -> "none: " + s);
        } else {
            assertEquals(s.retired(), s.freed(), () -> "not every retired node was freed after flush: " + s);
            assertEquals(0, s.inLimbo(), () -> "in limbo after flush: " + s);
        }
    }

    /**
     * The bytes that {@code scheme} leaks by design for {@code retired} nodes: all of them for none,
     * each a record and its trailer (40 bytes, a size class of its own).
     */
    static long leakedBytes(final Scheme scheme, final long retired) {
        return leaks(scheme) ? retired * (RECORD + ReclaimDomain.TRAILER_BYTES) : 0;
    }

    /**
     * Replaces the cell's word with {@code node} and returns the word it held, through the guard's
     * counted cas (a counting scheme moves the counts; for the others it is a CAS loop, which
     * Words.xchg would be); the caller retires what it returns.
     */
    static long exchange(final Guard g, final long cell, final long node) {
        while (true) {
            final long old = Words.la(cell);
            if (g.cas(cell, old, node)) {
                return old;
            }
        }
    }

    /** Unlinks the node of each of {@code count} cells at {@code cells} and retires it (from the calling thread); returns how many. */
    static long drainCells(final ReclaimDomain d, final long cells, final int count) {
        long n = 0;
        try (Guard g = d.pin()) {
            for (int c = 0; c < count; c++) {
                final long old = exchange(g, cells + (long) c * Long.BYTES, 0);
                if (old != 0) {
                    assertNull(checkNode(old));
                    g.retire(old);
                    n++;
                }
            }
        }
        return n;
    }

    /** Retires the cell's node, if any; returns how many (0 or 1). */
    static long drain(final ReclaimDomain d, final long cell) {
        return drainCells(d, cell, 1);
    }

    /**
     * Two threads: a stalled one and a worker. The stalled thread pins, runs {@code before} in its
     * section and stalls there until the worker has run {@code work} (or failed); it then runs
     * {@code after} in the same section. Rethrows the first failure.
     */
    static void whileStalled(final ReclaimDomain d, final Consumer<Guard> before, final Runnable work,
                             final Consumer<Guard> after) throws InterruptedException {
        final CountDownLatch stalled = new CountDownLatch(1);
        final CountDownLatch released = new CountDownLatch(1);
        runThreads(2, t -> {
            try {
                if (t == 0) {
                    try (Guard g = d.pin()) {
                        before.accept(g);
                        stalled.countDown();
                        released.await();
                        after.accept(g);
                    }
                } else {
                    try {
                        stalled.await();
                        work.run();
                    } finally {
                        released.countDown();
                    }
                }
            } catch (final InterruptedException e) {
                throw new AssertionError(e);
            } finally {
                stalled.countDown();
            }
        });
    }
}
