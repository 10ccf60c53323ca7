package dev.limbo.allocator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.limbo.allocator.internal.Anchor;
import dev.limbo.allocator.internal.BestFitPageAllocator;
import dev.limbo.allocator.internal.DescriptorLayout;
import dev.limbo.allocator.internal.Descriptors;
import dev.limbo.allocator.internal.PageMap;
import dev.limbo.allocator.internal.SizeClasses;
import dev.limbo.core.Layouts;
import dev.limbo.core.Region;
import dev.limbo.core.RegionHeaderLayout;
import dev.limbo.core.Words;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.NavigableSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.stream.LongStream;

/**
 * An integrity check of every metadata structure an allocator relies on: the region header, the
 * page map, the allocator's descriptors with their anchors and remote heads, its partial and
 * recycle stacks, and the page allocator's free runs. It checks what the allocator itself writes,
 * never the links inside free blocks (a program that freed a block twice may overwrite those).
 *
 * <p>Call it while the allocator is quiescent, after {@link TestSupport#quiesce}: no thread uses it
 * and no cache holds blocks or owns a superblock. Other allocators may still change the region's
 * pages (the Cleaner closes unreachable ones at any time), so the region-wide checks read a settled
 * copy of them.
 */
final class Integrity {

    private static final Region REGION = Region.global();
    private static final int STRIDE = (int) (Layouts.PADDED / Long.BYTES);

    private Integrity() {
    }

    /** The region's claimed bytes now, to pass to {@link #assertIntact} later. */
    static long claimed() {
        return REGION.claimedBytes();
    }

    /**
     * Asserts that every metadata structure is intact and consistent with {@code a}'s descriptors;
     * {@code claimedBefore} is what {@link #claimed()} returned before the test's work (the claim
     * pointer never moves back).
     */
    static void assertIntact(final LimboAllocator a, final long claimedBefore) throws ReflectiveOperationException {
        assertRegionHeader(claimedBefore);
        final Map<Integer, String> onStack = stacks(a);
        final int carved = a.heap.descriptors.carved();
        int live = 0;
        for (int d = 1; d < carved; d++) {
            live += assertDescriptor(a, d, onStack.get(d)) ? 1 : 0;
        }
        final GlobalPages pages = GlobalPages.stable();
        assertEquals(live, assertPageMap(a, pages), "live superblocks against pages the page map gives this allocator");
        assertFreeRuns(pages);
    }

    private static void assertRegionHeader(final long claimedBefore) {
        assertEquals(RegionHeaderLayout.MAGIC, Words.lp(RegionHeaderLayout.MAGIC_OFFSET), "region magic");
        assertEquals(REGION.size(), Words.lp(RegionHeaderLayout.SIZE_OFFSET), "region size");
        assertEquals(REGION.pageSize(), Words.lp(RegionHeaderLayout.PAGE_SIZE_OFFSET), "region page size");
        // Committed first: pages are committed only after they are claimed, so this order holds
        // even while other allocators of the JVM grow.
        final long committed = REGION.committedBytes();
        final long brk = REGION.claimedBytes();
        assertTrue(brk >= claimedBefore && brk <= REGION.size(),
                () -> String.format(Locale.ROOT, "the claim pointer moved from %d to %d", claimedBefore, brk));
        assertTrue(committed >= 0 && committed <= REGION.commitLimit() && committed <= brk, "committed " + committed);
    }

    /** Which stack each descriptor is on ("recycle" or "partial N"); fails on a cycle, a bad index or a descriptor on two. */
    private static Map<Integer, String> stacks(final LimboAllocator a) throws ReflectiveOperationException {
        final Field f = Descriptors.class.getDeclaredField("heads");
        f.setAccessible(true);
        final AtomicLongArray heads = (AtomicLongArray) f.get(a.heap.descriptors);
        final int carved = a.heap.descriptors.carved();
        final Map<Integer, String> on = new HashMap<>();
        for (int stack = 0; stack <= SizeClasses.COUNT; stack++) {
            final String name = stack == 0 ? "recycle" : "partial " + stack;
            final long link = stack == 0 ? DescriptorLayout.NEXT_FREE : DescriptorLayout.NEXT_PARTIAL;
            int n = 0;
            for (int d = (int) heads.get(stack * STRIDE); d != 0; d = (int) Words.lp(a.heap.descriptors.offset(d) + link)) {
                assertTrue(d > 0 && d < carved, name + " stack holds descriptor " + d + " of " + carved);
                final String before = on.put(d, name);
                if (before != null) {
                    fail("descriptor " + d + " is on the " + before + " stack and on the " + name + " stack");
                }
                assertTrue(++n < carved, name + " stack does not end");
            }
        }
        return on;
    }

