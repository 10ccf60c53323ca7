package dev.limbo.allocator.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.MemoryLayout;

import org.junit.jupiter.api.Test;

class LayoutsAndAnchorTest {

    @Test
    void aDescriptorIsTwoCacheLinesSharedThenOwnerOnlyWithEveryFieldEightByteAligned() {
        assertEquals(128, DescriptorLayout.SIZE);
        assertEquals(128, DescriptorLayout.LAYOUT.byteSize());
        final long[] offsets = {DescriptorLayout.ANCHOR, DescriptorLayout.NEXT_PARTIAL, DescriptorLayout.NEXT_FREE,
            DescriptorLayout.SUPERBLOCK, DescriptorLayout.REMOTE_HEAD, DescriptorLayout.MAX_COUNT,
            DescriptorLayout.SIZE_CLASS, DescriptorLayout.LOCAL_HEAD, DescriptorLayout.LOCAL_COUNT,
            DescriptorLayout.OWNED_PREV, DescriptorLayout.OWNED_NEXT};
        for (final long shared : new long[] {DescriptorLayout.ANCHOR, DescriptorLayout.REMOTE_HEAD}) {
            assertEquals(0, shared / 64, "a shared field on the first line");
        }
        for (final long ownerOnly : new long[] {DescriptorLayout.LOCAL_HEAD, DescriptorLayout.LOCAL_COUNT,
            DescriptorLayout.OWNED_PREV, DescriptorLayout.OWNED_NEXT}) {
            assertEquals(1, ownerOnly / 64, "an owner-only field on the second line");
        }
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
        assertEquals(128, offset);
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
        final int max20 = 0xF_FFFF;
        final int[] states = {Anchor.FULL, Anchor.PARTIAL, Anchor.EMPTY};
        final int[] values = {0, 1, 2, 1023, 8192, 1 << 19, max20 - 1, max20};
        final long[] generations = {0, 1, 0x3F_FFFE, 0x3F_FFFF};
        for (final long generation : generations) {
            final long old = Anchor.pack(Anchor.EMPTY, 3, 4) | generation << 40;
            for (final int state : states) {
                for (final int avail : values) {
                    for (final int count : values) {
                        final long a = Anchor.update(old, state, avail, count);
                        assertEquals(state, Anchor.state(a), "state of " + Long.toHexString(a));
                        assertEquals(generation, Anchor.generation(a), "generation of " + Long.toHexString(a));
                        assertEquals(avail, Anchor.avail(a), "avail of " + Long.toHexString(a));
                        assertEquals(count, Anchor.count(a), "count of " + Long.toHexString(a));
                    }
                }
            }
        }
        assertEquals(0L, Anchor.pack(Anchor.FULL, 0, 0));
    }

    @Test
    void theBlockCountOfTheLargestPageFitsAnAnchor() {
        final long mostBlocks = (1L << 22) / SizeClasses.size(1); // pageShift 22, 8-byte blocks
        final long a = Anchor.pack(Anchor.EMPTY, (int) mostBlocks - 1, (int) mostBlocks);
        assertEquals(mostBlocks, Anchor.count(a));
        assertEquals(mostBlocks - 1, Anchor.avail(a));
    }

    @Test
    void renewStartsTheNextGenerationFullAndEmptyOfFreeBlocks() {
        final long first = Anchor.renew(0);
        assertEquals(Anchor.FULL, Anchor.state(first));
        assertEquals(1, Anchor.generation(first));
        assertEquals(0, Anchor.count(first));
        final long emptied = Anchor.update(first, Anchor.EMPTY, 5, 1024);
        final long second = Anchor.renew(emptied);
        assertEquals(2, Anchor.generation(second));
        assertEquals(Anchor.pack(Anchor.FULL, 0, 0), second & ~(0x3F_FFFFL << 40));
        assertEquals(0, Anchor.generation(Anchor.renew(Anchor.update(0x3F_FFFFL << 40, Anchor.EMPTY, 0, 1))),
                "the generation wraps");
        assertEquals(true, Anchor.update(first, Anchor.FULL, 0, 0) != Anchor.update(second, Anchor.FULL, 0, 0),
                "the same fields in two generations are two anchor values");
    }

    @Test
    void aPageOwnerWordRoundTripsItsFields() {
        final int[] kinds = {PageMap.NONE, PageMap.SMALL, PageMap.LARGE, PageMap.LARGE_INTERIOR};
        for (final int kind : kinds) {
            for (final int allocator : new int[] {0, 1, 0xFFFF}) {
                for (final int sc : new int[] {0, 1, SizeClasses.COUNT}) {
                    for (final int d : new int[] {0, 1, PageMap.MAX_DESCRIPTORS - 1}) {
                        for (final int cache : new int[] {0, 1, PageMap.MAX_CACHE}) {
                            final long w = PageMap.encode(kind, allocator, sc, cache, d);
                            assertEquals(kind, PageMap.kind(w));
                            assertEquals(allocator, PageMap.allocator(w));
                            assertEquals(sc, PageMap.sizeClass(w));
                            assertEquals(cache, PageMap.cache(w));
                            assertEquals(d, PageMap.descriptor(w));
                            assertEquals(PageMap.encode(kind, allocator, sc, d), PageMap.withCache(w, 0));
                        }
                    }
                }
            }
        }
    }
}
