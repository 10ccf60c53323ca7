package dev.limbo.reclaim.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Participants;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * DEBRA's pool: per-thread bags in front of a shared stack of blocks in front of the allocator.
 * Records and blocks come from two allocators, so that the records' allocator counts records only.
 */
@Timeout(30)
class RecordPoolTest {

    private static final long RECORD = 32;
    private static final int B = BlockLayout.CAPACITY;

    private LimboAllocator records;
    private LimboAllocator blockMemory;
    private BlockSource blocks;
    private final long[] scratch = new long[B];

    @BeforeEach
    void setUp() {
        records = LimboAllocator.create();
        blockMemory = LimboAllocator.create();
        blocks = new BlockSource(blockMemory);
    }

    @AfterEach
    void tearDown() {
        blocks.close();
        Participants.reapTerminated();
        blockMemory.trim();
        records.trim();
        assertEquals(0, blockMemory.stats().bytesInUse(), "blocks leaked");
        assertEquals(0, records.stats().bytesInUse(), "records leaked");
    }

    /** Records held by the allocator's users (the pool included). */
    private long recordsInUse() {
        return records.stats().bytesInUse() / RECORD;
    }

    private long[] allocateDirect(final int n) {
        final long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            out[i] = records.allocate(RECORD);
        }
        return out;
    }

    @Test
    void allocateReusesFreedRecordsLastInFirstOut() {
        final RecordPool pool = new RecordPool(records, RECORD, 512, 4);
        final BlockBag local = new BlockBag(blocks);
        final long p = pool.allocate(local);
        assertEquals(1, recordsInUse());
        pool.free(local, blocks, p, scratch);
        assertEquals(1, recordsInUse(), "a freed record stays in the pool");
        assertEquals(1, local.size());
        assertEquals(p, pool.allocate(local), "the pool hands the freed record out again");
        assertEquals(1, recordsInUse());

        final List<Long> some = new ArrayList<>();
        some.add(p);
        for (int i = 0; i < 9; i++) {
            some.add(pool.allocate(local));
        }
        assertEquals(10, recordsInUse());
        for (final long r : some) {
            pool.free(local, blocks, r, scratch);
        }
        for (int i = 9; i >= 0; i--) {
            assertEquals(some.get(i), pool.allocate(local));
        }
        assertEquals(10, recordsInUse(), "reallocation took nothing from the allocator");
        for (final long r : some) {
            pool.free(local, blocks, r, scratch);
        }
        pool.drain(local, blocks, scratch);
        assertEquals(0, recordsInUse());
    }

    @Test
    void overflowGoesToTheSharedStackThenToTheAllocator() {
        final int localRecords = B;
        final int sharedBlocks = 2;
        final RecordPool pool = new RecordPool(records, RECORD, localRecords, sharedBlocks);
        final BlockBag local = new BlockBag(blocks);
        final int n = 2_000;
        final long[] rs = allocateDirect(n);
        final Set<Long> freed = new HashSet<>();
        for (final long r : rs) {
            pool.free(local, blocks, r, scratch);
            freed.add(r);
            assertTrue(local.size() <= localRecords, "the local bag grew past its bound: " + local.size());
        }
        final long pooled = recordsInUse();
        final long shared = pooled - local.size();
        assertTrue(shared > 0, "nothing went to the shared stack");
        assertTrue(shared <= (long) sharedBlocks * B, "the shared stack holds more than 2 blocks: " + shared);
        assertTrue(pooled < n, "nothing went back to the allocator");
        assertTrue(pool.sharedRecords() > 0 && pool.sharedRecords() <= (long) sharedBlocks * B,
                "sharedRecords " + pool.sharedRecords());

        // Another thread's empty bag is served from the shared stack before the allocator.
        final BlockBag other = new BlockBag(blocks);
        final List<Long> taken = new ArrayList<>();
        for (long i = 0; i < shared; i++) {
            final long r = pool.allocate(other);
            assertTrue(freed.contains(r), "not a pooled record");
            assertEquals(pooled, recordsInUse(), "took a record from the allocator while the shared stack had some");
            taken.add(r);
        }
        assertEquals(0, pool.sharedRecords());
        final long fresh = pool.allocate(other);
        assertEquals(pooled + 1, recordsInUse(), "an empty pool allocates from the allocator");
        assertTrue(other.isEmpty());
        records.free(fresh);
        for (final long r : taken) {
            records.free(r);
        }
        pool.drain(local, blocks, scratch);
        assertEquals(0, recordsInUse(), "drain missed local records");
        other.releaseBlocks();
    }

    @Test
    void releaseAndDrainReturnEveryRecord() {
        final RecordPool pool = new RecordPool(records, RECORD, B, 8);
        final BlockBag local = new BlockBag(blocks);
        final BlockBag departed = new BlockBag(blocks);
        for (final long r : allocateDirect(3 * B + 10)) {
            pool.free(departed, blocks, r, scratch);
        }
        final long beforeRelease = recordsInUse();
        final long inDeparted = departed.size();
        assertTrue(inDeparted > 0 && inDeparted <= B);
        pool.release(departed, blocks, scratch); // a thread leaves: its whole bag goes on
        assertEquals(0, departed.size());
        assertTrue(departed.isEmpty());
        assertTrue(recordsInUse() <= beforeRelease);
        assertTrue(pool.sharedRecords() > 0, "release put nothing on the shared stack");
        for (final long r : allocateDirect(100)) {
            pool.free(local, blocks, r, scratch);
        }
        assertEquals(100, local.size());
        pool.drain(local, blocks, scratch);
        assertEquals(0, recordsInUse(), "drain left records in the pool");
        assertEquals(0, pool.sharedRecords());
        assertTrue(local.isEmpty());
        final BlockBag after = new BlockBag(blocks);
        final long r = pool.allocate(after);
        assertEquals(1, recordsInUse(), "a drained pool allocates from the allocator");
        records.free(r);
        after.releaseBlocks();
    }

    @Test
    void freeAllSplicesABagAndShedsBeyondTheLocalBound() {
        final RecordPool pool = new RecordPool(records, RECORD, B, 1);
        final BlockBag local = new BlockBag(blocks);
        final BlockBag retired = new BlockBag(blocks);
        final int n = 5 * B;
        for (final long r : allocateDirect(n)) {
            retired.add(r);
        }
        pool.freeAll(local, blocks, retired, scratch);
        assertTrue(retired.isEmpty());
        assertTrue(local.size() <= B, "local holds " + local.size());
        final long pooled = recordsInUse();
        assertEquals(local.size() + B, pooled, "one full block in the shared stack, the rest freed");
        pool.drain(local, blocks, scratch);
        assertEquals(0, recordsInUse());
        retired.releaseBlocks();
    }

    @Test
    void withoutLocalRecordsThePoolIsAPassThrough() {
        final RecordPool pool = new RecordPool(records, RECORD, 0, 64);
        final BlockBag local = new BlockBag(blocks);
        final long p = pool.allocate(local);
        assertEquals(1, recordsInUse());
        pool.free(local, blocks, p, scratch);
        assertEquals(0, recordsInUse(), "a free must reach the allocator at once");
        assertTrue(local.isEmpty());
        final BlockBag bag = new BlockBag(blocks);
        bag.add(pool.allocate(local));
        for (final long r : allocateDirect(2 * B + 5)) {
            bag.add(r);
        }
        assertEquals(2 * B + 6, recordsInUse());
        pool.freeAll(local, blocks, bag, scratch);
        assertEquals(0, recordsInUse(), "freeAll must reach the allocator at once");
        assertEquals(0, pool.sharedRecords(), "a pass-through pool cached blocks");
        assertTrue(local.isEmpty());
        assertTrue(bag.isEmpty());
        final long q = pool.allocate(local);
        assertNotEquals(0, q);
        assertEquals(1, recordsInUse());
        pool.drain(local, blocks, scratch);
        assertEquals(1, recordsInUse(), "drain freed a record the pool does not hold");
        pool.free(local, blocks, q, scratch);
        assertEquals(0, recordsInUse());
        bag.releaseBlocks();
    }
}