    /** Checks descriptor {@code d}; true if it holds a live (not yet released) superblock. */
    private static boolean assertDescriptor(final LimboAllocator a, final int d, final String stack) {
        final long desc = a.heap.descriptors.offset(d);
        final int sc = (int) Words.lp(desc + DescriptorLayout.SIZE_CLASS);
        final String what = "descriptor " + d;
        if (sc == 0) {
            assertEquals("recycle", stack, what + " is retired but not on the recycle stack");
            return false;
        }
        assertTrue(sc >= 1 && sc <= SizeClasses.COUNT, what + " has size class " + sc);
        final int max = (int) Words.lp(desc + DescriptorLayout.MAX_COUNT);
        assertEquals(PageMap.PAGE / SizeClasses.size(sc), max, what + " max count");
        final long sb = Words.lp(desc + DescriptorLayout.SUPERBLOCK);
        assertTrue(sb > 0 && (sb & PageMap.PAGE_MASK) == 0 && sb < REGION.size(), what + " superblock " + sb);
        final long anchor = Words.lp(desc + DescriptorLayout.ANCHOR);
        final int state = Anchor.state(anchor);
        final int count = Anchor.count(anchor);
        final String where = String.format(Locale.ROOT, "%s (superblock 0x%x, anchor %s)", what, sb,
                Long.toHexString(anchor));
        assertTrue(count <= max, where + ": more free blocks than blocks");
        assertTrue(count == 0 || Anchor.avail(anchor) < max, where + ": the free list starts outside");
        assertEquals(SuperblockHeap.ABANDONED, Words.lp(desc + DescriptorLayout.REMOTE_HEAD),
                where + ": owned, though no cache is in use");
        switch (state) {
            case Anchor.FULL -> {
                assertEquals(0, count, where + ": FULL with free blocks");
                assertEquals(null, stack, where + ": FULL on a stack");
            }
            case Anchor.PARTIAL -> {
                assertTrue(count > 0 && count < max, where + ": PARTIAL count");
                assertEquals("partial " + sc, stack, where + ": PARTIAL but not on its partial stack");
            }
            case Anchor.EMPTY -> {
                assertEquals(max, count, where + ": EMPTY count");
                assertEquals("partial " + sc, stack, where + ": EMPTY, not retired and not on its partial stack");
                return false;
            }
            default -> fail(where + ": state " + state);
        }
        assertEquals(PageMap.encode(PageMap.SMALL, a.id, sc, d), PageMap.withCache(PageMap.owner(sb >>> PageMap.PAGE_SHIFT), 0),
                where + ": its page's owner word");
        return true;
    }

    /** Checks every claimed page's owner word; returns the number of small pages of {@code a}. */
    private static int assertPageMap(final LimboAllocator a, final GlobalPages g) {
        int mine = 0;
        long interiorUntil = 0;
        int interiorOf = 0;
        for (int page = 0; page < g.owners.length; page++) {
            final long owner = g.owners[page];
            final String where = String.format(Locale.ROOT, "page %d (0x%x): owner word %s", page,
                    (long) page << PageMap.PAGE_SHIFT, Long.toHexString(owner));
            if (PageMap.kind(owner) == PageMap.LARGE_INTERIOR) {
                assertTrue(page < interiorUntil && PageMap.allocator(owner) == interiorOf,
                        where + ": an interior page outside its large run");
                continue;
            }
            assertTrue(page >= interiorUntil, where + ": inside a large run");
            switch (PageMap.kind(owner)) {
                case PageMap.NONE -> assertEquals(0L, owner, where);
                case PageMap.SMALL -> {
                    final int sc = PageMap.sizeClass(owner);
                    assertTrue(sc >= 1 && sc <= SizeClasses.COUNT && PageMap.allocator(owner) > 0, where);
                    if (PageMap.allocator(owner) == a.id) {
                        final int d = PageMap.descriptor(owner);
                        assertTrue(d > 0 && d < a.heap.descriptors.carved(), where + ": descriptor out of range");
                        assertEquals((long) page << PageMap.PAGE_SHIFT,
                                Words.lp(a.heap.descriptors.offset(d) + DescriptorLayout.SUPERBLOCK), where + ": superblock");
                        mine++;
                    }
                }
                default -> { // LARGE
                    final long n = g.headers[page];
                    assertTrue(n >= 1 && page + n <= PageMap.PAGES, where + ": run of " + n + " pages");
                    interiorUntil = page + n;
                    interiorOf = PageMap.allocator(owner);
                }
            }
        }
        return mine;
    }

