package dev.limbo.allocator;

import static dev.limbo.allocator.TestSupport.assertAllReturned;
import static dev.limbo.allocator.TestSupport.assertPattern;
import static dev.limbo.allocator.TestSupport.inFreshThread;
import static dev.limbo.allocator.TestSupport.writePattern;
import static dev.limbo.core.testing.Misuse.rejects;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.internal.PageMap;
import dev.limbo.core.OffHeapOutOfMemoryError;
import dev.limbo.core.Participants;
import dev.limbo.core.Region;
import dev.limbo.core.Words;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The misuse catalogue of {@code dev.limbo.allocator}: every public method of {@link LimboAllocator},
 * its {@link LimboAllocator.Builder builder}, its {@link ThreadCache context} and its segment
 * allocator view, against every kind of bad input, in unchecked and in checked mode. Each call must
 * throw the documented exception with a message that names the problem, and leave the allocator
 * as it was: the same bytes in use, and a clean allocate/free cycle afterwards.
 *
 * <p>Cases that other tests already pin down are not repeated: {@code LimboAllocatorBadInputTest}
 * (checked mode's double frees, frees of blocks never allocated, the checked-mode property, batches
 * with duplicates or interior pointers, bad segment alignments and sizes),
 * {@code LimboAllocatorFreeBatchTest} (every kind of bad batch entry frees nothing),
 * {@code LimboAllocatorDoubleFreeTest} (what unchecked mode lets through: double frees and interior
 * pointers, which must not corrupt metadata), {@code LimboAllocatorSingleThreadTest} (a context on
 * a virtual thread) and {@code LimboAllocatorExhaustionTest} (exhausting the region and the commit
 * limit).
 */
class LimboAllocatorMisuseCatalogueTest {

    /** The allocator allocates, keeps and frees a small and a large block, and nothing else changed. */
    private static void intact(final LimboAllocator a, final long inUse) {
        assertEquals(inUse, a.stats().bytesInUse(), "a refused call changed the bytes in use");
        final long small = a.allocate(100);
        final long large = a.allocate(100_000);
        writePattern(small, 100);
        writePattern(large, 100_000);
        assertPattern(small, 100);
        assertPattern(large, 100_000);
        a.free(small);
        a.free(large);
        assertEquals(inUse, a.stats().bytesInUse());
    }

    private static LimboAllocator allocator(final boolean checked) {
        return LimboAllocator.builder().checked(checked).build();
    }

    // ---------------------------------------------------------------- builder

    @Test
    void theBuilderRefusesANullPolicyAndANonPositiveCacheSizeAndStaysUsable() {
        final LimboAllocator.Builder b = LimboAllocator.builder().flushPolicy(FlushPolicy.PARTIAL_FLUSH);
        rejects(NullPointerException.class, () -> b.flushPolicy(null), "flush policy");
        for (final long bad : new long[] {0, -1, Long.MIN_VALUE}) {
            rejects(IllegalArgumentException.class, () -> b.cacheBytesPerClass(bad), "cache size", "positive",
                    Long.toString(bad));
        }
        final LimboAllocator a = b.build();
        assertTrue(a.describe().contains("PARTIAL_FLUSH"), a.describe());
        intact(a, 0);
        assertAllReturned(a);
    }

