package dev.limbo.core;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.util.Locale;
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
     * @param slotFields the fields of one slot (at least one); padding is added
     * @throws IllegalArgumentException if {@code base} is not a positive multiple of
     *                                  {@link Layouts#PADDED}, there are no fields, or the table
     *                                  does not fit in the global region
     */
    public PerThreadSlots(final long base, final MemoryLayout... slotFields) {
        if (base <= 0 || (base & (Layouts.PADDED - 1)) != 0) {
            throw new IllegalArgumentException("slot table base must be a positive multiple of "
                    + Layouts.PADDED + ", was " + base);
        }
        this.slotLayout = layout(slotFields);
        this.base = base;
        this.stride = slotLayout.byteSize();
        final long bytes = stride * Participants.CAPACITY;
        final long regionSize = Region.global().size();
        if (bytes > regionSize - base) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "a slot table of %d bytes at %d does not fit in the region (%d bytes)", bytes, base, regionSize));
        }
    }

    /** Bytes a table of {@code slotFields} (at least one) needs. */
    public static long bytesFor(final MemoryLayout... slotFields) {
        return layout(slotFields).byteSize() * Participants.CAPACITY;
    }

    /** A table in permanently claimed, committed space of the global region (never freed). */
    public static PerThreadSlots claimPermanent(final MemoryLayout... slotFields) {
        final Region region = Region.global();
        final long bytes = (bytesFor(slotFields) + region.pageSize() - 1) & -region.pageSize();
        final long base = region.claim(bytes, region.pageSize());
        region.commit(base, bytes);
        return new PerThreadSlots(base, slotFields);
    }

    /** The padded layout of a slot of {@code slotFields}; without a field, all participants would share a slot. */
    private static StructLayout layout(final MemoryLayout... slotFields) {
        if (slotFields.length == 0) {
            throw new IllegalArgumentException(
                    "a slot needs at least one field: without one, every participant's slot is the same");
        }
        return Layouts.padded("PerThreadSlot", Layouts.PADDED, slotFields);
    }

    /** The offset of participant {@code id}'s slot. */
    public long slot(final int id) {
        return base + Objects.checkIndex(id, Participants.CAPACITY) * stride;
    }

    /**
     * The offset of the field at {@code fieldOffset} in participant {@code id}'s slot.
     *
     * @throws IndexOutOfBoundsException if {@code id} is not a participant id, or {@code fieldOffset}
     *                                   lies outside a slot (it would address another participant's)
     */
    public long field(final int id, final long fieldOffset) {
        return slot(id) + Objects.checkIndex(fieldOffset, stride);
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
