package dev.limbo.reclaim.internal;

import dev.limbo.core.Words;

import java.util.function.LongConsumer;

/**
 * A bag of record pointers kept in a chain of off-heap {@link BlockLayout blocks} (DEBRA §4.5): O(1)
 * {@link #add}, {@link #pop}, whole-block moves and whole-bag splices.
 *
 * <p>Thread-confined: only the thread that owns the bag touches it (a bag changes owner only
 * through a happens-before edge: a thread's death, a lock-free queue, or the caller's own
 * synchronization), so every access is plain.
 *
 * <p>Invariant: every block in the chain holds at least one record, except the head of an empty
 * bag, which may be kept (empty) to avoid re-fetching a block for the next add. Blocks other than
 * the head may be partly filled (after a splice), unlike DEBRA's "only the head is partial", which
 * we do not need: bags move whole, never only their full blocks.
 */
public final class BlockBag {

    private final BlockSource blocks;
    private long head;
    private long tail;
    private long size;

    public BlockBag(final BlockSource blocks) {
        this.blocks = blocks;
    }

    /** Records in the bag. */
    public long size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    /** Adds a record pointer. */
    public void add(final long ptr) {
        long h = head;
        long n;
        if (h == 0 || (n = count(h)) == BlockLayout.CAPACITY) {
            h = prependEmpty();
            n = 0;
        }
        Words.sp(BlockLayout.slot(h, (int) n), ptr);
        Words.sp(h + BlockLayout.COUNT, n + 1);
        size++;
    }

    /** Removes and returns the most recently added record of the head block, or 0 if empty. */
    public long pop() {
        if (size == 0) {
            return 0;
        }
        final long h = head;
        final long n = count(h) - 1;
        final long ptr = Words.lp(BlockLayout.slot(h, (int) n));
        Words.sp(h + BlockLayout.COUNT, n);
        size--;
        if (n == 0 && size > 0) { // keep the invariant: drop the emptied head, keep the chain
            head = Words.lp(h + BlockLayout.NEXT);
            blocks.recycle(h);
        }
        return ptr;
    }

    /**
     * Moves every record of this bag into {@code target} (O(1)); this bag becomes empty. The chain
     * is spliced in front of the target's; a bag of one block whose records fit in the target's
     * head block is copied into it instead (at most a block's worth of words; the emptied block
     * goes to the target's block cache, where a spliced one would end up), so that small batches
     * moved one after another (a scan or round per retire, into an amortized free list) do not
     * leave a partly filled block each.
     * Either way the target pops this bag's records first, in the order this bag would have.
     */
    public void moveAllTo(final BlockBag target) {
        if (size == 0) {
            return;
        }
        if (head == tail && target.size != 0 && count(target.head) + size <= BlockLayout.CAPACITY) {
            final long into = target.head;
            final long at = count(into);
            for (int i = 0; i < size; i++) {
                Words.sp(BlockLayout.slot(into, (int) (at + i)), Words.lp(BlockLayout.slot(head, i)));
            }
            Words.sp(into + BlockLayout.COUNT, at + size);
            target.blocks.recycle(head); // to the target's cache, as a spliced block would go
            target.size += size;
            head = 0;
            tail = 0;
            size = 0;
            return;
        }
        final long chainHead = dropEmptyHead();
        Words.sp(tail + BlockLayout.NEXT, target.head == 0 || target.size == 0 ? 0 : target.head);
        if (target.size == 0) {
            if (target.head != 0) {
                target.blocks.recycle(target.head);
            }
            target.tail = tail;
        }
        target.head = chainHead;
        target.size += size;
        head = 0;
        tail = 0;
        size = 0;
    }

    /**
     * Detaches a block (with its records) and returns it, or 0 if the bag is empty: the block
     * behind the head when there is one, since {@link #add} fills the head last and so the blocks
     * behind it are usually full; else the head.
     */
    public long takeBlock() {
        if (size == 0) {
            return 0;
        }
        final long h = head;
        final long second = Words.lp(h + BlockLayout.NEXT);
        if (second == 0) {
            size -= count(h);
            head = 0;
            tail = 0;
            return h;
        }
        Words.sp(h + BlockLayout.NEXT, Words.lp(second + BlockLayout.NEXT));
        if (tail == second) {
            tail = h;
        }
        size -= count(second);
        Words.sp(second + BlockLayout.NEXT, 0);
        return second;
    }

    /** Puts a detached, non-empty block (from {@link #takeBlock} or a block stack) in front. */
    public void putBlock(final long block) {
        dropEmptyHead();
        Words.sp(block + BlockLayout.NEXT, head);
        if (head == 0) {
            tail = block;
        }
        head = block;
        size += count(block);
    }

    /** Recycles the bag's blocks; call only when it is empty. */
    public void releaseBlocks() {
        if (size != 0) {
            throw new IllegalStateException("bag still holds " + size + " records");
        }
        dropEmptyHead();
    }

    /** Calls {@code action} with every record (debug checks; O(size)). */
    public void forEach(final LongConsumer action) {
        if (size == 0) {
            return;
        }
        for (long b = head; b != 0; b = Words.lp(b + BlockLayout.NEXT)) {
            final long n = count(b);
            for (int i = 0; i < n; i++) {
                action.accept(Words.lp(BlockLayout.slot(b, i)));
            }
        }
    }

    /** The number of records in {@code block}. */
    public static long count(final long block) {
        return Words.lp(block + BlockLayout.COUNT);
    }

    private long prependEmpty() {
        final long block = blocks.take();
        Words.sp(block + BlockLayout.NEXT, size == 0 ? 0 : head);
        Words.sp(block + BlockLayout.COUNT, 0);
        if (size == 0) {
            if (head != 0) {
                blocks.recycle(head);
            }
            tail = block;
        }
        head = block;
        return block;
    }

    /** Recycles a kept empty head block; returns the head of the non-empty chain (0 if none). */
    private long dropEmptyHead() {
        if (size == 0 && head != 0) {
            blocks.recycle(head);
            head = 0;
            tail = 0;
        }
        return head;
    }
}
