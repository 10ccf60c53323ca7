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
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm and sources: DEBRA's record manager pool (Brown, PODC 2015, §4.6): per-thread bags of
 * blocks (§4.5) and a shared stack of whole blocks, here Treiber's stack with a tagged head
 * (BlockStack); beyond a bounded cache, blocks go back to the allocator with one freeBatch each.
 *
 * Invariants:
 *  - A record handed to free is in exactly one place until allocate returns it: the caller's
 *    local bag, a detached block in the hands of the thread moving it, one block on the shared
 *    stack, or the allocator.
 *  - localRecords > 0: after free or freeAll returns, the local bag holds at most localRecords
 *    (shed moves whole blocks until it does). localRecords == 0 (pass-through): every freed record
 *    goes to the allocator, and the shared stack stays empty (sharedBlocks is 0).
 *  - sharedCount >= the number of blocks on the stack, at all times: a shed increments (2) before
 *    its push and a taker decrements (3) after its pop; they are equal while no push or pop is in
 *    flight, so sharedCount never goes negative.
 * Non-invariant: the stack may exceed sharedBlocks: shed's check (1) and increment (2) are two
 * steps, so k threads shedding at once may push up to k - 1 blocks past it.
 *
 * Linearization points: allocate - the local pop (thread-local), else the shared stack's pop CAS
 * (BlockStack (1)), else the allocator's allocate; free and freeAll - the add to the local bag
 * (thread-local), and for each block shed, its push CAS (BlockStack (1)) or the allocator's
 * freeBatch; sharedRecords - its load (4) of sharedCount.
 *
 * Progress: allocate and free are lock-free: thread-local bag work, a lock-free stack operation
 * per shared block, and the allocator's (lock-free) calls; a free that sheds moves whole blocks,
 * O(blocks shed). release runs in a departed thread's release hook (on whichever thread releases
 * its id) and is lock-free too; drain runs at domain close, when no other thread uses the pool.
 *
 * Memory ordering:
 *  (1) volatile load of sharedCount in shed: a racy bound check (see the non-invariant).
 *  (2) volatile increment of sharedCount before a push; (3) volatile decrement after a pop;
 *  (4) volatile load of sharedCount in sharedRecords (a statistic). (1)-(4) order nothing else:
 *      the count bounds the stack's size, it guards no data.
 *  A block's words (its slots and count, plain stores of the shedding thread's BlockBag) are
 *  published by the push's CAS and acquired by the pop's acquire load of the head (BlockStack
 *  (1), (2)), so a taker reads the pointers the shedder wrote.
 *
 * Reclamation and ABA: the pool only ever receives records that a reclaimer found safe (no
 * thread can reach them), so handing one out again is reuse after a grace period or a scan; a
 * structure's ABA argument rests on its scheme, not on the pool. A popped block may be recycled
 * into a BlockSource or freed to the allocator at once; BlockStack's tag makes a stale pop's CAS
 * fail, and its stale read of NEXT stays inside the region.
 * }</pre>
 */
public final class RecordPool {

    private final LimboAllocator allocator;
    private final long recordBytes;
    private final long localRecords;
    private final int sharedBlocks;
    /** Whether records fresh from the allocator come zeroed ({@link #RecordPool(LimboAllocator, long, long, int, boolean)}). */
    private final boolean zeroed;
    private final BlockStack shared = new BlockStack();
    private final AtomicInteger sharedCount = new AtomicInteger();

    public RecordPool(final LimboAllocator allocator, final long recordBytes, final long localRecords,
                      final int sharedBlocks) {
        this(allocator, recordBytes, localRecords, sharedBlocks, false);
    }

    /**
     * A pool whose records fresh from the allocator are zeroed when {@code zeroed}: a scheme that
     * keeps state in a record across its reuse (lfrc's reference count, which a stray increment
     * may touch while the record is free) then tells a fresh record (all zero) from a reused one.
     * With {@code sharedBlocks == Integer.MAX_VALUE} and {@code localRecords > 0}, no record goes
     * back to the allocator before {@link #drain}: the memory is type-stable.
     */
    public RecordPool(final LimboAllocator allocator, final long recordBytes, final long localRecords,
                      final int sharedBlocks, final boolean zeroed) {
        this.zeroed = zeroed;
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
                sharedCount.decrementAndGet(); // (3)
                local.putBlock(block);
                return local.pop();
            }
        }
        return zeroed ? allocator.allocateZeroed(recordBytes) : allocator.allocate(recordBytes);
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

    /**
     * Returns every record of {@code local} and of the shared stack to the allocator (domain
     * close). A record the allocator refuses (it was freed behind the pool's back) does not stop
     * the drain: the rest of its block is freed one record at a time, and the refusals are thrown
     * together at the end.
     */
    public void drain(final BlockBag local, final BlockSource blocks, final long[] scratch) {
        IllegalStateException failures = null;
        long block;
        while ((block = local.takeBlock()) != 0) {
            failures = freeBlockTolerant(block, blocks, scratch, failures);
        }
        local.releaseBlocks();
        while ((block = shared.pop()) != 0) {
            sharedCount.decrementAndGet(); // (3)
            failures = freeBlockTolerant(block, blocks, scratch, failures);
        }
        if (failures != null) {
            throw failures;
        }
    }

    /**
     * {@link #freeBlock}, falling back to one free per record when the batch is refused (a batch
     * free validates every pointer before it frees any); returns {@code failures} with the
     * refusals added.
     */
    private IllegalStateException freeBlockTolerant(final long block, final BlockSource blocks, final long[] scratch,
                                                    final IllegalStateException failures) {
        IllegalStateException all = failures;
        final int n = copyRecords(block, scratch);
        try {
            allocator.freeBatch(scratch, n);
        } catch (final RuntimeException refused) {
            for (int i = 0; i < n; i++) {
                try {
                    allocator.free(scratch[i]);
                } catch (final RuntimeException e) {
                    if (all == null) {
                        all = new IllegalStateException("the record pool could not free every record", e);
                    } else {
                        all.addSuppressed(e);
                    }
                }
            }
        }
        blocks.recycle(block);
        return all;
    }

    /** Moves all of a departing thread's {@code local} records to the shared stack or the allocator. */
    public void release(final BlockBag local, final BlockSource blocks, final long[] scratch) {
        shed(local, blocks, scratch, 0);
        local.releaseBlocks();
    }

    /** Records held by the shared stack, approximately (blocks there are usually full). */
    public long sharedRecords() {
        return (long) sharedCount.get() * BlockLayout.CAPACITY; // (4)
    }

    private void shed(final BlockBag local, final BlockSource blocks, final long[] scratch, final long keep) {
        while (local.size() > keep) {
            final long block = local.takeBlock();
            if (sharedCount.get() < sharedBlocks) { // (1)
                sharedCount.incrementAndGet(); // (2)
                shared.push(block);
            } else {
                freeBlock(block, blocks, scratch);
            }
        }
    }

    /** Frees a detached block's records with one batch free, then recycles the block. */
    private void freeBlock(final long block, final BlockSource blocks, final long[] scratch) {
        allocator.freeBatch(scratch, copyRecords(block, scratch));
        blocks.recycle(block);
    }

    /** Copies a detached block's records into {@code scratch}; returns how many. */
    private static int copyRecords(final long block, final long[] scratch) {
        final int n = (int) BlockBag.count(block);
        for (int i = 0; i < n; i++) {
            scratch[i] = Words.lp(BlockLayout.slot(block, i));
        }
        return n;
    }
}
