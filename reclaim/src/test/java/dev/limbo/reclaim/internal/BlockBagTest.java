package dev.limbo.reclaim.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Participants;
import dev.limbo.core.Words;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Bags of record pointers in chains of 256-entry blocks, and the per-thread block cache. */
@Timeout(30)
class BlockBagTest {

    private static final int B = BlockLayout.CAPACITY;
    /** Bytes the allocator charges per block (its size class). */
    private static final long BLOCK_BYTES = blockBytes();

    private LimboAllocator alloc;
    private BlockSource source;

    private static long blockBytes() {
        final LimboAllocator a = LimboAllocator.create();
        final long p = a.allocate(BlockLayout.SIZE);
        final long size = a.usableSize(p);
        a.free(p);
        return size;
    }

    @BeforeEach
    void setUp() {
        alloc = LimboAllocator.create();
        source = new BlockSource(alloc);
    }

    @AfterEach
    void tearDown() {
        source.close();
        Participants.reapTerminated();
        alloc.trim();
        assertEquals(0, alloc.stats().bytesInUse(), "blocks leaked");
    }

    /** A distinct nonzero record value. */
    private static long rec(final int i) {
        return 0x1000L + 8L * i;
    }

    private static void addAll(final BlockBag bag, final int from, final int to) {
        for (int i = from; i < to; i++) {
            bag.add(rec(i));
        }
    }

    private static List<Long> popAll(final BlockBag bag) {
        final List<Long> out = new ArrayList<>();
        for (long p; (p = bag.pop()) != 0; ) {
            out.add(p);
        }
        return out;
    }

    private static List<Long> reversed(final int from, final int to) {
        final List<Long> out = new ArrayList<>();
        for (int i = to - 1; i >= from; i--) {
            out.add(rec(i));
        }
        return out;
    }

    private long inUse() {
        return alloc.stats().bytesInUse();
    }

    @Test
    void addAndPopAreLifoAcrossSeveralBlocks() {
        final BlockBag bag = new BlockBag(source);
        assertTrue(bag.isEmpty());
        assertEquals(0, bag.pop());
        final int n = 4 * B + 17;
        addAll(bag, 0, n);
        assertEquals(n, bag.size());
        assertFalse(bag.isEmpty());
        assertEquals(5 * BLOCK_BYTES, inUse(), "one block per 256 records");
        // pop a few, add more, then everything comes back newest first
        assertEquals(List.of(rec(n - 1), rec(n - 2)), List.of(bag.pop(), bag.pop()));
        addAll(bag, n, n + B);
        final List<Long> expected = reversed(n, n + B);
        expected.addAll(reversed(0, n - 2));
        assertEquals(expected, popAll(bag));
        assertEquals(0, bag.size());
        assertTrue(bag.isEmpty());
        assertEquals(0, bag.pop());
        bag.releaseBlocks();
    }

    @Test
    void emptiedBlocksAreRecycledNotLeaked() {
        final BlockBag bag = new BlockBag(source);
        for (int round = 0; round < 5; round++) {
            addAll(bag, 0, 3 * B);
            assertEquals(3 * B, bag.size());
            assertEquals(reversed(0, 3 * B), popAll(bag));
        }
        // three blocks at most were ever needed: the rest of the rounds reused them
        assertEquals(3 * BLOCK_BYTES, inUse());
        bag.releaseBlocks();
    }

    @Test
    void moveAllToSplicesTheChainInFront() {
        final BlockBag from = new BlockBag(source);
        final BlockBag to = new BlockBag(source);
        addAll(from, 0, B + 44);
        addAll(to, 1000, 1000 + 2 * B + 3);
        final long before = inUse();
        from.moveAllTo(to);
        assertEquals(before, inUse(), "a move allocates no block (it links the chains)");
        assertEquals(0, from.size());
        assertTrue(from.isEmpty());
        assertEquals(0, from.pop());
        assertEquals(B + 44 + 2 * B + 3, to.size());
        final List<Long> expected = reversed(0, B + 44);
        expected.addAll(reversed(1000, 1000 + 2 * B + 3));
        assertEquals(expected, popAll(to));
        from.releaseBlocks();
        to.releaseBlocks();
    }

