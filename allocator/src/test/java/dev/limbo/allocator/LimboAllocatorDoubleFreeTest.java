package dev.limbo.allocator;

import static dev.limbo.allocator.TestSupport.inFreshThread;
import static dev.limbo.allocator.TestSupport.quiesce;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.internal.Anchor;
import dev.limbo.allocator.internal.DescriptorLayout;
import dev.limbo.allocator.internal.PageMap;
import dev.limbo.allocator.internal.SizeClasses;
import dev.limbo.core.Region;
import dev.limbo.core.Words;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Double frees in unchecked mode (the default) may hand a block out twice, but never make the
 * allocator follow a link out of its superblock, so its metadata stays intact: the lists a double
 * free broke are dropped when the allocator reaches them (their blocks leak), and it carries on.
 */
@Timeout(120)
class LimboAllocatorDoubleFreeTest {

    private static final int SIZE = 64;
    private static final int BLOCKS = (int) (PageMap.PAGE / SIZE);

    /** Asserts that {@code p} starts a block of class {@code size} in a superblock of {@code a}. */
    static void assertBlock(final LimboAllocator a, final long p, final long size) {
        assertInsideSuperblock(a, p, size);
        assertEquals(0, (p & PageMap.PAGE_MASK) % SizeClasses.size(SizeClasses.classOf(size)),
                () -> String.format(Locale.ROOT, "0x%x does not start a %d-byte block", p, size));
    }

    /**
     * Asserts that the {@code size}-byte class block at {@code p} lies wholly inside a superblock of
     * that class of {@code a} (after a double free it may straddle two of its blocks).
     */
    static void assertInsideSuperblock(final LimboAllocator a, final long p, final long size) {
        final int sc = SizeClasses.classOf(size);
        assertTrue(p > 0 && p < Words.SEGMENT.byteSize() && (p & 7) == 0
                        && PageMap.owner(p >>> PageMap.PAGE_SHIFT) >>> PageMap.CLASS_TAG_SHIFT
                                == PageMap.encode(PageMap.SMALL, a.id, sc, 0) >>> PageMap.CLASS_TAG_SHIFT
                        && (p & PageMap.PAGE_MASK) + SizeClasses.size(sc) <= PageMap.PAGE,
                () -> String.format(Locale.ROOT, "0x%x is not inside a superblock of %d-byte blocks of %s", p, size, a));
    }

    /** The owner allocates one superblock's worth of blocks, so that its cache refills from the remote list. */
    private static void allocateThroughARefill(final LimboAllocator a) {
        for (int i = 0; i < BLOCKS + 1; i++) {
            assertBlock(a, a.allocate(SIZE), SIZE);
        }
    }

    @Test
    void aBlockFreedTwiceByAnotherThreadDoesNotBreakItsOwnersNextAllocations() throws Exception {
        final long claimed = Integrity.claimed();
        final LimboAllocator a = LimboAllocator.create();
        final long p = a.allocate(SIZE); // a fresh superblock, owned by this thread's cache
        inFreshThread(() -> {
            a.free(p);
            a.free(p); // its remote list now links p to itself
            return null;
        });
        allocateThroughARefill(a); // used to throw IndexOutOfBoundsException in the refill
        assertEquals(1, a.stats().brokenLists(), () -> a.stats().toString());
        quiesce(a);
        Integrity.assertIntact(a, claimed);
    }

    @Test
    void aDoubleFreeAroundAnotherBlockCannotSteerTheRemoteListIntoTheRegionHeader() throws Exception {
        final long claimed = Integrity.claimed();
        final LimboAllocator a = LimboAllocator.create();
        final long p = a.allocate(SIZE);
        a.allocate(SIZE);
        a.allocate(SIZE);
        final long q = a.allocate(SIZE);
        assertEquals(p + 3 * SIZE, q, "a fresh superblock hands out its blocks in address order");
        inFreshThread(() -> {
            a.free(p);
            a.free(q);
            a.free(p); // the remote list is p, q, p, q, ...
            return null;
        });
        // The owner's relink used to turn p's link relative, follow it as an absolute one to
        // offset 128 in the region header, and store the claim pointer minus 192 there.
        allocateThroughARefill(a);
        assertEquals(1, a.stats().brokenLists(), () -> a.stats().toString());
        quiesce(a);
        Integrity.assertIntact(a, claimed);
    }

