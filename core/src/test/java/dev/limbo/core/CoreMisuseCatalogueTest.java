package dev.limbo.core;

import static dev.limbo.core.testing.Misuse.rejects;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.core.internal.Native;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.IntConsumer;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The misuse catalogue of {@code dev.limbo.core}: for every public method, every kind of bad input
 * it can get is rejected with an exception of the documented type whose message names the problem,
 * and leaves the object usable and its state unchanged.
 *
 * <p>Cases that other tests already pin down are not repeated; they are listed per class here:
 * <ul>
 *   <li>{@link Region}: {@code RegionTest} (reservation sizes and limits, claim sizes, alignments
 *       and exhaustion, commit/decommit ranges and the commit limit, access after close, closing
 *       twice, the global region, byte counts and the size property).</li>
 *   <li>{@link Words}: {@code WordsTest} (misaligned offsets for every helper but lpNoAlignCheck and
 *       spNoAlignCheck, which check the bounds only; offsets outside the region for lp, sp, lv, cas,
 *       xadd, xchg and those two; a word straddling the end).</li>
 *   <li>{@link Layouts}: {@code LayoutsTest} (padding multiples, unknown fields).</li>
 *   <li>{@link Participants}: {@code ParticipantsTest} (a close check that refuses, running out of
 *       ids, a bad capacity property).</li>
 *   <li>{@link PerThreadSlots}: {@code PerThreadSlotsTest} (ids outside the capacity, bases that are
 *       not positive multiples of 128).</li>
 * </ul>
 */
class CoreMisuseCatalogueTest {

    private static final long PAGE = Native.pageSize();

    @Nested
    class RegionMisuse {

        @Test
        void reservationsOfBadSizesNameTheRule() {
            rejects(IllegalArgumentException.class, () -> Region.reserve(PAGE, PAGE), "at least two pages", "was " + PAGE);
            rejects(IllegalArgumentException.class, () -> Region.reserve(-1, PAGE), "at least two pages", "was -1");
            rejects(IllegalArgumentException.class, () -> Region.reserve(4 * PAGE, 0), "commit limit", "positive");
            rejects(IllegalArgumentException.class, () -> Region.reserve(Long.MAX_VALUE, PAGE), "overflows");
        }

        @Test
        void badClaimsNameTheRuleAndClaimNothing() {
            try (Region r = Region.reserve(16 * PAGE, 4 * PAGE)) {
                final long claimed = r.claimedBytes();
                rejects(IllegalArgumentException.class, () -> r.claim(0, 8), "claim size", "positive", "was 0");
                rejects(IllegalArgumentException.class, () -> r.claim(Long.MIN_VALUE, 8), "claim size", "positive");
                for (final long alignment : new long[] {0, -8, 3, 24, Long.MIN_VALUE}) {
                    rejects(IllegalArgumentException.class, () -> r.claim(8, alignment), "power of two",
                            Long.toString(alignment));
                }
                rejects(OffHeapOutOfMemoryError.class, () -> r.claim(Long.MAX_VALUE, 8), "exhausted", Region.SIZE_PROPERTY);
                rejects(OffHeapOutOfMemoryError.class, () -> r.claim(8, 1L << 62), "exhausted");
                assertEquals(claimed, r.claimedBytes(), "a refused claim moved the claim pointer");
                assertEquals(claimed, r.claim(8, 8), "the region claims normally afterwards");
            }
        }

        @Test
        void badCommitAndDecommitRangesNameTheRuleAndChargeNothing() {
            try (Region r = Region.reserve(16 * PAGE, 4 * PAGE)) {
                final long at = r.claim(4 * PAGE, PAGE);
                for (final long[] range : new long[][] {{at + 8, PAGE}, {at, PAGE + 8}, {at, 0}, {at, -PAGE}}) {
                    rejects(IllegalArgumentException.class, () -> r.commit(range[0], range[1]), "commit", "whole pages");
                    rejects(IllegalArgumentException.class, () -> r.decommit(range[0], range[1]), "decommit", "whole pages");
                }
                for (final long[] range : new long[][] {{0, PAGE}, {at + 4 * PAGE, PAGE}, {-PAGE, PAGE},
                        {at, Long.MAX_VALUE & -PAGE}, {Long.MAX_VALUE & -PAGE, PAGE}}) {
                    rejects(IllegalArgumentException.class, () -> r.commit(range[0], range[1]), "outside the claimed part");
                    rejects(IllegalArgumentException.class, () -> r.decommit(range[0], range[1]), "outside the claimed part");
                }
                assertEquals(0, r.committedBytes(), "a refused range was charged");
                r.commit(at, 4 * PAGE);
                rejects(OffHeapOutOfMemoryError.class, () -> r.commit(r.claim(PAGE, PAGE), PAGE), "commit limit",
                        Region.COMMIT_LIMIT_PROPERTY);
                assertEquals(4 * PAGE, r.committedBytes(), "a refused commit was charged");
                r.decommit(at, 4 * PAGE);
                assertEquals(0, r.committedBytes());
            }
        }

