package dev.limbo.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.core.internal.Native;

import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class RegionTest {

    private static final long PAGE = Native.pageSize();

    private Region region;

    @BeforeEach
    void reserveASmallRegion() {
        region = Region.reserve(64 * PAGE, 8 * PAGE);
    }

    @AfterEach
    void releaseIt() {
        if (region != null) {
            region.close();
        }
    }

    @Test
    void aFreshRegionHasTheRequestedSizeAndOnlyTheHeaderPageClaimed() {
        assertEquals(64 * PAGE, region.size());
        assertEquals(PAGE, region.pageSize());
        assertEquals(8 * PAGE, region.commitLimit());
        assertEquals(PAGE, region.claimedBytes());
        assertEquals(0, region.committedBytes());
        assertNotEquals(0, region.address());
        assertEquals(region.size(), region.segment().byteSize());
    }

    @Test
    void theSizeIsRoundedUpToWholePages() {
        try (Region odd = Region.reserve(3 * PAGE + 1, PAGE)) {
            assertEquals(4 * PAGE, odd.size());
            assertEquals(4 * PAGE, odd.segment().byteSize());
        }
    }

    @Test
    void theHeaderHoldsMagicSizeAndPageSize() {
        final var segment = region.segment();
        assertEquals(RegionHeaderLayout.MAGIC, segment.get(ValueLayout.JAVA_LONG, RegionHeaderLayout.MAGIC_OFFSET));
        assertEquals(region.size(), segment.get(ValueLayout.JAVA_LONG, RegionHeaderLayout.SIZE_OFFSET));
        assertEquals(PAGE, segment.get(ValueLayout.JAVA_LONG, RegionHeaderLayout.PAGE_SIZE_OFFSET));
        assertEquals(region.claimedBytes(), segment.get(ValueLayout.JAVA_LONG, RegionHeaderLayout.BRK_OFFSET));
        assertEquals(region.committedBytes(),
                segment.get(ValueLayout.JAVA_LONG, RegionHeaderLayout.COMMITTED_OFFSET));
    }

    @Test
    void theMagicSpellsLimborgnInAscii() {
        final byte[] bigEndian = java.nio.ByteBuffer.allocate(8).putLong(RegionHeaderLayout.MAGIC).array();
        assertEquals("LIMBORGN", new String(bigEndian, java.nio.charset.StandardCharsets.US_ASCII));
    }

    @Test
    void claimsAreAlignedDisjointAndNeverInTheHeaderPage() {
        final long[] alignments = {1, 8, 16, 64, 128, 512, PAGE, 2 * PAGE};
        final long[] sizes = {1, 24, 100, 8, 300, 17, PAGE, 5};
        final List<long[]> ranges = new ArrayList<>();
        for (int i = 0; i < alignments.length; i++) {
            final long offset = region.claim(sizes[i], alignments[i]);
            assertNotEquals(0, offset);
            assertTrue(offset >= PAGE, "claim " + offset + " lies in the header page");
            assertEquals(0, offset % alignments[i], "claim " + offset + " not aligned to " + alignments[i]);
            assertTrue(offset + sizes[i] <= region.claimedBytes());
            for (final long[] r : ranges) {
                assertTrue(offset >= r[1] || offset + sizes[i] <= r[0],
                        "claim [" + offset + ", " + (offset + sizes[i]) + ") overlaps [" + r[0] + ", " + r[1] + ")");
            }
            ranges.add(new long[] {offset, offset + sizes[i]});
        }
    }

    @Test
    void claimedSpaceIsReadableAndWritable() {
        final long offset = region.claim(PAGE, PAGE);
        region.segment().set(ValueLayout.JAVA_LONG, offset, 42L);
        region.segment().set(ValueLayout.JAVA_LONG, offset + PAGE - 8, 43L);
        assertEquals(42L, region.segment().get(ValueLayout.JAVA_LONG, offset));
        assertEquals(43L, region.segment().get(ValueLayout.JAVA_LONG, offset + PAGE - 8));
    }

    @Test
    void claimingUntilExhaustedThrowsAnErrorNamingTheSizeProperty() {
        int claims = 0;
        while (region.claimedBytes() + PAGE <= region.size()) {
            region.claim(PAGE, PAGE);
            claims++;
        }
        assertEquals(63, claims);
        final long claimed = region.claimedBytes();
        final OffHeapOutOfMemoryError e = assertThrows(OffHeapOutOfMemoryError.class, () -> region.claim(1, 1));
        assertTrue(e.getMessage().contains(Region.SIZE_PROPERTY), e.getMessage());
        assertEquals(claimed, region.claimedBytes(), "a failed claim must not move the bump pointer");
    }

    @Test
    void aClaimLargerThanTheRegionOrOverflowingIsRefused() {
        final OffHeapOutOfMemoryError big = assertThrows(OffHeapOutOfMemoryError.class,
                () -> region.claim(region.size(), 8));
        assertTrue(big.getMessage().contains(Region.SIZE_PROPERTY), big.getMessage());
        assertThrows(OffHeapOutOfMemoryError.class, () -> region.claim(Long.MAX_VALUE, 8));
        assertThrows(OffHeapOutOfMemoryError.class, () -> region.claim(8, 1L << 62));
        assertEquals(PAGE, region.claimedBytes());
    }

    @Test
    void nonPositiveClaimSizesAreRejected() {
        assertThrows(IllegalArgumentException.class, () -> region.claim(0, 8));
        assertThrows(IllegalArgumentException.class, () -> region.claim(-8, 8));
        assertEquals(PAGE, region.claimedBytes());
    }

    @Test
    void alignmentsThatAreNotPositivePowersOfTwoAreRejected() {
        for (final long alignment : new long[] {0, -8, 3, 24, 96, Long.MIN_VALUE}) {
            assertThrows(IllegalArgumentException.class, () -> region.claim(8, alignment), "alignment " + alignment);
        }
        assertEquals(PAGE, region.claimedBytes());
    }

    @Test
    void commitAndDecommitKeepTheCommittedCount() {
        final long offset = region.claim(8 * PAGE, PAGE);
        region.commit(offset, 3 * PAGE);
        assertEquals(3 * PAGE, region.committedBytes());
        region.commit(offset + 3 * PAGE, 2 * PAGE);
        assertEquals(5 * PAGE, region.committedBytes());
        region.decommit(offset, 3 * PAGE);
        assertEquals(2 * PAGE, region.committedBytes());
        region.decommit(offset + 3 * PAGE, 2 * PAGE);
        assertEquals(0, region.committedBytes());
        assertEquals(0, region.segment().get(ValueLayout.JAVA_LONG, RegionHeaderLayout.COMMITTED_OFFSET));
    }

    @Test
    void committingUpToTheLimitExactlyIsAllowed() {
        final long offset = region.claim(8 * PAGE, PAGE);
        region.commit(offset, 8 * PAGE);
        assertEquals(region.commitLimit(), region.committedBytes());
    }

    @Test
    void committingBeyondTheLimitThrowsAnErrorNamingTheCommitLimitPropertyAndChargesNothing() {
        final long offset = region.claim(16 * PAGE, PAGE);
        region.commit(offset, 6 * PAGE);
        final OffHeapOutOfMemoryError e = assertThrows(OffHeapOutOfMemoryError.class,
                () -> region.commit(offset + 6 * PAGE, 3 * PAGE));
        assertTrue(e.getMessage().contains(Region.COMMIT_LIMIT_PROPERTY), e.getMessage());
        assertEquals(6 * PAGE, region.committedBytes(), "a refused commit must not stay charged");
        region.commit(offset + 6 * PAGE, 2 * PAGE);
        assertEquals(8 * PAGE, region.committedBytes());
    }

    @Test
    void decommitReturnsPagesThatReadAsZeros() {
        final long offset = region.claim(2 * PAGE, PAGE);
        region.commit(offset, 2 * PAGE);
        final var segment = region.segment();
        for (long at = offset; at < offset + 2 * PAGE; at += 512) {
            segment.set(ValueLayout.JAVA_LONG, at, 0x5a5a5a5a5a5a5a5aL);
        }
        region.decommit(offset, PAGE);
        for (long at = offset; at < offset + PAGE; at += 512) {
            assertEquals(0L, segment.get(ValueLayout.JAVA_LONG, at), "decommitted word at " + at);
        }
        for (long at = offset + PAGE; at < offset + 2 * PAGE; at += 512) {
            assertEquals(0x5a5a5a5a5a5a5a5aL, segment.get(ValueLayout.JAVA_LONG, at), "still committed word at " + at);
        }
        assertEquals(PAGE, region.committedBytes());
    }

    @Test
    void decommittedPagesCanBeCommittedAndUsedAgain() {
        final long offset = region.claim(PAGE, PAGE);
        region.commit(offset, PAGE);
        region.segment().set(ValueLayout.JAVA_LONG, offset, 7L);
        region.decommit(offset, PAGE);
        region.commit(offset, PAGE);
        assertEquals(0L, region.segment().get(ValueLayout.JAVA_LONG, offset));
        region.segment().set(ValueLayout.JAVA_LONG, offset, 9L);
        assertEquals(9L, region.segment().get(ValueLayout.JAVA_LONG, offset));
    }

    @Test
    void misalignedCommitOrDecommitRangesAreRejected() {
        final long offset = region.claim(4 * PAGE, PAGE);
        assertThrows(IllegalArgumentException.class, () -> region.commit(offset + 8, PAGE));
        assertThrows(IllegalArgumentException.class, () -> region.commit(offset, PAGE + 8));
        assertThrows(IllegalArgumentException.class, () -> region.commit(offset, 8));
        assertThrows(IllegalArgumentException.class, () -> region.commit(offset, 0));
        assertThrows(IllegalArgumentException.class, () -> region.commit(offset, -PAGE));
        assertThrows(IllegalArgumentException.class, () -> region.decommit(offset + 8, PAGE));
        assertThrows(IllegalArgumentException.class, () -> region.decommit(offset, PAGE - 8));
        assertThrows(IllegalArgumentException.class, () -> region.decommit(offset, 0));
        assertEquals(0, region.committedBytes());
    }

    @Test
    void commitOrDecommitOutsideTheClaimedRangeIsRejected() {
        final long offset = region.claim(2 * PAGE, PAGE);
        // The header page is never claimable.
        assertThrows(IllegalArgumentException.class, () -> region.commit(0, PAGE));
        assertThrows(IllegalArgumentException.class, () -> region.decommit(0, PAGE));
        // Past the bump pointer.
        assertThrows(IllegalArgumentException.class, () -> region.commit(offset, 3 * PAGE));
        assertThrows(IllegalArgumentException.class, () -> region.commit(offset + 2 * PAGE, PAGE));
        assertThrows(IllegalArgumentException.class, () -> region.decommit(offset + 2 * PAGE, PAGE));
        // Past the region, and ranges whose end overflows.
        assertThrows(IllegalArgumentException.class, () -> region.commit(region.size(), PAGE));
        assertThrows(IllegalArgumentException.class, () -> region.commit(offset, Long.MAX_VALUE & -PAGE));
        assertThrows(IllegalArgumentException.class, () -> region.commit(-PAGE, PAGE));
        assertEquals(0, region.committedBytes());
    }

    @Test
    void reservationTheOsRefusesGivesAClearErrorNamingErrnoAndTheSizeProperty() {
        final OffHeapOutOfMemoryError e = assertThrows(OffHeapOutOfMemoryError.class,
                () -> Region.reserve(1L << 60, 1L << 40));
        assertTrue(e.getMessage().contains("ENOMEM"), e.getMessage());
        assertTrue(e.getMessage().contains(Region.SIZE_PROPERTY), e.getMessage());
        assertTrue(e.getMessage().contains("mmap"), e.getMessage());
    }

    @Test
    void aRegionSizeThatOverflowsWhenRoundedToPagesIsRejected() {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Region.reserve(Long.MAX_VALUE, 1L << 40));
        assertTrue(e.getMessage().contains(Long.toString(Long.MAX_VALUE)), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Region.reserve(Long.MAX_VALUE - PAGE + 2, 1L << 40));
    }

    @Test
    void theLargestPageAlignedSizeIsRefusedByTheOsNotByOverflow() {
        final OffHeapOutOfMemoryError e = assertThrows(OffHeapOutOfMemoryError.class,
                () -> Region.reserve(Long.MAX_VALUE & -PAGE, 1L << 40));
        assertTrue(e.getMessage().contains("ENOMEM"), e.getMessage());
        assertTrue(e.getMessage().contains(Long.toString(Long.MAX_VALUE & -PAGE)), "the mapping asked for the size: "
                + e.getMessage());
        assertFalse(e.getMessage().contains(Long.toString(Long.MIN_VALUE)), e.getMessage());
    }

    @Test
    void aRegionSmallerThanTwoPagesIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> Region.reserve(PAGE, PAGE));
        assertThrows(IllegalArgumentException.class, () -> Region.reserve(2 * PAGE - 1, PAGE));
        assertThrows(IllegalArgumentException.class, () -> Region.reserve(0, PAGE));
        assertThrows(IllegalArgumentException.class, () -> Region.reserve(-PAGE, PAGE));
    }

    @Test
    void aNonPositiveCommitLimitIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> Region.reserve(4 * PAGE, 0));
        assertThrows(IllegalArgumentException.class, () -> Region.reserve(4 * PAGE, -1));
    }

    @Test
    void aClosedRegionThrowsIllegalStateOnAccessInsteadOfCrashing() {
        final Region closed = Region.reserve(4 * PAGE, PAGE);
        final long offset = closed.claim(8, 8);
        final var segment = closed.segment();
        segment.set(ValueLayout.JAVA_LONG, offset, 1L);
        closed.close();
        assertThrows(IllegalStateException.class, () -> segment.get(ValueLayout.JAVA_LONG, offset));
        assertThrows(IllegalStateException.class, () -> segment.set(ValueLayout.JAVA_LONG, offset, 2L));
        assertThrows(IllegalStateException.class, closed::claimedBytes);
        assertThrows(IllegalStateException.class, () -> closed.claim(8, 8));
    }

    @Test
    void closingARegionTwiceFailsWithoutUnmappingAgain() {
        final Region twice = Region.reserve(4 * PAGE, PAGE);
        twice.close();
        assertThrows(IllegalStateException.class, twice::close);
    }

    @Test
    void theGlobalRegionCannotBeClosed() {
        final Region global = Region.global();
        assertThrows(IllegalStateException.class, global::close);
        // ... and is still usable afterwards.
        final long offset = global.claim(8, 8);
        global.segment().set(ValueLayout.JAVA_LONG, offset, 5L);
        assertEquals(5L, global.segment().get(ValueLayout.JAVA_LONG, offset));
    }

    @Test
    void theGlobalRegionIsOneInstanceWithTheDefaultSizeAndAValidHeader() {
        final Region global = Region.global();
        assertTrue(global == Region.global());
        final long expected = System.getProperty(Region.SIZE_PROPERTY) == null
                ? Region.DEFAULT_SIZE : Region.parseBytes(System.getProperty(Region.SIZE_PROPERTY));
        assertEquals(expected, global.size());
        assertEquals(RegionHeaderLayout.MAGIC,
                global.segment().get(ValueLayout.JAVA_LONG, RegionHeaderLayout.MAGIC_OFFSET));
        final long limit = System.getProperty(Region.COMMIT_LIMIT_PROPERTY) == null
                ? Native.physicalMemory() : Region.parseBytes(System.getProperty(Region.COMMIT_LIMIT_PROPERTY));
        assertEquals(limit, global.commitLimit());
        assertTrue(global.segment() == Words.SEGMENT);
    }

    @Test
    void toStringReportsReservedClaimedAndCommitted() {
        final long offset = region.claim(PAGE, PAGE);
        region.commit(offset, PAGE);
        final String text = region.toString();
        assertTrue(text.contains("reserved") && text.contains("claimed") && text.contains("committed"), text);
    }

    @Test
    void parseBytesUnderstandsPlainNumbersAndSuffixes() {
        assertEquals(64L << 30, Region.parseBytes("64g"));
        assertEquals(64L << 30, Region.parseBytes("64G"));
        assertEquals(512L << 20, Region.parseBytes("512m"));
        assertEquals(4096, Region.parseBytes("4096"));
        assertEquals(8L << 10, Region.parseBytes("8k"));
        assertEquals(2L << 40, Region.parseBytes("2t"));
        assertEquals(1L << 20, Region.parseBytes(" 1m "));
        assertEquals(0, Region.parseBytes("0"));
    }

    @Test
    void aBadSizePropertyValueNamesThePropertyAndTheValue() {
        for (final String property : new String[] {Region.SIZE_PROPERTY, Region.COMMIT_LIMIT_PROPERTY}) {
            assertEquals(7, Region.property(property, null, 7), "unset: the fallback");
            assertEquals(64L << 30, Region.property(property, "64g", 7));
            for (final String bad : new String[] {"", "  ", "abc", "1.5g", "-1", "9999999t", "99999999999999999999"}) {
                final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> Region.property(property, bad, 7), "'" + bad + "'");
                assertTrue(e.getMessage().contains("-D" + property + "=" + bad + " "), e.getMessage());
            }
        }
    }

    @Test
    void parseBytesRejectsBadInput() {
        for (final String bad : new String[] {"", "  ", "g", "abc", "12x", "1.5g", "-1", "-1g", "9999999t",
                "99999999999999999999"}) {
            assertThrows(IllegalArgumentException.class, () -> Region.parseBytes(bad), "'" + bad + "'");
        }
    }
}