    @Test
    void aBlockFreedTwiceByItsOwnerAndThenWrittenCannotSteerTheCacheOutOfItsSuperblock() throws Exception {
        final long claimed = Integrity.claimed();
        final LimboAllocator a = LimboAllocator.create();
        final long[] b = new long[4];
        for (int i = 0; i < b.length; i++) {
            b[i] = a.allocate(SIZE);
        }
        a.free(b[0]);
        a.free(b[1]);
        a.free(b[0]); // not in a row, so unchecked mode lets it through: the cache is b0, b1, b0, b1, ...
        assertEquals(b[0], a.allocate(SIZE));
        assertEquals(b[1], a.allocate(SIZE));
        // The program writes into the block it holds, b0, which the cache still lists: its link now
        // leads to offset 128, the region's claim pointer.
        Words.sp(b[0], 128 - (b[0] + SIZE));
        assertEquals(b[0], a.allocate(SIZE), "the double free hands b0 out twice");
        final long next = a.allocate(SIZE); // used to be 128
        assertNotEquals(128, next);
        assertBlock(a, next, SIZE);
        assertEquals(1, a.stats().brokenLists(), () -> a.stats().toString());
        quiesce(a);
        Integrity.assertIntact(a, claimed);
    }

    @Test
    void aFlushThatWouldEmptyAnOwnedSuperblockIsDropped() throws Exception {
        final long claimed = Integrity.claimed();
        final LimboAllocator a = LimboAllocator.create();
        final ThreadCache owner = new ThreadCache(a, null);
        final int sc = SizeClasses.classOf(SIZE);
        final int d = a.heap.fill(owner, sc); // a fresh superblock: every block in the owner's list
        assertTrue(a.heap.own(d));
        final long head = owner.head(sc);
        final long desc = a.heap.descriptors.offset(d);
        final long anchor = Words.lp(desc + DescriptorLayout.ANCHOR);
        // Double frees counted every block free while the owner holds them all: the flush that
        // would empty the superblock is dropped, or a released superblock would stay owned.
        a.heap.flushRun(d, head, head + (BLOCKS - 1L) * SIZE, BLOCKS, sc);
        assertEquals(anchor, Words.lp(desc + DescriptorLayout.ANCHOR), "the anchor moved");
        assertEquals(PageMap.encode(PageMap.SMALL, a.id, sc, d), PageMap.withCache(PageMap.owner(head >>> PageMap.PAGE_SHIFT), 0),
                "the owned superblock was released");
        assertEquals(1, a.stats().brokenLists());
        a.heap.abandon(d); // now the same flush is the owner's, and empties the superblock
        a.heap.flushList(head, BLOCKS, sc);
        owner.setList(sc, 0, 0);
        TestSupport.assertAllReturned(a);
        Integrity.assertIntact(a, claimed);
    }

    @Test
    void aStaleFlushCannotLandOnTheNextSuperblockOfItsDescriptor() throws Exception {
        final long claimed = Integrity.claimed();
        final LimboAllocator a = LimboAllocator.builder().flushPolicy(FlushPolicy.FLUSH_ALL).build();
        final ThreadCache first = new ThreadCache(a, null);
        final int sc = SizeClasses.classOf(SIZE);
        final int d = a.heap.fill(first, sc);
        final long desc = a.heap.descriptors.offset(d);
        final long stale = first.head(sc);
        final long firstAnchor = Words.lp(desc + DescriptorLayout.ANCHOR);
        a.heap.flushList(stale, BLOCKS, sc); // FULL -> EMPTY: released, and d retired
        first.setList(sc, 0, 0);
        final ThreadCache second = new ThreadCache(a, null);
        final int sc2 = SizeClasses.classOf(2 * SIZE);
        assertEquals(d, a.heap.fill(second, sc2), "the recycle stack hands the retired descriptor out again");
        final long anchor = Words.lp(desc + DescriptorLayout.ANCHOR);
        assertEquals(Anchor.FULL, Anchor.state(anchor));
        assertEquals(Anchor.generation(firstAnchor) + 1, Anchor.generation(anchor),
                "FULL with no free blocks, like the first superblock's anchor, but of the next generation");
        // A cache that a double free left holding a block of the first superblock flushes it.
        a.heap.flushRun(d, stale, stale, 1, sc);
        assertEquals(anchor, Words.lp(desc + DescriptorLayout.ANCHOR), "the stale block landed on the new superblock");
        assertEquals(1, a.stats().brokenLists());
        a.heap.flushList(second.head(sc2), second.count(sc2), sc2);
        second.setList(sc2, 0, 0);
        TestSupport.assertAllReturned(a);
        Integrity.assertIntact(a, claimed);
    }

    // ---------------------------------------------------------------- fuzz

    /** System property: the fuzz's random seed (per flush policy, plus the policy's ordinal times 1,000,003). */
    private static final String SEED_PROPERTY = "limbo.test.fuzzSeed";
    private static final int THREADS = 4;
    private static final int OPS = 40_000;
    private static final int LIVE = 128;