    /**
     * The page allocator's free runs are disjoint, inside claimed space, and own no page; the runs of
     * its committed tree are wholly committed (and counted retained), those of its decommitted tree
     * wholly decommitted.
     */
    private static void assertFreeRuns(final GlobalPages g) throws ReflectiveOperationException {
        final long committedFlag = flag("COMMITTED");
        final long retainedFlag = flag("RETAINED");
        final Map<Long, Long> runs = new java.util.TreeMap<>();
        for (int tree = 0; tree < GlobalPages.TREES.length; tree++) {
            final long expected = tree == 0 ? committedFlag | retainedFlag : 0;
            final long[] treeRuns = g.runs[tree];
            for (int i = 0; i < treeRuns.length; i += 2) {
                final long first = treeRuns[i];
                final long n = treeRuns[i + 1];
                assertEquals(null, runs.put(first, n), "two free runs start at page " + first);
                assertTrue(first >= 0 && n > 0 && first + n <= g.owners.length, "free run past the claimed space");
                for (long p = first; p < first + n; p++) {
                    final long flags = g.flags[(int) p];
                    assertEquals(expected, flags & (committedFlag | retainedFlag),
                            "page " + p + " of a run of the " + GlobalPages.TREES[tree] + " tree: flags " + flags);
                }
            }
        }
        long end = 0;
        for (final Map.Entry<Long, Long> run : runs.entrySet()) {
            final long first = run.getKey();
            assertTrue(first >= end, "free runs overlap at page " + first);
            end = first + run.getValue();
            for (long p = first; p < end; p++) {
                assertEquals(0L, g.owners[(int) p], "free page " + p + " has an owner");
            }
        }
    }

    /**
     * The region-wide page state the checks read: every claimed page's owner, header and flag words,
     * and the runs of both trees of the page allocator, as (start, pages) pairs in tree order.
     */
    private static final class GlobalPages {

        static final String[] TREES = {"committed", "decommitted"};
        /** How long {@link #stable} waits for the state to settle. */
        private static final long SETTLE_NANOS = TimeUnit.SECONDS.toNanos(60);

        final long[] owners;
        final long[] headers;
        final long[] flags;
        final long[][] runs = new long[TREES.length][];

        private GlobalPages() throws ReflectiveOperationException {
            final int pages = (int) ((REGION.claimedBytes() + PageMap.PAGE_MASK) >>> PageMap.PAGE_SHIFT);
            owners = new long[pages];
            headers = new long[pages];
            flags = new long[pages];
            for (int page = 0; page < pages; page++) {
                owners[page] = PageMap.owner(page);
                headers[page] = PageMap.header(page);
                flags[page] = PageMap.flags(page);
            }
            final Class<?> runClass = Class.forName(BestFitPageAllocator.class.getName() + "$Run");
            final Method start = runClass.getDeclaredMethod("start");
            final Method length = runClass.getDeclaredMethod("pages");
            start.setAccessible(true);
            length.setAccessible(true);
            for (int tree = 0; tree < TREES.length; tree++) {
                final Field f = BestFitPageAllocator.class.getDeclaredField(TREES[tree]);
                f.setAccessible(true);
                final NavigableSet<?> set = (NavigableSet<?>) f.get(BestFitPageAllocator.global());
                final LongStream.Builder pairs = LongStream.builder();
                for (final Object run : set) {
                    pairs.add((Long) start.invoke(run)).add((Long) length.invoke(run));
                }
                runs[tree] = pairs.build().toArray();
            }
        }

        /**
         * Reads the state until two reads in a row agree and no run was in flight: the pages are
         * shared by every allocator of the JVM, and the Cleaner closes the unreachable ones of earlier
         * tests (and releases the caches of dead threads) whenever the GC finds them, so one read may
         * see a free half done, a neighbour it has merged still in a tree beside the merged run.
         */
        static GlobalPages stable() throws ReflectiveOperationException {
            final Field f = BestFitPageAllocator.class.getDeclaredField("inFlight");
            f.setAccessible(true);
            final AtomicLong inFlight = (AtomicLong) f.get(BestFitPageAllocator.global());
            final long deadline = System.nanoTime() + SETTLE_NANOS;
            GlobalPages last = null;
            while (System.nanoTime() - deadline < 0) {
                final boolean quiet = inFlight.get() == 0;
                final GlobalPages now = new GlobalPages();
                if (quiet && inFlight.get() == 0 && now.sameAs(last)) {
                    return now;
                }
                last = now;
                Thread.yield();
            }
            return fail("the region's pages did not settle within 60 s");
        }

        private boolean sameAs(final GlobalPages o) {
            return o != null && Arrays.equals(owners, o.owners) && Arrays.equals(headers, o.headers)
                    && Arrays.equals(flags, o.flags) && Arrays.deepEquals(runs, o.runs);
        }
    }

    private static long flag(final String name) throws ReflectiveOperationException {
        final Field f = BestFitPageAllocator.class.getDeclaredField(name);
        f.setAccessible(true);
        return f.getLong(null);
    }
}
