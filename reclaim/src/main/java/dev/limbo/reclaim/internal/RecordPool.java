package dev.limbo.reclaim.internal;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Words;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * DEBRA's object pool (§4.6): per-thread bags of free records in front of a shared lock-free stack
 * of blocks, in front of the allocator. Records freed by a reclaimer land in the freeing thread's
 * bag and are reallocated from it; when a bag holds more than {@code localRecords}, whole blocks go
 * to the shared stack, and once that holds {@code sharedBlocks} blocks, further blocks are freed to
 * the allocator with one {@link LimboAllocator#freeBatch} each. So memory that leaves a structure
 * comes back to the allocator beyond a bounded cache.
 *
 * <p>A pool with {@code localRecords == 0} is a pass-through: every free goes to the allocator
 * (debug mode uses this, so that the allocator's poison and quarantine see every freed record).
 *
 * <p>The per-thread bags are owned by the callers (each thread passes its own); this class holds
 * only the shared stack, which is lock-free ({@link BlockStack}). The block count is approximate
 * under concurrency: it bounds the stack loosely, never its correctness.
 */
public final class RecordPool {

    private final LimboAllocator allocator;
    private final long recordBytes;
    private final long localRecords;
    private final int sharedBlocks;
    private final BlockStack shared = new BlockStack();
    private final AtomicInteger sharedCount = new AtomicInteger();

    public RecordPool(final LimboAllocator allocator, final long recordBytes, final long localRecords,
                      final int sharedBlocks) {
        this.allocator = allocator;
        this.recordBytes = recordBytes;
        this.localRecords = localRecords;
        this.sharedBlocks = localRecords == 0 ? 0 : sharedBlocks; // a pass-through caches nothing
    }

    /** A record: from {@code local}, else a block from the shared stack, else the allocator. */
    public long allocate(final BlockBag local) {
        final long ptr = local.pop();
        if (ptr != 0) {
            return ptr;
        }
        if (localRecords > 0 && !shared.isEmpty()) {
            final long block = shared.pop();
            if (block != 0) {
                sharedCount.decrementAndGet();
                local.putBlock(block);
                return local.pop();
            }
        }
        return allocator.allocate(recordBytes);
    }

    /** Frees one record into {@code local}. */
    public void free(final BlockBag local, final BlockSource blocks, final long ptr, final long[] scratch) {
        if (localRecords == 0) {
            allocator.free(ptr);
            return;
        }
        local.add(ptr);
        if (local.size() > localRecords) {
            shed(local, blocks, scratch, localRecords);
        }
    }

    /** Frees every record of {@code bag} into {@code local}; {@code bag} becomes empty. */
    public void freeAll(final BlockBag local, final BlockSource blocks, final BlockBag bag, final long[] scratch) {
        bag.moveAllTo(local);
        if (local.size() > localRecords) {
            shed(local, blocks, scratch, localRecords);
        }
    }

    /** Returns every record of {@code local} and of the shared stack to the allocator. */
    public void drain(final BlockBag local, final BlockSource blocks, final long[] scratch) {
        long block;
        while ((block = local.takeBlock()) != 0) {
            freeBlock(block, blocks, scratch);
        }
        local.releaseBlocks();
        while ((block = shared.pop()) != 0) {
            sharedCount.decrementAndGet();
            freeBlock(block, blocks, scratch);
        }
    }

    /** Moves all of a departing thread's {@code local} records to the shared stack or the allocator. */
    public void release(final BlockBag local, final BlockSource blocks, final long[] scratch) {
        shed(local, blocks, scratch, 0);
        local.releaseBlocks();
    }

    /** Records held by the shared stack, approximately (blocks there are usually full). */
    public long sharedRecords() {
        return (long) Math.max(0, sharedCount.get()) * BlockLayout.CAPACITY;
    }

    private void shed(final BlockBag local, final BlockSource blocks, final long[] scratch, final long keep) {
        while (local.size() > keep) {
            final long block = local.takeBlock();
            if (sharedCount.get() < sharedBlocks) {
                sharedCount.incrementAndGet();
                shared.push(block);
            } else {
                freeBlock(block, blocks, scratch);
            }
        }
    }

    /** Frees a detached block's records with one batch free, then recycles the block. */
    private void freeBlock(final long block, final BlockSource blocks, final long[] scratch) {
        final int n = (int) BlockBag.count(block);
        for (int i = 0; i < n; i++) {
            scratch[i] = Words.lp(BlockLayout.slot(block, i));
        }
        allocator.freeBatch(scratch, n);
        blocks.recycle(block);
    }
}
