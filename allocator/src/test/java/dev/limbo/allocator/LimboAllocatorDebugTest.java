package dev.limbo.allocator;

import static dev.limbo.allocator.TestSupport.assertAllReturned;
import static dev.limbo.allocator.TestSupport.assertPattern;
import static dev.limbo.allocator.TestSupport.writePattern;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.core.Words;

import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Debug mode poisons freed blocks, quarantines them, and reports writes into them. */
class LimboAllocatorDebugTest {

    /** The quarantine's reach in the tests below, in 64-byte blocks. */
    private static final int QUARANTINE = 64;

    private static LimboAllocator debug(final FlushPolicy policy) {
        return LimboAllocator.builder().debug(true).quarantineBytes(QUARANTINE * 64).flushPolicy(policy).build();
    }

    private static long[] allocateAll(final LimboAllocator a, final int n, final long size) {
        final long[] ptrs = new long[n];
        for (int i = 0; i < n; i++) {
            ptrs[i] = a.allocate(size);
        }
        return ptrs;
    }

    private static void assertWriteAfterFree(final IllegalStateException e, final long victim) {
        assertTrue(e.getMessage().contains("write after free"), e.getMessage());
        assertTrue(e.getMessage().contains(String.format("0x%x", victim)), e.getMessage());
        assertTrue(e.getMessage().contains("at byte 16"), e.getMessage());
    }

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void aWriteIntoAQuarantinedBlockIsReportedWhenTheBlockLeavesQuarantine(final FlushPolicy policy) {
        final LimboAllocator a = debug(policy);
        final long victim = a.allocate(64);
        final long[] others = allocateAll(a, QUARANTINE + 1, 64);
        a.free(victim);
        Words.SEGMENT.set(ValueLayout.JAVA_BYTE, victim + 16, (byte) 1); // the bug under test
        for (int i = 0; i < QUARANTINE - 1; i++) {
            a.free(others[i]); // victim is still in quarantine
        }
        final IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> a.free(others[QUARANTINE - 1]));
        assertWriteAfterFree(e, victim);
        a.free(others[QUARANTINE]);
        // still usable
        final long p = a.allocate(64);
        a.free(p);
    }

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void aWriteIntoAQuarantinedBlockIsReportedWhenTrimDrainsTheQuarantine(final FlushPolicy policy) {
        final LimboAllocator a = debug(policy);
        final long victim = a.allocate(64);
        a.free(victim);
        Words.SEGMENT.set(ValueLayout.JAVA_LONG, victim + 16, 0L);
        assertWriteAfterFree(assertThrows(IllegalStateException.class, a::trim), victim);
    }

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void aWriteIntoAFreeBlockAfterItLeftQuarantineIsReportedWhenTheBlockIsReused(final FlushPolicy policy) {
        final LimboAllocator a = debug(policy);
        final long victim = a.allocate(64);
        final long[] others = allocateAll(a, QUARANTINE, 64);
        a.free(victim);
        for (final long p : others) {
            a.free(p); // the last one evicts the intact victim into the cache's free list
        }
        Words.SEGMENT.set(ValueLayout.JAVA_BYTE, victim + 16, (byte) 0x11);
        IllegalStateException e = null;
        for (int i = 0; i < 10_000 && e == null; i++) {
            try {
                a.allocate(64); // leaked on purpose: the test ends with the allocator in an error state
            } catch (final IllegalStateException thrown) {
                e = thrown;
            }
        }
        assertTrue(e != null, "the damaged block was reused without a report");
        assertWriteAfterFree(e, victim);
    }

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void correctUseNeverRaisesAFalseWriteAfterFree(final FlushPolicy policy) throws Exception {
        final LimboAllocator a = debug(policy);
        final Random rnd = new Random(7);
        final List<long[]> live = new ArrayList<>();
        assertDoesNotThrow(() -> {
            for (int round = 0; round < 30_000; round++) {
                if (!live.isEmpty() && rnd.nextBoolean()) {
                    final long[] b = live.remove(rnd.nextInt(live.size()));
                    assertPattern(b[0], b[1]);
                    a.free(b[0]);
                } else {
                    final long size = 1 + rnd.nextInt(rnd.nextInt(20) == 0 ? 20_000 : 600);
                    final long p = a.allocate(size);
                    writePattern(p, size);
                    live.add(new long[] {p, size});
                }
                if (round % 5000 == 0) {
                    a.trim();
                }
            }
            // blocks freed by another thread, while their superblocks are owned here
            final List<long[]> handed = new ArrayList<>(live);
            live.clear();
            TestSupport.inFreshThread(() -> {
                for (final long[] b : handed) {
                    assertPattern(b[0], b[1]);
                    a.free(b[0]);
                }
                return null;
            });
            for (int i = 0; i < 5000; i++) {
                final long p = a.allocate(1 + (i % 700));
                writePattern(p, 1 + (i % 700));
                a.free(p);
            }
        });
        assertAllReturned(a);
    }

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void blocksFreedInABatchAreNotReportedAsWrittenAfterFreeWhenReused(final FlushPolicy policy) {
        final LimboAllocator a = debug(policy);
        for (int round = 0; round < 3; round++) {
            final int n = 3000;
            final long[] ptrs = new long[n];
            for (int i = 0; i < n; i++) {
                ptrs[i] = a.allocate(8 + 8 * (i % 64));
                Words.SEGMENT.asSlice(ptrs[i], 8 + 8 * (i % 64)).fill((byte) 0x42); // ordinary use
            }
            a.freeBatch(ptrs, n);
            assertDoesNotThrow(() -> {
                final long[] again = allocateAll(a, n, 64);
                for (final long p : again) {
                    a.free(p);
                }
                for (int i = 0; i < n; i++) {
                    a.free(a.allocate(8 + 8 * (i % 64)));
                }
            }, "round " + round);
        }
        assertAllReturned(a);
        assertEquals(0, a.stats().bytesInUse());
    }
}
