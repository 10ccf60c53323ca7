package dev.limbo.reclaim.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Layouts;

import java.lang.foreign.MemoryLayout;

import org.junit.jupiter.api.Test;

/** The block record's layout: sizes, offsets and alignment, as BlockLayout's diagram documents them. */
class BlockLayoutTest {

    @Test
    void aBlockIsAHeaderOfTwoWordsThenDebrasTwoHundredFiftySixSlots() {
        assertEquals(256, BlockLayout.CAPACITY);
        assertEquals(0, BlockLayout.NEXT);
        assertEquals(8, BlockLayout.COUNT);
        assertEquals(16, BlockLayout.SLOTS);
        assertEquals(16 + 256 * 8, BlockLayout.SIZE);
        assertEquals(BlockLayout.LAYOUT.byteSize(), BlockLayout.SIZE);
    }

    @Test
    void everyMemberIsANaturallyAlignedLongAndTheyDoNotOverlap() {
        assertEquals(Long.BYTES, BlockLayout.LAYOUT.byteAlignment());
        long offset = 0;
        for (final MemoryLayout member : BlockLayout.LAYOUT.memberLayouts()) {
            assertEquals(0, offset % Long.BYTES, "member " + member + " at " + offset);
            assertEquals(Long.BYTES, member.byteAlignment(), "member " + member);
            offset += member.byteSize();
        }
        assertEquals(BlockLayout.SIZE, offset, "members leave no gap and no tail padding");
    }

    @Test
    void theHeaderSharesTheBlocksFirstCacheLine() {
        // a bag touches next and count together on every add, pop and block move
        assertTrue(BlockLayout.COUNT + Long.BYTES <= Layouts.CACHE_LINE);
    }

    @Test
    void slotIAddressesTheIthPointerAndTheLastSlotEndsTheBlock() {
        final long block = 4096;
        for (int i = 0; i < BlockLayout.CAPACITY; i++) {
            assertEquals(block + BlockLayout.SLOTS + 8L * i, BlockLayout.slot(block, i), "slot " + i);
        }
        assertEquals(block + BlockLayout.SIZE, BlockLayout.slot(block, BlockLayout.CAPACITY - 1) + Long.BYTES);
    }

    @Test
    void blocksFromABlockSourceAreAlignedForTheirWordsAndTheStacksThreeBitShift() {
        final LimboAllocator allocator = LimboAllocator.create();
        final BlockSource source = new BlockSource(allocator);
        final long[] taken = new long[2 * BlockSource.CACHED];
        for (int i = 0; i < taken.length; i++) {
            taken[i] = source.take();
            assertEquals(0, taken[i] & 7, "block 0x" + Long.toHexString(taken[i]));
            assertTrue(allocator.usableSize(taken[i]) >= BlockLayout.SIZE, "block smaller than its layout");
        }
        allocator.freeBatch(taken, taken.length);
        source.close();
    }
}
