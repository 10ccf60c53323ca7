package dev.limbo.allocator.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.MemoryLayout;

import org.junit.jupiter.api.Test;

class LayoutsAndAnchorTest {

    @Test
    void aDescriptorIsOneCacheLineWithEveryFieldEightByteAligned() {
        assertEquals(64, DescriptorLayout.SIZE);
        assertEquals(64, DescriptorLayout.LAYOUT.byteSize());
        final long[] offsets = {DescriptorLayout.ANCHOR, DescriptorLayout.NEXT_PARTIAL, DescriptorLayout.NEXT_FREE,
            DescriptorLayout.SUPERBLOCK, DescriptorLayout.REMOTE_HEAD, DescriptorLayout.MAX_COUNT,
            DescriptorLayout.SIZE_CLASS};
        final java.util.Set<Long> distinct = new java.util.HashSet<>();
        for (final long off : offsets) {
            assertEquals(0, off % 8, "offset " + off);
            assertEquals(true, off + 8 <= DescriptorLayout.SIZE, "offset " + off);
            distinct.add(off);
        }
        assertEquals(offsets.length, distinct.size(), "fields overlap");
        long offset = 0;
        for (final MemoryLayout member : DescriptorLayout.LAYOUT.memberLayouts()) {
            assertEquals(0, offset % 8, "member " + member + " at " + offset);
            offset += member.byteSize();
        }
        assertEquals(64, offset);
    }

    @Test
    void aPageEntryIsThirtyTwoBytesOfFourWords() {
        assertEquals(32, PageEntryLayout.SIZE);
        assertEquals(0, PageEntryLayout.OWNER);
        assertEquals(8, PageEntryLayout.HEADER);
        assertEquals(16, PageEntryLayout.FOOTER);
        assertEquals(24, PageEntryLayout.FLAGS);
    }

    @Test
    void anAnchorPacksAndUnpacksItsFieldsAtTheExtremes() {
        final int max31 = 0x7FFF_FFFF;
        final int[] states = {Anchor.FULL, Anchor.PARTIAL, Anchor.EMPTY};
        final int[] values = {0, 1, 2, 1023, 8192, 1 << 30, max31 - 1, max31};
        for (final int state : states) {
            for (final int avail : values) {
                for (final int count : values) {
                    final long a = Anchor.pack(state, avail, count);
                    assertEquals(state, Anchor.state(a), "state of " + Long.toHexString(a));
                    assertEquals(avail, Anchor.avail(a), "avail of " + Long.toHexString(a));
                    assertEquals(count, Anchor.count(a), "count of " + Long.toHexString(a));
                }
            }
        }
        assertEquals(0L, Anchor.pack(Anchor.FULL, 0, 0));
    }

    @Test
    void aPageOwnerWordRoundTripsItsFields() {
        final int[] kinds = {PageMap.NONE, PageMap.SMALL, PageMap.LARGE, PageMap.LARGE_INTERIOR};
        for (final int kind : kinds) {
            for (final int allocator : new int[] {0, 1, 0xFFFF}) {
                for (final int sc : new int[] {0, 1, SizeClasses.COUNT}) {
                    for (final int d : new int[] {0, 1, Integer.MAX_VALUE, -1}) {
                        final long w = PageMap.encode(kind, allocator, sc, d);
                        assertEquals(kind, PageMap.kind(w));
                        assertEquals(allocator, PageMap.allocator(w));
                        assertEquals(sc, PageMap.sizeClass(w));
                        assertEquals(d, PageMap.descriptor(w));
                    }
                }
            }
        }
    }
}