    @Test
    void smallBagsMovedOneAfterAnotherFillTheTargetsHeadBlock() {
        // a round or scan per retire moves one-record batches into the amortized free list: they
        // are copied into its head block rather than spliced in as a block each
        final BlockBag from = new BlockBag(source);
        final BlockBag to = new BlockBag(source);
        to.add(rec(1000));
        for (int i = 0; i < 100; i++) {
            from.add(rec(i));
            from.moveAllTo(to);
            assertTrue(from.isEmpty());
        }
        assertEquals(101, to.size());
        final long block = to.takeBlock();
        assertEquals(101, BlockBag.count(block), "the records were not gathered in one block");
        assertEquals(0, to.size());
        to.putBlock(block);
        final List<Long> expected = reversed(0, 100);
        expected.add(rec(1000));
        assertEquals(expected, popAll(to));
        from.releaseBlocks();
        to.releaseBlocks();
    }

    @Test
    void moveAllToAnEmptyBagAndFromAnEmptyBag() {
        final BlockBag from = new BlockBag(source);
        final BlockBag to = new BlockBag(source);
        to.add(rec(1));
        assertEquals(rec(1), to.pop()); // `to` now keeps an empty head block
        addAll(from, 0, 300);
        from.moveAllTo(to);
        assertEquals(300, to.size());
        assertEquals(0, from.size());
        final BlockBag empty = new BlockBag(source);
        empty.moveAllTo(to); // no-op
        assertEquals(300, to.size());
        to.moveAllTo(empty);
        assertEquals(0, to.size());
        assertEquals(300, empty.size());
        assertEquals(reversed(0, 300), popAll(empty));
        from.releaseBlocks();
        to.releaseBlocks();
        empty.releaseBlocks();
    }

    @Test
    void moveAllToIsConstantTimeInTheNumberOfRecords() {
        // 200 000 records in 782 blocks: a copying move would touch every record; the splice
        // touches two link words. Moving back and forth 10 000 times must be cheap.
        final BlockBag a = new BlockBag(source);
        final BlockBag b = new BlockBag(source);
        final int n = 200_000;
        addAll(a, 0, n);
        final long blocks = inUse();
        final long start = System.nanoTime();
        for (int i = 0; i < 10_000; i++) {
            a.moveAllTo(b);
            b.moveAllTo(a);
        }
        final long ms = (System.nanoTime() - start) / 1_000_000;
        assertEquals(n, a.size());
        assertEquals(0, b.size());
        assertEquals(blocks, inUse());
        // 20 000 copies of 200 000 records would take minutes; 20 000 splices take microseconds.
        assertTrue(ms < 2_000, "20 000 moves of 200 000 records took " + ms + " ms");
        assertEquals(reversed(0, n), popAll(a));
        a.releaseBlocks();
        b.releaseBlocks();
    }

