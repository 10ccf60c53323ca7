package dev.limbo.allocator;

import static dev.limbo.allocator.TestSupport.assertAllReturned;
import static dev.limbo.allocator.TestSupport.page;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.internal.PageMap;
import dev.limbo.allocator.internal.SizeClasses;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link FlushPolicy#OWNED}, white-box: where the owner's and other threads' frees go, what a
 * refill takes, when a superblock goes back, and the cache tag in the page's owner word.
 */
@Timeout(60)
class OwnedSuperblocksTest {

    /** 1 KiB blocks: 64 per 64 KiB superblock. */
    private static final int SIZE = 1024;
    private static final int SC = SizeClasses.classOf(SIZE);
    private static final int PER = PageMap.blocks(SC);

    /** Allocates {@code n} blocks of {@link #SIZE}. */
    private static long[] allocate(final LimboAllocator a, final int n) {
        final long[] blocks = new long[n];
        for (int i = 0; i < n; i++) {
            blocks[i] = a.allocate(SIZE);
        }
        return blocks;
    }

    /**
     * Allocates a superblock's worth of blocks, asserting that each comes from {@code page} (else
     * failing with {@code notFrom}) and that the refill committed no new page.
     */
    private static long[] allocateFrom(final LimboAllocator a, final long page, final String notFrom) {
        final long committed = a.stats().pageBytesCommitted();
        final long[] blocks = allocate(a, PER);
        for (final long p : blocks) {
            assertEquals(page, page(p), notFrom);
        }
        // At most: the page allocator is the JVM's, and the Cleaner may decommit the pages of
        // unreachable allocators of earlier tests meanwhile.
        final long after = a.stats().pageBytesCommitted();
        assertTrue(after <= committed, () -> "a refill took a new superblock: committed " + committed + ", then " + after);
        return blocks;
    }

    @Test
    void theOwnersFreesOfAnOlderSuperblockGoToItsLocalListAndARefillTakesThatListWhole() {
        try (LimboAllocator a = LimboAllocator.create()) {
            final ThreadCache cache = a.context();
            final long[] first = allocate(a, PER); // superblock 1, all handed out
            final long next = a.allocate(SIZE); // superblock 2 becomes current
            assertNotEquals(page(first[0]), page(next));
            assertEquals(PageMap.descriptor(PageMap.owner(page(next))), cache.current(SC));
            for (final long p : first) {
                a.free(p); // superblock 1 is not current: its local list
            }
            assertEquals(PER - 1, cache.count(SC), "the frees did not reach the cache's list");
            assertEquals((long) (2 * PER - 1) * SizeClasses.size(SC), a.stats().cachedBytes(),
                    "the local list counts as cached");
            final long[] rest = allocate(a, PER - 1); // superblock 2's other blocks
            for (final long p : rest) {
                assertEquals(page(next), page(p));
            }
            // the refill swaps in superblock 1's local list
            final long[] again = allocateFrom(a, page(first[0]), "a block not from the superblock freed locally");
            for (final long p : again) {
                a.free(p);
            }
            for (final long p : rest) {
                a.free(p);
            }
            a.free(next);
            assertAllReturned(a);
        }
    }

    @Test
    void aSuperblockWhoseBlocksAreAllFreeLocallyGoesBackUnlessItIsTheOnlyReadyOne() {
        try (LimboAllocator a = LimboAllocator.create()) {
            final long[] first = allocate(a, PER);
            final long[] second = allocate(a, PER);
            final long third = a.allocate(SIZE); // current: superblock 3
            for (final long p : first) {
                a.free(p);
            }
            assertEquals(PageMap.SMALL, PageMap.kind(PageMap.owner(page(first[0]))),
                    "the only fully free superblock of the class is kept");
            for (int i = 0; i < PER - 1; i++) {
                a.free(second[i]);
            }
            assertEquals(PageMap.SMALL, PageMap.kind(PageMap.owner(page(second[0]))));
            a.free(second[PER - 1]); // a second fully free one: it goes back to the page allocator
            assertEquals(PageMap.NONE, PageMap.kind(PageMap.owner(page(second[0]))),
                    "the second fully free superblock was not released");
            a.free(third);
            assertAllReturned(a);
        }
    }

    @Test
    void anotherThreadsFreesWaitOnTheRemoteListUntilARefillCollectsThem() throws Exception {
        try (LimboAllocator a = LimboAllocator.create()) {
            final long[] first = allocate(a, PER); // superblock 1, all handed out
            final long[] second = allocate(a, PER); // superblock 2, all handed out; 1 is FULL
            TestSupport.inFreshThread(() -> {
                for (final long p : first) {
                    a.free(p); // remote frees: superblock 1 is owned by the main thread
                }
                return null;
            });
            assertEquals(PageMap.SMALL, PageMap.kind(PageMap.owner(page(first[0]))),
                    "an owned superblock was released by remote frees");
            // current (2) is empty: the scan of FULL finds 1's remote list
            final long[] again = allocateFrom(a, page(first[0]), "a block not from the superblock freed remotely");
            for (final long p : again) {
                a.free(p);
            }
            for (final long p : second) {
                a.free(p);
            }
            assertAllReturned(a);
        }
    }

    @Test
    void aLocalFreeBeyondTheSuperblocksBlockCountIsADoubleFreeAndChangesNothing() {
        try (LimboAllocator a = LimboAllocator.create()) {
            final long[] first = allocate(a, PER);
            final long next = a.allocate(SIZE);
            for (final long p : first) {
                a.free(p);
            }
            final IllegalStateException e = assertThrows(IllegalStateException.class, () -> a.free(first[3]));
            assertTrue(e.getMessage().contains("double free"), e::getMessage);
            a.free(next);
            assertAllReturned(a);
        }
    }

    @Test
    void theOwnerWordNamesTheOwningCacheUntilTheCacheGivesTheSuperblockUp() {
        try (LimboAllocator a = LimboAllocator.create()) {
            final ThreadCache cache = a.context();
            assertTrue(cache.tag() > 0, "an owning cache has a tag");
            final long p = a.allocate(SIZE);
            assertEquals(cache.tag(), PageMap.cache(PageMap.owner(page(p))));
            a.trim(); // drains the caller's cache: every superblock given up
            assertEquals(0, PageMap.cache(PageMap.owner(page(p))), "the tag outlived the drain");
            a.free(p); // the superblock is nobody's now: the block goes to its anchor
            assertAllReturned(a);
        }
    }

    @Test
    void aCacheOfTheCappedPoliciesOwnsNothingAndTagsNoPage() {
        try (LimboAllocator a = LimboAllocator.builder().flushPolicy(FlushPolicy.OWNER_RETURN).build()) {
            final ThreadCache cache = a.context();
            assertEquals(-1, cache.tag());
            final long p = a.allocate(SIZE);
            assertEquals(0, PageMap.cache(PageMap.owner(page(p))));
            a.free(p);
            assertAllReturned(a);
        }
    }
}