        @Test
        void decommittingMoreThanIsCommittedIsRefusedBeforeAnyPageIsReturned() {
            try (Region r = Region.reserve(16 * PAGE, 4 * PAGE)) {
                final long at = r.claim(2 * PAGE, PAGE);
                r.commit(at, PAGE);
                r.segment().set(ValueLayout.JAVA_LONG, at, 42L);
                rejects(IllegalStateException.class, () -> r.decommit(at, 2 * PAGE), "committed", "decommit");
                assertEquals(PAGE, r.committedBytes(), "the refused decommit released a charge");
                assertEquals(42L, r.segment().get(ValueLayout.JAVA_LONG, at), "the refused decommit returned a page");
                r.decommit(at, PAGE);
                rejects(IllegalStateException.class, () -> r.decommit(at, PAGE), "committed", "decommit");
                assertEquals(0, r.committedBytes(), "a second decommit of the same range drove the count negative");
            }
        }

        @Test
        void aClosedRegionRefusesEveryOperationButStillDescribesItself() {
            final Region r = Region.reserve(4 * PAGE, PAGE);
            final long at = r.claim(PAGE, PAGE);
            r.close();
            final List<Executable> calls = List.of(() -> r.claim(8, 8), () -> r.commit(at, PAGE),
                    () -> r.decommit(at, PAGE), r::claimedBytes, r::committedBytes, r::close);
            for (final Executable call : calls) {
                rejects(IllegalStateException.class, call, "closed");
            }
            assertTrue(r.toString().contains("closed"), r.toString());
            assertEquals(4 * PAGE, r.size());
        }

        @Test
        void theGlobalRegionCannotBeClosedAndStaysUsable() {
            rejects(IllegalStateException.class, Region.global()::close, "global region");
            final long at = Region.global().claim(8, 8);
            Words.sp(at, 7L);
            assertEquals(7L, Words.lp(at));
        }

        @Test
        void badByteCountsNameTheText() {
            rejects(NullPointerException.class, () -> Region.parseBytes(null), "text");
            for (final String bad : new String[] {"", " ", "abc", "-1", "1.5g", "12q", "k", "99999999999999999999",
                    "9999999999999t"}) {
                rejects(IllegalArgumentException.class, () -> Region.parseBytes(bad));
            }
            rejects(IllegalArgumentException.class, () -> Region.parseBytes("-1"), "out of range", "-1");
            rejects(IllegalArgumentException.class, () -> Region.parseBytes("9999999999999t"), "out of range");
            rejects(IllegalArgumentException.class, () -> Region.parseBytes(""), "empty");
        }
    }

    @Nested
    class WordsMisuse {

        @Test
        void everyHelperRefusesOffsetsOutsideTheRegionAndWritesNothing() {
            final long sentinel = Region.global().claim(8, 8);
            Words.sp(sentinel, 0x5EL);
            final long end = Words.SEGMENT.byteSize();
            for (final long bad : new long[] {end, end + 8, -8, Long.MIN_VALUE, Long.MAX_VALUE & -8}) {
                final List<Executable> calls = List.of(() -> Words.lp(bad), () -> Words.sp(bad, 1),
                        () -> Words.opaqueLoad(bad), () -> Words.opaqueStore(bad, 1), () -> Words.la(bad),
                        () -> Words.sr(bad, 1), () -> Words.lv(bad), () -> Words.sv(bad, 1),
                        () -> Words.cas(bad, 0, 1), () -> Words.casWeak(bad, 0, 1), () -> Words.cae(bad, 0, 1),
                        () -> Words.xadd(bad, 1), () -> Words.xchg(bad, 1));
                for (final Executable call : calls) {
                    rejects(IndexOutOfBoundsException.class, call, "out of bound", Long.toString(bad));
                }
            }
            assertEquals(0x5EL, Words.lp(sentinel));
        }

        @Test
        void misalignedOffsetsNameTheAlignment() {
            final long at = Region.global().claim(16, 8);
            rejects(IllegalArgumentException.class, () -> Words.lp(at + 4), "alignment", Long.toString(at + 4));
            rejects(IllegalArgumentException.class, () -> Words.cas(at + 1, 0, 1), "alignment");
            assertEquals(0L, Words.lp(at));
        }
    }

    @Nested
    class LayoutsMisuse {

        @Test
        void badPaddingMultiplesNameTheRule() {
            for (final long bad : new long[] {0, -128, 96, Long.MIN_VALUE}) {
                rejects(IllegalArgumentException.class, () -> Layouts.padded("x", bad, ValueLayout.JAVA_LONG),
                        "power of two", Long.toString(bad));
            }
        }