    @Test
    void takeBlockAndPutBlockMoveWholeBlocks() {
        final BlockBag bag = new BlockBag(source);
        assertEquals(0, bag.takeBlock());
        addAll(bag, 0, 2 * B + 88); // blocks: [88 newest] [B: B..2B-1] [B: 0..B-1]
        final long block = bag.takeBlock();
        assertNotEquals(0, block);
        assertEquals(B, BlockBag.count(block), "the block behind the partial head, which is full");
        assertEquals(B + 88, bag.size());
        assertEquals(0, Words.lp(block + BlockLayout.NEXT), "a taken block is detached");
        for (int i = 0; i < B; i++) {
            assertEquals(rec(B + i), Words.lp(BlockLayout.slot(block, i)));
        }
        final BlockBag other = new BlockBag(source);
        addAll(other, 5000, 5010);
        other.putBlock(block);
        assertEquals(B + 10, other.size());
        final List<Long> expected = reversed(B, 2 * B);
        expected.addAll(reversed(5000, 5010));
        assertEquals(expected, popAll(other));

        final long full = bag.takeBlock();
        assertEquals(B, BlockBag.count(full));
        assertEquals(88, bag.size());
        final BlockBag fresh = new BlockBag(source);
        fresh.add(rec(7));
        fresh.pop(); // keeps an empty head, which putBlock must drop
        fresh.putBlock(full);
        assertEquals(B, fresh.size());
        fresh.add(rec(9999));
        assertEquals(rec(9999), fresh.pop());
        assertEquals(reversed(0, B), popAll(fresh));

        final long last = bag.takeBlock(); // only the head is left: it is taken
        assertEquals(88, BlockBag.count(last));
        assertEquals(rec(2 * B + 87), Words.lp(BlockLayout.slot(last, 87)));
        assertEquals(0, bag.size());
        assertEquals(0, bag.takeBlock());
        fresh.putBlock(last);
        assertEquals(reversed(2 * B, 2 * B + 88), popAll(fresh));
        bag.releaseBlocks();
        other.releaseBlocks();
        fresh.releaseBlocks();
    }

    @Test
    void forEachVisitsEveryRecordOnce() {
        final BlockBag bag = new BlockBag(source);
        final List<Long> none = new ArrayList<>();
        bag.forEach(none::add);
        assertTrue(none.isEmpty());
        addAll(bag, 0, 3 * B + 5);
        final BlockBag other = new BlockBag(source);
        addAll(other, 10_000, 10_000 + B + 1);
        other.moveAllTo(bag);
        final List<Long> seen = new ArrayList<>();
        bag.forEach(seen::add);
        assertEquals(bag.size(), seen.size());
        final Set<Long> expected = new HashSet<>();
        for (int i = 0; i < 3 * B + 5; i++) {
            expected.add(rec(i));
        }
        for (int i = 10_000; i < 10_000 + B + 1; i++) {
            expected.add(rec(i));
        }
        assertEquals(expected, new HashSet<>(seen));
        popAll(bag);
        final List<Long> after = new ArrayList<>();
        bag.forEach(after::add);
        assertTrue(after.isEmpty(), "forEach of an emptied bag (with a kept head) saw " + after);
        bag.releaseBlocks();
        other.releaseBlocks();
    }

    @Test
    void releaseBlocksOfANonEmptyBagThrows() {
        final BlockBag bag = new BlockBag(source);
        addAll(bag, 0, 3);
        final IllegalStateException e = assertThrows(IllegalStateException.class, bag::releaseBlocks);
        assertTrue(e.getMessage().contains("3 records"), e.getMessage());
        assertEquals(3, bag.size(), "the failed release lost records");
        popAll(bag);
        bag.releaseBlocks();
        bag.add(rec(1)); // usable again
        assertEquals(rec(1), bag.pop());
        bag.releaseBlocks();
    }

    @Test
    void blockSourceCachesSixteenBlocksAndFreesTheRest() {
        final List<Long> blocks = new ArrayList<>();
        for (int i = 0; i < BlockSource.CACHED + 4; i++) {
            blocks.add(source.take());
        }
        assertEquals(new HashSet<>(blocks).size(), blocks.size(), "take returned a block twice");
        assertEquals((BlockSource.CACHED + 4) * BLOCK_BYTES, inUse());
        for (final long b : blocks) {
            source.recycle(b);
        }
        assertEquals(BlockSource.CACHED * BLOCK_BYTES, inUse(), "beyond 16 cached blocks, recycle frees");
        final long last = blocks.get(BlockSource.CACHED - 1);
        assertEquals(last, source.take(), "the cache is LIFO");
        assertEquals(BlockSource.CACHED * BLOCK_BYTES, inUse());
        source.recycle(last);
        source.close();
        assertEquals(0, inUse());
    }
}