    /**
     * Several threads free valid blocks, free blocks twice (in a row, later, from another thread, in
     * batches), free interior, stale and wild pointers, and overwrite the first word of blocks they
     * hold (which, for a block handed out twice, is a link the allocator will follow), all in
     * unchecked mode. Afterwards every metadata structure must be intact, the allocator must still
     * hand out only blocks of its own superblocks, and a fresh allocator must run a clean cycle.
     */
    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void randomMisuseFromSeveralThreadsLeavesTheMetadataIntact(final FlushPolicy policy) throws Exception {
        final LimboAllocator a = LimboAllocator.builder().flushPolicy(policy).checked(false).build();
        // Free runs go back to the OS only past the retained reserve, so no page can be decommitted
        // (and so count as clean) while the misuse below may still write into it.
        a.trim();
        final long claimed = Integrity.claimed();
        final long seed = Long.getLong(SEED_PROPERTY, 17) + policy.ordinal() * 1_000_003L;
        final Fuzz fuzz = new Fuzz(a, seed);
        final Thread[] threads = new Thread[THREADS];
        final CountDownLatch start = new CountDownLatch(1);
        for (int t = 0; t < THREADS; t++) {
            final SplittableRandom rnd = fuzz.seed.split();
            threads[t] = new Thread(() -> fuzz.run(rnd, start), "fuzz-" + t);
            threads[t].start();
        }
        start.countDown();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(100);
        for (final Thread t : threads) {
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            assertTrue(!t.isAlive(), t.getName() + " did not finish its operations within 100 s");
        }
        if (!fuzz.failures.isEmpty()) {
            final AssertionError e = new AssertionError("a fuzz thread failed (seed " + seed + ")", fuzz.failures.peek());
            fuzz.failures.stream().skip(1).forEach(e::addSuppressed);
            throw e;
        }
        assertTrue(fuzz.acceptedMisuse.get() > 0, "no misuse got past the cheap checks; the fuzz tested nothing");
        quiesce(a);
        Integrity.assertIntact(a, claimed);

        // The allocator still hands out memory of its own superblocks only (a block twice, or one
        // that straddles two: lists the misuse broke inside a superblock stay broken).
        inFreshThread(() -> {
            final Set<Long> got = new HashSet<>();
            for (int sc = 1; sc <= SizeClasses.COUNT; sc++) {
                for (int i = 0; i < 40; i++) {
                    final long p = a.allocate(SizeClasses.size(sc));
                    assertInsideSuperblock(a, p, SizeClasses.size(sc));
                    Words.sp(p, -1L);
                    got.add(p);
                }
            }
            for (final long p : got) {
                try {
                    a.free(p);
                } catch (final IllegalStateException e) {
                    // p is also in the cache (handed out twice), or in a superblock that the
                    // misuse counted empty too early: both are left-overs of the double frees
                }
            }
            return null;
        });
        quiesce(a);
        Integrity.assertIntact(a, claimed);

        final LimboAllocator fresh = LimboAllocator.builder().flushPolicy(policy).build();
        inFreshThread(() -> {
            cleanCycle(fresh);
            return null;
        });
        TestSupport.assertAllReturned(fresh);
        Integrity.assertIntact(fresh, claimed);
    }

    /** Allocates blocks of every class and a few large ones, checks they are disjoint and keep their contents, frees them. */
    private static void cleanCycle(final LimboAllocator a) {
        final List<long[]> blocks = new ArrayList<>();
        for (int sc = 1; sc <= SizeClasses.COUNT; sc++) {
            for (int i = 0; i < 40; i++) {
                blocks.add(new long[] {a.allocate(SizeClasses.size(sc)), SizeClasses.size(sc)});
            }
        }
        for (int i = 1; i <= 3; i++) {
            blocks.add(new long[] {a.allocate(i * 100_000L), i * 100_000L});
        }
        for (final long[] b : blocks) {
            TestSupport.writePattern(b[0], b[1]);
        }
        final long[][] sorted = blocks.toArray(new long[0][]);
        Arrays.sort(sorted, (x, y) -> Long.compare(x[0], y[0]));
        for (int i = 1; i < sorted.length; i++) {
            assertTrue(sorted[i - 1][0] + sorted[i - 1][1] <= sorted[i][0], "blocks overlap");
        }
        for (final long[] b : blocks) {
            TestSupport.assertPattern(b[0], b[1]);
            a.free(b[0]);
        }
    }

    /** The misuse each fuzz thread commits; shared state is racy on purpose where it hands out stale pointers. */
    private static final class Fuzz {
        final LimboAllocator a;
        final SplittableRandom seed;
        /** Blocks handed from one thread to another, to be freed remotely. */
        final AtomicLongArray exchange = new AtomicLongArray(256);
        /** Recently freed pointers: stale ones, freed again later. */
        final AtomicLongArray graveyard = new AtomicLongArray(256);
        final ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        /** Frees of a pointer that was not allocated (stale, interior, wild) that unchecked mode let through. */
        final AtomicLong acceptedMisuse = new AtomicLong();