        @Test
        void nullsAreRejected() {
            assertThrows(NullPointerException.class, () -> Layouts.padded(null, 8, ValueLayout.JAVA_LONG));
            assertThrows(NullPointerException.class, () -> Layouts.padded("x", 8, (MemoryLayout) null));
            assertThrows(NullPointerException.class, () -> Layouts.padded("x", 8, (MemoryLayout[]) null));
            assertThrows(NullPointerException.class, () -> Layouts.offsetOf(null, "x"));
        }

        @Test
        void anUnknownFieldIsNamed() {
            final MemoryLayout layout = Layouts.padded("s", 16, ValueLayout.JAVA_LONG.withName("a"));
            rejects(IllegalArgumentException.class, () -> Layouts.offsetOf(layout, "missing"), "missing");
        }
    }

    @Nested
    class ParticipantsMisuse {

        @Test
        void aNullHookOrCheckIsRejectedAndReleasesStillRunTheOthers() throws Exception {
            rejects(NullPointerException.class, () -> Participants.onRelease(null), "hook");
            rejects(NullPointerException.class, () -> Participants.onClose(null), "check");
            final List<Integer> released = new CopyOnWriteArrayList<>();
            final IntConsumer hook = released::add;
            try (AutoCloseable h = Participants.onRelease(hook)) {
                final int[] id = new int[1];
                final Thread t = new Thread(() -> {
                    id[0] = Participants.current();
                    Participants.close();
                });
                t.start();
                t.join();
                assertTrue(released.contains(id[0]), "the release hooks did not run after a refused null hook");
            }
        }

        @Test
        void idsOutsideTheTableAreRefused() {
            for (final int bad : new int[] {-1, Participants.CAPACITY, Integer.MAX_VALUE, Integer.MIN_VALUE}) {
                rejects(IndexOutOfBoundsException.class, () -> Participants.isHeld(bad), Integer.toString(bad));
            }
        }
    }

    @Nested
    class PerThreadSlotsMisuse {

        private final MemoryLayout count = ValueLayout.JAVA_LONG.withName("count");

        @Test
        void aSlotWithoutFieldsIsRefusedBeforeAnythingIsClaimed() {
            final long claimed = Region.global().claimedBytes();
            rejects(IllegalArgumentException.class, () -> new PerThreadSlots(128), "at least one field");
            rejects(IllegalArgumentException.class, PerThreadSlots::bytesFor, "at least one field");
            rejects(IllegalArgumentException.class, PerThreadSlots::claimPermanent, "at least one field");
            assertEquals(claimed, Region.global().claimedBytes(), "a refused table claimed space");
        }

        @Test
        void nullFieldsAreRefused() {
            assertThrows(NullPointerException.class, () -> new PerThreadSlots(128, (MemoryLayout[]) null));
            assertThrows(NullPointerException.class, () -> new PerThreadSlots(128, (MemoryLayout) null));
            assertThrows(NullPointerException.class, () -> PerThreadSlots.bytesFor((MemoryLayout) null));
        }

        @Test
        void aBaseThatIsNotAPositiveMultipleOf128IsNamed() {
            for (final long bad : new long[] {0, -128, 64, 129}) {
                rejects(IllegalArgumentException.class, () -> new PerThreadSlots(bad, count), "multiple of 128",
                        Long.toString(bad));
            }
        }

        @Test
        void aTableThatDoesNotFitInTheRegionIsRefused() {
            final long end = Region.global().size();
            for (final long bad : new long[] {end, end - 128, Long.MAX_VALUE & -128}) {
                rejects(IllegalArgumentException.class, () -> new PerThreadSlots(bad, count), "region");
            }
        }

        @Test
        void idsAndFieldOffsetsOutsideTheSlotAreRefused() {
            final PerThreadSlots slots = new PerThreadSlots(128, count);
            for (final int bad : new int[] {-1, Participants.CAPACITY, Integer.MIN_VALUE}) {
                rejects(IndexOutOfBoundsException.class, () -> slots.slot(bad), "out of bounds", Integer.toString(bad));
            }
            for (final long bad : new long[] {-8, slots.stride(), slots.stride() + 8, Long.MIN_VALUE}) {
                rejects(IndexOutOfBoundsException.class, () -> slots.field(0, bad), "out of bounds", Long.toString(bad));
            }
            assertEquals(slots.slot(1) + 8, slots.field(1, 8));
        }
    }

    @Nested
    class StripedCounterMisuse {

        @Test
        void anyIdCountsOnSomeStripeSoNoIdIsBadInput() {
            final StripedCounter c = new StripedCounter();
            for (final int id : new int[] {-1, Integer.MIN_VALUE, Integer.MAX_VALUE, Participants.CAPACITY}) {
                c.add(id, 5);
            }
            c.add(-20);
            assertEquals(0, c.sum());
        }
    }
}
