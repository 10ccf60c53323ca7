package dev.limbo.core;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.util.Objects;

/**
 * A table in the region with one slot per {@linkplain Participants participant id}, each padded to
 * {@link Layouts#PADDED} bytes (or a multiple) so that no two threads' slots share a cache line or
 * an adjacent-line prefetch pair.
 *
 * <p>The table is addressing only: it owns no memory. Create it over memory you allocated (at
 * least {@link #bytesFor} bytes, {@link Layouts#PADDED}-aligned), or claim permanent space from the
 * global region with {@link #claimPermanent}.
 */
public final class PerThreadSlots {

    private final long base;
    private final long stride;
    private final StructLayout slotLayout;

    /**
     * @param base       offset of the table, aligned to {@link Layouts#PADDED}
     * @param slotFields the fields of one slot; padding is added
     */
    public PerThreadSlots(final long base, final MemoryLayout... slotFields) {
        if (base <= 0 || (base & (Layouts.PADDED - 1)) != 0) {
            throw new IllegalArgumentException("slot table base must be a positive multiple of "
                    + Layouts.PADDED + ", was " + base);
        }
        this.slotLayout = Layouts.padded("PerThreadSlot", Layouts.PADDED, slotFields);
        this.base = base;
        this.stride = slotLayout.byteSize();
    }

    /** Bytes a table of {@code slotFields} needs. */
    public static long bytesFor(final MemoryLayout... slotFields) {
        return Layouts.padded("PerThreadSlot", Layouts.PADDED, slotFields).byteSize() * Participants.CAPACITY;
    }

    /** A table in permanently claimed, committed space of the global region (never freed). */
    public static PerThreadSlots claimPermanent(final MemoryLayout... slotFields) {
        final Region region = Region.global();
        final long bytes = (bytesFor(slotFields) + region.pageSize() - 1) & -region.pageSize();
        final long base = region.claim(bytes, region.pageSize());
        region.commit(base, bytes);
        return new PerThreadSlots(base, slotFields);
    }

    /** The offset of participant {@code id}'s slot. */
    public long slot(final int id) {
        return base + Objects.checkIndex(id, Participants.CAPACITY) * stride;
    }

    /** The offset of {@code field} in participant {@code id}'s slot. */
    public long field(final int id, final long fieldOffset) {
        return slot(id) + fieldOffset;
    }

    /** The padded layout of one slot. */
    public StructLayout slotLayout() {
        return slotLayout;
    }

    /** Bytes between consecutive slots. */
    public long stride() {
        return stride;
    }

    /** Offset of the table. */
    public long base() {
        return base;
    }
}
