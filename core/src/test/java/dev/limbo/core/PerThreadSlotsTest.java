package dev.limbo.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.ValueLayout;
import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;

class PerThreadSlotsTest {

    private static final MemoryLayout COUNT = ValueLayout.JAVA_LONG.withName("count");
    private static final MemoryLayout FLAG = ValueLayout.JAVA_LONG.withName("flag");

    @Test
    void aSmallSlotIsPaddedToA128ByteStride() {
        final PerThreadSlots slots = new PerThreadSlots(128, COUNT);
        assertEquals(128, slots.stride());
        assertEquals(128, slots.slotLayout().byteSize());
        assertEquals(128, slots.base());
    }

    @Test
    void aLargerSlotIsPaddedToTheNextMultipleOf128() {
        final MemoryLayout[] fields = new MemoryLayout[20];
        for (int i = 0; i < fields.length; i++) {
            fields[i] = ValueLayout.JAVA_LONG.withName("f" + i);
        }
        final PerThreadSlots slots = new PerThreadSlots(256, fields);
        assertEquals(256, slots.stride());
    }

    @Test
    void bytesForCoversOneStridePerParticipant() {
        assertEquals(128L * Participants.CAPACITY, PerThreadSlots.bytesFor(COUNT));
        assertEquals(128L * Participants.CAPACITY, PerThreadSlots.bytesFor(COUNT, FLAG));
    }

    @Test
    void everySlotIs128AlignedAndDistinct() {
        final PerThreadSlots slots = new PerThreadSlots(4096, COUNT, FLAG);
        final Set<Long> seen = new HashSet<>();
        for (int id = 0; id < Participants.CAPACITY; id++) {
            final long slot = slots.slot(id);
            assertEquals(0, slot % 128, "slot " + id);
            assertEquals(4096 + 128L * id, slot);
            assertTrue(seen.add(slot), "slot " + id + " repeats");
        }
        assertTrue(slots.slot(Participants.CAPACITY - 1) + slots.stride() <= 4096 + PerThreadSlots.bytesFor(COUNT, FLAG));
    }

    @Test
    void fieldAddsTheFieldOffsetToTheSlot() {
        final PerThreadSlots slots = new PerThreadSlots(1024, COUNT, FLAG);
        final long flag = Layouts.offsetOf(slots.slotLayout(), "flag");
        assertEquals(8, flag);
        assertEquals(slots.slot(3) + 8, slots.field(3, flag));
    }

    @Test
    void idsOutsideTheCapacityAreRejected() {
        final PerThreadSlots slots = new PerThreadSlots(128, COUNT);
        assertThrows(IndexOutOfBoundsException.class, () -> slots.slot(-1));
        assertThrows(IndexOutOfBoundsException.class, () -> slots.slot(Participants.CAPACITY));
        assertThrows(IndexOutOfBoundsException.class, () -> slots.slot(Integer.MAX_VALUE));
        assertThrows(IndexOutOfBoundsException.class, () -> slots.field(-1, 0));
    }

    @Test
    void aBaseThatIsNotAPositiveMultipleOf128IsRejected() {
        for (final long bad : new long[] {0, -128, 8, 64, 192 + 8, 4096 + 64}) {
            assertThrows(IllegalArgumentException.class, () -> new PerThreadSlots(bad, COUNT), "base " + bad);
        }
    }

    @Test
    void claimPermanentGivesCommittedWritableSlotsInTheGlobalRegion() {
        final Region region = Region.global();
        final long committedBefore = region.committedBytes();
        final PerThreadSlots slots = PerThreadSlots.claimPermanent(COUNT, FLAG);
        assertTrue(region.committedBytes() - committedBefore >= PerThreadSlots.bytesFor(COUNT, FLAG),
                "the table's pages must be charged as committed");
        assertEquals(0, slots.base() % region.pageSize());
        assertTrue(slots.base() >= region.pageSize());
        assertTrue(slots.base() + PerThreadSlots.bytesFor(COUNT, FLAG) <= region.claimedBytes());
        final long flag = Layouts.offsetOf(slots.slotLayout(), "flag");
        for (int id = 0; id < Participants.CAPACITY; id++) {
            assertEquals(0L, Words.lv(slots.slot(id)));
            Words.sv(slots.slot(id), id);
            Words.sr(slots.field(id, flag), -id);
        }
        for (int id = 0; id < Participants.CAPACITY; id++) {
            assertEquals(id, Words.lv(slots.slot(id)));
            assertEquals(-id, Words.la(slots.field(id, flag)));
        }
    }

    @Test
    void twoPermanentTablesDoNotOverlap() {
        final PerThreadSlots a = PerThreadSlots.claimPermanent(COUNT);
        final PerThreadSlots b = PerThreadSlots.claimPermanent(COUNT);
        final long bytes = PerThreadSlots.bytesFor(COUNT);
        assertTrue(a.base() + bytes <= b.base() || b.base() + bytes <= a.base());
    }

    @Test
    void theCallingThreadsSlotIsUsableThroughItsParticipantId() {
        final PerThreadSlots slots = PerThreadSlots.claimPermanent(COUNT);
        final int id = Participants.current();
        Words.xadd(slots.slot(id), 5);
        Words.xadd(slots.slot(id), 6);
        assertEquals(11L, Words.lv(slots.slot(id)));
    }
}
