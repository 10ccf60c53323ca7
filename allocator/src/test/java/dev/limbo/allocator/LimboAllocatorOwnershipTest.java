package dev.limbo.allocator;

import static dev.limbo.allocator.TestSupport.assertAllReturned;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.internal.PageMap;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * OWNER_RETURN: a superblock owned by one cache can be pushed onto the partial stack by another
 * thread's flush and filled from by a third cache; the third must not become a second owner.
 */
@Timeout(120)
class LimboAllocatorOwnershipTest {

    private static final int SIZE = 64;
    private static final int PER_SUPERBLOCK = (int) (PageMap.PAGE / SIZE);

    /** A thread of its own that stays alive, so its cache is not adopted between steps. */
    private static final class Worker implements AutoCloseable {
        private final ExecutorService executor = Executors.newSingleThreadExecutor();

        <T> T run(final Callable<T> body) throws Exception {
            return executor.submit(body).get();
        }

        @Override
        public void close() {
            executor.shutdownNow();
        }
    }

    @Test
    void aSuperblockFilledFromWhileAnotherCacheOwnsItGetsNoSecondOwner() throws Exception {
        final LimboAllocator a = LimboAllocator.builder().flushPolicy(FlushPolicy.OWNER_RETURN).build();
        try (Worker t1 = new Worker(); Worker t2 = new Worker(); Worker t3 = new Worker(); Worker t4 = new Worker()) {
            // T1 takes every block of superblock S, then moves on to a new one: S is abandoned and FULL.
            final long[] s = t1.run(() -> {
                final long[] ptrs = new long[PER_SUPERBLOCK];
                for (int i = 0; i < PER_SUPERBLOCK; i++) {
                    ptrs[i] = a.allocate(SIZE);
                }
                return ptrs;
            });
            final long sPage = s[0] >>> PageMap.PAGE_SHIFT;
            for (final long p : s) {
                assertEquals(sPage, p >>> PageMap.PAGE_SHIFT, "the first blocks fill one superblock");
            }
            final long t1Next = t1.run(() -> a.allocate(SIZE));
            // T2 frees one block of S while S is abandoned: it stays in T2's cache.
            final long x = s[0];
            t2.run(() -> {
                a.free(x);
                return null;
            });
            // T1 returns the rest of S in a batch: S goes FULL -> PARTIAL onto the partial stack.
            final long[] rest = new long[PER_SUPERBLOCK - 1];
            System.arraycopy(s, 1, rest, 0, rest.length);
            t1.run(() -> {
                a.freeBatch(rest, rest.length);
                return null;
            });
            // T3 fills from S, taking those blocks, and owns S.
            final List<Long> t3Blocks = t3.run(() -> {
                final List<Long> got = new ArrayList<>();
                got.add(a.allocate(SIZE));
                return got;
            });
            assertEquals(sPage, t3Blocks.get(0) >>> PageMap.PAGE_SHIFT, "T3 fills from the partial superblock");
            // A remote free into S while T3 owns it: the block waits on S's remote list for T3.
            final long remote = t3Blocks.remove(0);
            t1.run(() -> {
                a.free(remote);
                return null;
            });
            // T2 flushes x: S goes FULL -> PARTIAL again and is pushed while T3 owns it. (Its own
            // cache only: trim() would drain the idle workers' caches too, T3's ownership of S included.)
            t2.run(() -> {
                a.context().drain();
                return null;
            });
            // T4 fills from S (taking x) while T3 owns it.
            final long t4Block = t4.run(() -> a.allocate(SIZE));
            assertEquals(x, t4Block, "T4 fills from S and takes the flushed block");
            // T3 uses up S, collects its remote list, and moves on (abandoning S).
            t3.run(() -> {
                for (int i = 0; i < PER_SUPERBLOCK + 5; i++) {
                    t3Blocks.add(a.allocate(SIZE));
                }
                return null;
            });
            // T4 runs out too: it must not collect from or abandon a superblock it does not own.
            final List<Long> t4Blocks = t4.run(() -> {
                final List<Long> got = new ArrayList<>();
                for (int i = 0; i < 3 * PER_SUPERBLOCK; i++) {
                    got.add(a.allocate(SIZE));
                }
                return got;
            });
            t4Blocks.add(t4Block);
            final List<Long> all = new ArrayList<>(t3Blocks);
            all.addAll(t4Blocks);
            assertEquals(all.size(), all.stream().distinct().count(), "a block was handed out twice");
            // Free everything from the threads that hold it, then drain every cache.
            t3.run(() -> {
                for (final long p : t3Blocks) {
                    a.free(p);
                }
                a.trim();
                return null;
            });
            t4.run(() -> {
                for (final long p : t4Blocks) {
                    a.free(p);
                }
                a.trim();
                return null;
            });
            assertTrue(t3Blocks.contains(remote), "T3 never got back the block freed to its remote list");
            t1.run(() -> {
                a.free(t1Next);
                return null;
            });
            for (final Worker w : new Worker[] {t1, t2}) {
                w.run(() -> {
                    a.trim();
                    return null;
                });
            }
        }
        assertTrue(a.stats().bytesInUse() == 0, a.stats().toString());
        assertAllReturned(a);
    }
}
