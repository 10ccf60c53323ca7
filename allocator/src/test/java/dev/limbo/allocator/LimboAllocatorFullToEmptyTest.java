package dev.limbo.allocator;

import static dev.limbo.allocator.TestSupport.assertAllReturned;
import static dev.limbo.allocator.TestSupport.page;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.internal.PageMap;
import dev.limbo.allocator.internal.SizeClasses;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The FULL->EMPTY leak (lrmalloc digest §3.6, §8 item 3). When one flush returns every block of a
 * superblock whose anchor is FULL, the superblock is on no partial stack, so the flusher must
 * release its page and retire its descriptor itself. The thesis listing pushes the descriptor onto
 * the partial stack instead and never releases the page; LRMalloc's code releases the page but
 * never retires the descriptor. Either way a superblock's worth of memory or a descriptor leaks on
 * every such flush, and a thread that fills a fresh superblock, uses all of it and frees it all
 * does exactly this.
 */
class LimboAllocatorFullToEmptyTest {

    /** A size whose superblock holds few blocks. */
    private static final int SIZE = 4096;
    private static final int CYCLES = 200;

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void aSuperblockThatOneFlushTakesFromFullToEmptyIsReleasedAndItsDescriptorReused(final FlushPolicy policy) {
        final LimboAllocator a = LimboAllocator.builder().flushPolicy(policy).build();
        final int perSuperblock = (int) (PageMap.PAGE / SIZE);
        assertTrue(a.cap[SizeClasses.classOf(SIZE)] >= perSuperblock,
                "the cache must hold a whole superblock, so that it flushes only when drained");
        final long[] blocks = new long[perSuperblock];
        int descriptor = 0;
        long committedAfterFirst = 0;
        for (int c = 0; c < CYCLES; c++) {
            final int cycle = c;
            // A fresh superblock (no partial one exists), all of whose blocks go to the cache and
            // then to the caller: the anchor is FULL.
            for (int i = 0; i < perSuperblock; i++) {
                blocks[i] = a.allocate(SIZE);
            }
            final long page = page(blocks[0]);
            for (final long b : blocks) {
                assertEquals(page, page(b), "the blocks of one fill come from one superblock");
            }
            final int d = PageMap.descriptor(PageMap.owner(page));
            if (cycle == 0) {
                descriptor = d;
            }
            // The descriptor retired by the previous cycle is on top of the recycle stack.
            assertEquals(descriptor, d, () -> "cycle " + cycle + ": a fresh superblock did not get the descriptor "
                    + "retired by the last FULL->EMPTY flush (it leaked: LRMalloc's code)");
            final AllocatorStats full = a.stats();
            assertEquals(1, full.superblocksFull(), full::toString);
            assertEquals(0, full.superblocksPartial(), full::toString);
            assertEquals((long) perSuperblock * SIZE, full.bytesInUse(), full::toString);
            assertEquals(0, full.cachedBytes(), full::toString);

            for (final long b : blocks) {
                a.free(b); // into this thread's cache: cap >= perSuperblock, so no flush yet
            }
            assertEquals((long) perSuperblock * SIZE, a.stats().cachedBytes(), () -> a.stats().toString());
            a.trim(); // drains the cache: one run of every block, FULL -> EMPTY in one CAS

            final AllocatorStats empty = a.stats();
            assertEquals(0, empty.superblocksEmpty(), () -> "cycle " + cycle + ": an EMPTY descriptor was left "
                    + "behind, neither retired nor reusable: " + empty);
            assertEquals(0, empty.superblocksFull(), empty::toString);
            assertEquals(0, empty.superblocksPartial(), empty::toString);
            assertEquals(PageMap.NONE, PageMap.kind(PageMap.owner(page)), () -> "cycle " + cycle
                    + ": the emptied superblock's page was not released (the thesis listing's leak)");
            if (cycle == 0) {
                committedAfterFirst = empty.pageBytesCommitted();
            }
        }
        final long before = committedAfterFirst;
        final AllocatorStats end = a.stats();
        // trim() decommits every free run, so a released page leaves no committed trace behind.
        assertTrue(end.pageBytesCommitted() <= before, () -> CYCLES + " superblocks left committed pages behind: "
                + "after the first cycle " + before + ", at the end " + end);
        assertAllReturned(a);
    }
}
