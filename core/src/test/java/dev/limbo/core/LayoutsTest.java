package dev.limbo.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.core.internal.Native;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

import org.junit.jupiter.api.Test;

class LayoutsTest {

    @Test
    void thePaddedRangeIsTwoCacheLines() {
        assertEquals(64, Layouts.CACHE_LINE);
        assertEquals(2 * Layouts.CACHE_LINE, Layouts.PADDED);
    }

    @Test
    void paddedRoundsTheSizeUpToTheMultiple() {
        assertEquals(128, Layouts.padded("one", 128, ValueLayout.JAVA_LONG.withName("a")).byteSize());
        assertEquals(128, Layouts.padded("three", 128, ValueLayout.JAVA_LONG.withName("a"),
                ValueLayout.JAVA_LONG.withName("b"), ValueLayout.JAVA_LONG.withName("c")).byteSize());
        assertEquals(256, Layouts.padded("seventeen", 128, longs(17)).byteSize());
        assertEquals(64, Layouts.padded("small", 64, ValueLayout.JAVA_INT.withName("x")).byteSize());
    }

    @Test
    void paddedAddsNoPaddingWhenTheFieldsAlreadyFillTheMultiple() {
        final StructLayout exact = Layouts.padded("exact", 128, longs(16));
        assertEquals(128, exact.byteSize());
        assertEquals(16, exact.memberLayouts().size());
    }

    @Test
    void paddedSizesAreAlwaysMultiplesOf128() {
        for (int n = 1; n <= 40; n++) {
            final StructLayout layout = Layouts.padded("n" + n, Layouts.PADDED, longs(n));
            assertEquals(0, layout.byteSize() % 128, n + " longs gave " + layout.byteSize());
            assertTrue(layout.byteSize() >= 8L * n);
            assertTrue(layout.byteSize() < 8L * n + 128);
        }
    }

    @Test
    void paddedKeepsTheNameAndTheFieldOffsets() {
        final StructLayout layout = Layouts.padded("Node", 128, ValueLayout.JAVA_LONG.withName("next"),
                ValueLayout.JAVA_LONG.withName("value"));
        assertEquals("Node", layout.name().orElseThrow());
        assertEquals(0, Layouts.offsetOf(layout, "next"));
        assertEquals(8, Layouts.offsetOf(layout, "value"));
    }

    @Test
    void paddedRejectsMultiplesThatAreNotPositivePowersOfTwo() {
        for (final long bad : new long[] {0, -128, 3, 96, 100, 129}) {
            assertThrows(IllegalArgumentException.class,
                    () -> Layouts.padded("bad", bad, ValueLayout.JAVA_LONG.withName("a")), "multiple " + bad);
        }
    }

    @Test
    void offsetOfFollowsTheLayoutIncludingAlignmentGaps() {
        final StructLayout layout = MemoryLayout.structLayout(ValueLayout.JAVA_INT.withName("a"),
                MemoryLayout.paddingLayout(4), ValueLayout.JAVA_LONG.withName("b"),
                ValueLayout.JAVA_SHORT.withName("c"));
        assertEquals(0, Layouts.offsetOf(layout, "a"));
        assertEquals(8, Layouts.offsetOf(layout, "b"));
        assertEquals(16, Layouts.offsetOf(layout, "c"));
    }

    @Test
    void offsetOfAnUnknownFieldIsRejected() {
        final StructLayout layout = Layouts.padded("x", 128, ValueLayout.JAVA_LONG.withName("a"));
        assertThrows(IllegalArgumentException.class, () -> Layouts.offsetOf(layout, "missing"));
    }

    @Test
    void theRegionHeaderIsThreePaddedSlotsOf128Bytes() {
        assertEquals(384, RegionHeaderLayout.LAYOUT.byteSize());
    }

    @Test
    void theRegionHeaderOffsetsAreTheDocumentedOnes() {
        assertEquals(0, RegionHeaderLayout.MAGIC_OFFSET);
        assertEquals(8, RegionHeaderLayout.SIZE_OFFSET);
        assertEquals(16, RegionHeaderLayout.PAGE_SIZE_OFFSET);
        assertEquals(128, RegionHeaderLayout.BRK_OFFSET);
        assertEquals(256, RegionHeaderLayout.COMMITTED_OFFSET);
    }

    @Test
    void brkAndCommittedEachStartA128ByteSlotOfTheirOwn() {
        assertEquals(0, RegionHeaderLayout.BRK_OFFSET % 128);
        assertEquals(0, RegionHeaderLayout.COMMITTED_OFFSET % 128);
        final long brkSlot = RegionHeaderLayout.BRK_OFFSET / 128;
        final long committedSlot = RegionHeaderLayout.COMMITTED_OFFSET / 128;
        assertNotEquals(brkSlot, committedSlot);
        for (final long readMostly : new long[] {RegionHeaderLayout.MAGIC_OFFSET, RegionHeaderLayout.SIZE_OFFSET,
                RegionHeaderLayout.PAGE_SIZE_OFFSET}) {
            assertNotEquals(brkSlot, readMostly / 128);
            assertNotEquals(committedSlot, readMostly / 128);
        }
    }

    @Test
    void everyRegionHeaderFieldIsANaturallyAlignedLong() {
        for (final long offset : new long[] {RegionHeaderLayout.MAGIC_OFFSET, RegionHeaderLayout.SIZE_OFFSET,
                RegionHeaderLayout.PAGE_SIZE_OFFSET, RegionHeaderLayout.BRK_OFFSET,
                RegionHeaderLayout.COMMITTED_OFFSET}) {
            assertEquals(0, offset % 8, "offset " + offset);
            assertTrue(offset + 8 <= RegionHeaderLayout.LAYOUT.byteSize());
        }
        final long[] all = {RegionHeaderLayout.MAGIC_OFFSET, RegionHeaderLayout.SIZE_OFFSET,
                RegionHeaderLayout.PAGE_SIZE_OFFSET, RegionHeaderLayout.BRK_OFFSET, RegionHeaderLayout.COMMITTED_OFFSET};
        for (int i = 0; i < all.length; i++) {
            for (int j = i + 1; j < all.length; j++) {
                assertTrue(Math.abs(all[i] - all[j]) >= 8, "fields overlap at " + all[i] + " and " + all[j]);
            }
        }
    }

    @Test
    void theWholeRegionHeaderFitsInOnePage() {
        assertTrue(RegionHeaderLayout.LAYOUT.byteSize() <= Native.pageSize());
        assertTrue(RegionHeaderLayout.LAYOUT.byteSize() <= Region.global().claim(8, 8),
                "the first claim of any region lies past the header");
    }

    private static MemoryLayout[] longs(final int n) {
        final MemoryLayout[] fields = new MemoryLayout[n];
        for (int i = 0; i < n; i++) {
            fields[i] = ValueLayout.JAVA_LONG.withName("f" + i);
        }
        return fields;
    }
}