        Fuzz(final LimboAllocator a, final long seed) {
            this.a = a;
            this.seed = new SplittableRandom(seed);
        }

        void run(final SplittableRandom rnd, final CountDownLatch start) {
            final long[] live = new long[LIVE];
            int n = 0;
            try {
                start.await();
                for (int op = 0; op < OPS; op++) {
                    final int dice = rnd.nextInt(100);
                    if (n == 0 || dice < 36) { // allocate, and sometimes write the first word
                        if (n == LIVE) {
                            n = freeAt(live, n, rnd.nextInt(n));
                        }
                        final long p = a.allocate(size(rnd));
                        if (rnd.nextBoolean()) {
                            Words.sp(p, rnd.nextLong());
                        }
                        live[n++] = p;
                    } else if (dice < 66) { // a valid free
                        n = freeAt(live, n, rnd.nextInt(n));
                    } else if (dice < 69) { // a stale pointer freed again
                        misuse(graveyard.get(rnd.nextInt(graveyard.length())));
                    } else if (dice < 71) { // freed twice in a row
                        final int i = rnd.nextInt(n);
                        final long p = live[i];
                        n = freeAt(live, n, i);
                        misuse(p);
                    } else if (dice < 73) { // an interior pointer; the block stays ours
                        misuse(live[rnd.nextInt(n)] + 8L * (1 + rnd.nextInt(4)));
                    } else if (dice < 74) { // a wild pointer somewhere in claimed space
                        misuse(rnd.nextLong(Region.global().claimedBytes()) & -8L);
                    } else if (dice < 84) { // hand a block to another thread
                        final int i = rnd.nextInt(n);
                        final long displaced = exchange.getAndSet(rnd.nextInt(exchange.length()), live[i]);
                        live[i] = live[--n];
                        if (displaced != 0) {
                            free(displaced);
                        }
                    } else if (dice < 94) { // free another thread's block, sometimes twice
                        final long p = exchange.getAndSet(rnd.nextInt(exchange.length()), 0);
                        if (p != 0) {
                            free(p);
                            if (rnd.nextInt(8) == 0) {
                                misuse(p);
                            }
                        }
                    } else if (dice < 98) { // a batch, sometimes with a stale pointer or a duplicate
                        n = batch(live, n, rnd);
                    } else { // overwrite the first word of a block we hold
                        Words.sp(live[rnd.nextInt(n)], rnd.nextLong());
                    }
                }
                while (n > 0) {
                    n = freeAt(live, n, n - 1);
                }
            } catch (final Throwable t) {
                failures.add(t);
            }
        }

        private static long size(final SplittableRandom rnd) {
            final int dice = rnd.nextInt(100);
            return dice == 0 ? 16_385 + rnd.nextInt(200_000) : dice < 25 ? 1 + rnd.nextInt(16_384) : 1 + rnd.nextInt(256);
        }

        /** Frees live[i] (removing it) and remembers it as stale; returns the new count. */
        private int freeAt(final long[] live, final int n, final int i) {
            final long p = live[i];
            live[i] = live[n - 1];
            free(p);
            return n - 1;
        }

        private void free(final long p) {
            if (tolerant(p)) {
                graveyard.set((int) (p >>> 3) & (graveyard.length() - 1), p);
            }
        }

        /** Frees a pointer that is probably not allocated. */
        private void misuse(final long p) {
            if (p != 0 && tolerant(p)) {
                acceptedMisuse.incrementAndGet();
            }
        }

        /**
         * Frees {@code p}; true if the allocator took it. Rejections are fine (a block the misuse
         * elsewhere freed or broke); anything but IllegalArgumentException and IllegalStateException
         * is a failure.
         */
        private boolean tolerant(final long p) {
            try {
                a.free(p);
                return true;
            } catch (final IllegalArgumentException | IllegalStateException e) {
                return false;
            }
        }

        /** Frees up to 8 live blocks in one batch; sometimes the batch also holds a stale pointer or a duplicate. */
        private int batch(final long[] live, final int n, final SplittableRandom rnd) {
            final int k = 1 + rnd.nextInt(Math.min(8, n));
            final long[] b = new long[k + 1];
            for (int i = 0; i < k; i++) {
                b[i] = live[n - 1 - i];
            }
            final int extra = rnd.nextInt(6);
            b[k] = extra == 0 ? graveyard.get(rnd.nextInt(graveyard.length())) : extra == 1 ? b[0] : 0;
            final int len = b[k] == 0 ? k : k + 1;
            try {
                a.freeBatch(b, len);
            } catch (final IllegalArgumentException | IllegalStateException e) {
                return n; // nothing of it was freed
            }
            if (len > k) {
                acceptedMisuse.incrementAndGet();
            }
            return n - k;
        }
    }
}