    // ---------------------------------------------------------------- sizes

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void everyWayToAllocateRefusesANonPositiveSize(final boolean checked) {
        final LimboAllocator a = allocator(checked);
        final SegmentAllocator segments = a.asSegmentAllocator();
        final long held = a.allocate(64);
        final long inUse = a.stats().bytesInUse();
        for (final long bad : new long[] {0, -1, Long.MIN_VALUE}) {
            final List<Executable> calls = List.of(() -> a.allocate(bad), () -> a.allocateZeroed(bad),
                    () -> a.context().allocate(bad), () -> a.reallocate(0, bad), () -> a.reallocate(held, bad));
            for (final Executable call : calls) {
                rejects(IllegalArgumentException.class, call, "positive", Long.toString(bad));
            }
            if (bad < 0) {
                rejects(IllegalArgumentException.class, () -> segments.allocate(bad, 8), "negative", Long.toString(bad));
            }
        }
        intact(a, inUse);
        a.free(held);
        assertAllReturned(a);
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void everyWayToAllocateRefusesAnImpossibleSizeNamingTheRegionSizeProperty(final boolean checked) {
        final LimboAllocator a = allocator(checked);
        final long held = a.allocate(64);
        Words.sp(held, 42L);
        final long inUse = a.stats().bytesInUse();
        for (final long huge : new long[] {Long.MAX_VALUE, Region.global().size(), Region.global().size() - 1}) {
            final List<Executable> calls = List.of(() -> a.allocate(huge), () -> a.allocateZeroed(huge),
                    () -> a.context().allocate(huge), () -> a.reallocate(held, huge),
                    () -> a.asSegmentAllocator().allocate(huge, 8));
            for (final Executable call : calls) {
                rejects(OffHeapOutOfMemoryError.class, call, Region.SIZE_PROPERTY);
            }
        }
        assertEquals(42L, Words.lp(held), "a refused reallocate moved or freed the block");
        intact(a, inUse);
        a.free(held);
        assertAllReturned(a);
    }

    @Test
    void theSegmentAllocatorRefusesEveryBadAlignmentBeforeAllocating() {
        final LimboAllocator a = allocator(false);
        final SegmentAllocator segments = a.asSegmentAllocator();
        for (final long bad : new long[] {0, -8, 3, 24, Long.MIN_VALUE, PageMap.PAGE * 2}) {
            rejects(IllegalArgumentException.class, () -> segments.allocate(8, bad), "alignment", Long.toString(bad));
        }
        intact(a, 0);
        assertAllReturned(a);
    }

    // ---------------------------------------------------------------- pointers

    /**
     * Every way to hand the allocator a pointer: free, usableSize, reallocate (except of 0, which
     * allocates), a context's free, a batch of one.
     */
    private static List<LongConsumer> pointerTakers(final LimboAllocator a, final long ptr) {
        final List<LongConsumer> takers = new ArrayList<>(List.of(a::free, a::usableSize, p -> a.context().free(p),
                p -> a.freeBatch(new long[] {p}, 1)));
        if (ptr != 0) {
            takers.add(p -> a.reallocate(p, 1 << 20));
        }
        return takers;
    }

    private static void allRefuse(final LimboAllocator a, final long bad, final Class<? extends Throwable> type,
                                  final String... words) {
        final long inUse = a.stats().bytesInUse();
        for (final LongConsumer taker : pointerTakers(a, bad)) {
            rejects(type, () -> taker.accept(bad), words);
        }
        intact(a, inUse);
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void pointersThatCannotBeBlocksAreRefusedEverywhere(final boolean checked) {
        final LimboAllocator a = allocator(checked);
        final long small = a.allocate(48);
        final long large = a.allocate(200_000);
        allRefuse(a, 0, IllegalArgumentException.class, "null");
        for (final long delta : new long[] {1, 3, 4, 7}) {
            allRefuse(a, small + delta, IllegalArgumentException.class, "misaligned");
        }
        for (final long outside : new long[] {-8, Region.global().size(), Long.MAX_VALUE & -8, Long.MIN_VALUE}) {
            allRefuse(a, outside, IllegalArgumentException.class, "outside the off-heap region");
        }
        allRefuse(a, large + 4096, IllegalArgumentException.class, "interior");
        allRefuse(a, large + PageMap.PAGE, IllegalArgumentException.class, "interior");
        // Past the last block of the superblock: no block starts or ends there.
        final long past = (small & -PageMap.PAGE) + PageMap.PAGE - 8;
        allRefuse(a, past, IllegalArgumentException.class, "interior");
        allRefuse(a, Region.global().size() - PageMap.PAGE, IllegalStateException.class, "not allocated");
        a.free(small);
        a.free(large);
        assertAllReturned(a);
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void anotherAllocatorsBlocksAreRefusedNamingTheOwner(final boolean checked) {
        final LimboAllocator a = allocator(checked);
        final LimboAllocator other = LimboAllocator.create();
        final long small = other.allocate(48);
        final long large = other.allocate(200_000);
        allRefuse(a, small, IllegalArgumentException.class, "belongs to allocator #" + other.id, "#" + a.id);
        allRefuse(a, large, IllegalArgumentException.class, "belongs to allocator #" + other.id);
        other.free(small);
        other.free(large);
        assertAllReturned(other);
        assertAllReturned(a);
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void stalePointersWhosePagesWereReleasedAreRefusedEverywhere(final boolean checked) {
        final LimboAllocator a = allocator(checked);
        final long small = a.allocate(48);
        final long large = a.allocate(200_000);
        a.free(small);
        a.free(large);
        a.trim(); // the small block's superblock goes back to the page allocator too
        allRefuse(a, small, IllegalStateException.class, "not allocated");
        allRefuse(a, large, IllegalStateException.class, "not allocated");
        assertAllReturned(a);
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aBlockFreedTwiceInARowIsRefused(final boolean checked) {
        final LimboAllocator a = allocator(checked);
        final long small = a.allocate(48);
        final long large = a.allocate(200_000);
        a.free(small);
        a.free(large);
        final long inUse = a.stats().bytesInUse();
        rejects(IllegalStateException.class, () -> a.free(small), "double free", checked ? "not allocated" : "last block");
        rejects(IllegalStateException.class, () -> a.context().free(small), "double free");
        rejects(IllegalStateException.class, () -> a.free(large), "not allocated");
        rejects(IllegalStateException.class, () -> a.freeBatch(new long[] {large}, 1), "not allocated");
        intact(a, inUse);
        assertAllReturned(a);
    }

    @Test
    void inCheckedModeInteriorPointersAndFreeBlocksAreRefusedEverywhere() {
        final LimboAllocator a = allocator(true);
        final long small = a.allocate(48);
        final long neighbour = a.allocate(48);
        for (final long delta : new long[] {8, 16, 40}) {
            allRefuse(a, small + delta, IllegalArgumentException.class, "interior", "48-byte block");
        }
        a.free(neighbour);
        allRefuse(a, neighbour, IllegalStateException.class, "not allocated");
        a.free(small);
        assertAllReturned(a);
    }

    // ---------------------------------------------------------------- batches and segments

    @Test
    void aBatchRefusesANullArrayAndALengthOutsideIt() {
        final LimboAllocator a = allocator(false);
        final long p = a.allocate(32);
        final long[] batch = {p};
        assertThrows(NullPointerException.class, () -> a.freeBatch(null, 0));
        for (final int bad : new int[] {-1, 2, Integer.MIN_VALUE}) {
            rejects(IllegalArgumentException.class, () -> a.freeBatch(batch, bad), "out of range", Integer.toString(bad));
        }
        intact(a, 32);
        a.freeBatch(batch, 1);
        assertAllReturned(a);
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void onlySegmentsOfTheRegionAreFreedAsSegments(final boolean checked) {
        final LimboAllocator a = allocator(checked);
        final MemorySegment mine = a.asSegmentAllocator().allocate(64, 8);
        final long inUse = a.stats().bytesInUse();
        rejects(NullPointerException.class, () -> a.free((MemorySegment) null), "segment");
        try (Arena arena = Arena.ofConfined()) {
            final List<MemorySegment> foreign = List.of(MemorySegment.ofArray(new long[4]), arena.allocate(64),
                    MemorySegment.NULL, MemorySegment.ofAddress(1 << 20));
            for (final MemorySegment s : foreign) {
                rejects(IllegalArgumentException.class, () -> a.free(s), "not a segment of the off-heap region");
            }
        }
        rejects(IllegalArgumentException.class, () -> a.free(mine.asSlice(3)), "misaligned");
        if (checked) {
            rejects(IllegalArgumentException.class, () -> a.free(mine.asSlice(8)), "interior");
        }
        intact(a, inUse);
        a.free(mine);
        assertAllReturned(a);
    }

    // ---------------------------------------------------------------- contexts

    @Test
    void aContextRefusesEveryThreadButItsOwnAndStaysItsOwnersCache() throws Exception {
        final LimboAllocator a = allocator(false);
        final ThreadCache context = a.context();
        final long p = context.allocate(64);
        final long inUse = a.stats().bytesInUse();
        final List<Throwable> refused = inFreshThread(() -> {
            final List<Throwable> got = new ArrayList<>();
            got.add(assertThrows(IllegalStateException.class, () -> context.allocate(64)));
            got.add(assertThrows(IllegalStateException.class, () -> context.free(p)));
            return got;
        });
        for (final Throwable e : refused) {
            assertTrue(e.getMessage().contains("belongs to thread #" + Thread.currentThread().threadId()), e.getMessage());
        }
        assertEquals(inUse, a.stats().bytesInUse());
        context.free(p);
        intact(a, 0);
        assertAllReturned(a);
    }

    @Test
    void aContextIsRetiredWhenItsThreadClosesItsParticipantIdAndTheNextContextWorks() throws Exception {
        final LimboAllocator a = allocator(false);
        inFreshThread(() -> {
            final ThreadCache context = a.context();
            final long p = context.allocate(64);
            context.free(p);
            Participants.close(); // drains and retires the cache
            rejects(IllegalStateException.class, () -> context.allocate(64), "retired", "context()");
            rejects(IllegalStateException.class, () -> context.free(p), "retired");
            final ThreadCache next = a.context();
            next.free(next.allocate(64));
            return null;
        });
        assertAllReturned(a);
    }
}
