package dev.limbo.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class WordsTest {

    /** Eight fresh words, each in its own 128-byte slot. */
    private long base;

    @BeforeEach
    void claimWords() {
        base = Region.global().claim(8 * Layouts.PADDED, Layouts.PADDED);
    }

    private long word(final int i) {
        return base + i * Layouts.PADDED;
    }

    @Test
    void theSegmentIsTheGlobalRegionsSegment() {
        assertTrue(Words.SEGMENT == Region.global().segment());
        assertEquals(Region.global().size(), Words.SEGMENT.byteSize());
    }

    @Test
    void freshlyClaimedWordsReadAsZero() {
        for (int i = 0; i < 8; i++) {
            assertEquals(0L, Words.lp(word(i)));
        }
    }

    @Test
    void plainStoreThenPlainLoadRoundTrips() {
        Words.sp(word(0), 0x1122334455667788L);
        assertEquals(0x1122334455667788L, Words.lp(word(0)));
        assertEquals(0x1122334455667788L, Words.SEGMENT.get(ValueLayout.JAVA_LONG, word(0)));
        assertEquals(0L, Words.lp(word(1)), "a store must touch only its own word");
    }

    @Test
    void opaqueStoreThenOpaqueLoadRoundTrips() {
        Words.opaqueStore(word(1), -7L);
        assertEquals(-7L, Words.opaqueLoad(word(1)));
        assertEquals(-7L, Words.lp(word(1)));
    }

    @Test
    void releaseStoreThenAcquireLoadRoundTrips() {
        Words.sr(word(2), Long.MIN_VALUE);
        assertEquals(Long.MIN_VALUE, Words.la(word(2)));
    }

    @Test
    void volatileStoreThenVolatileLoadRoundTrips() {
        Words.sv(word(3), Long.MAX_VALUE);
        assertEquals(Long.MAX_VALUE, Words.lv(word(3)));
    }

    @Test
    void casSucceedsWhenTheWordHoldsTheExpectedValue() {
        Words.sp(word(0), 10L);
        assertTrue(Words.cas(word(0), 10L, 11L));
        assertEquals(11L, Words.lv(word(0)));
    }

    @Test
    void casFailsAndLeavesTheWordWhenItHoldsAnotherValue() {
        Words.sp(word(0), 10L);
        assertFalse(Words.cas(word(0), 9L, 12L));
        assertEquals(10L, Words.lv(word(0)));
    }

    @Test
    void casWeakSucceedsInARetryLoop() {
        Words.sp(word(4), 100L);
        int attempts = 0;
        while (!Words.casWeak(word(4), 100L, 200L)) {
            attempts++;
            assertTrue(attempts < 1_000_000, "weak CAS failed a million times in a row");
        }
        assertEquals(200L, Words.lv(word(4)));
        assertFalse(Words.casWeak(word(4), 100L, 300L), "weak CAS must never succeed on a wrong expected value");
        assertEquals(200L, Words.lv(word(4)));
    }

    @Test
    void caeReturnsTheWitnessOnSuccessAndOnFailure() {
        Words.sp(word(5), 1L);
        assertEquals(1L, Words.cae(word(5), 1L, 2L));
        assertEquals(2L, Words.lv(word(5)));
        assertEquals(2L, Words.cae(word(5), 1L, 3L));
        assertEquals(2L, Words.lv(word(5)));
    }

    @Test
    void xaddReturnsThePreviousValueAndAdds() {
        Words.sp(word(6), 40L);
        assertEquals(40L, Words.xadd(word(6), 2L));
        assertEquals(42L, Words.xadd(word(6), -50L));
        assertEquals(-8L, Words.lv(word(6)));
    }

    @Test
    void xchgReturnsThePreviousValueAndStores() {
        Words.sp(word(7), 5L);
        assertEquals(5L, Words.xchg(word(7), 6L));
        assertEquals(6L, Words.xchg(word(7), 7L));
        assertEquals(7L, Words.lv(word(7)));
    }

    @Test
    void allFiveFencesAreCallableBetweenAccesses() {
        Words.sp(word(0), 1L);
        Words.fullFence();
        Words.sp(word(1), 2L);
        Words.releaseFence();
        Words.sp(word(2), 3L);
        Words.storeStoreFence();
        assertEquals(1L, Words.lp(word(0)));
        Words.acquireFence();
        assertEquals(2L, Words.lp(word(1)));
        Words.loadLoadFence();
        assertEquals(3L, Words.lp(word(2)));
    }

    @Test
    void theLastWordOfTheRegionIsAccessible() {
        // Address space past the bump pointer is not handed out, but it is mapped: accesses are in bounds.
        final long last = Words.SEGMENT.byteSize() - 8;
        assertEquals(0L, Words.lp(last));
    }

    @Test
    void offsetsOutsideTheRegionThrowIndexOutOfBounds() {
        final long end = Words.SEGMENT.byteSize();
        for (final long bad : new long[] {end, end + 8, -8, Long.MIN_VALUE & -8, Long.MAX_VALUE & -8}) {
            assertThrows(IndexOutOfBoundsException.class, () -> Words.lp(bad), "lp " + bad);
            assertThrows(IndexOutOfBoundsException.class, () -> Words.sp(bad, 1L), "sp " + bad);
            assertThrows(IndexOutOfBoundsException.class, () -> Words.lv(bad), "lv " + bad);
            assertThrows(IndexOutOfBoundsException.class, () -> Words.cas(bad, 0L, 1L), "cas " + bad);
            assertThrows(IndexOutOfBoundsException.class, () -> Words.xadd(bad, 1L), "xadd " + bad);
            assertThrows(IndexOutOfBoundsException.class, () -> Words.xchg(bad, 1L), "xchg " + bad);
            assertThrows(IndexOutOfBoundsException.class, () -> Words.lpNoAlignCheck(bad), "lpNoAlignCheck " + bad);
            assertThrows(IndexOutOfBoundsException.class, () -> Words.spNoAlignCheck(bad, 1L), "spNoAlignCheck " + bad);
        }
        final long straddling = Words.SEGMENT.byteSize() - 4;
        assertThrows(IndexOutOfBoundsException.class, () -> Words.lpNoAlignCheck(straddling), "lpNoAlignCheck at end - 4");
        assertThrows(IndexOutOfBoundsException.class, () -> Words.spNoAlignCheck(straddling, 1L), "spNoAlignCheck at end - 4");
    }

    @Test
    void theNoAlignCheckHelpersAccessTheWordAtAnyOffsetInsideTheRegion() {
        Words.spNoAlignCheck(word(0), 0x1122334455667788L);
        assertEquals(0x1122334455667788L, Words.lp(word(0)));
        assertEquals(0x1122334455667788L, Words.lpNoAlignCheck(word(0)));
        Words.sp(word(1) + 8, 0L);
        Words.spNoAlignCheck(word(1) + 4, -1L); // straddles the word at word(1) and the one after it
        assertEquals(-1L, Words.lpNoAlignCheck(word(1) + 4));
        assertEquals(32, Long.bitCount(Words.lp(word(1))), "half of the first word is written");
        assertEquals(32, Long.bitCount(Words.lp(word(1) + 8)), "half of the second word is written");
        assertEquals(0x1122334455667788L, Words.lp(word(0)), "a store at word 1 + 4 must not touch word 0");
    }

    @Test
    void aWordStraddlingTheEndOfTheRegionIsOutOfBounds() {
        // end - 4 is 4-aligned only, but the bounds check must still refuse it rather than read past the end.
        final long straddling = Words.SEGMENT.byteSize() - 4;
        final Throwable t = assertThrows(RuntimeException.class, () -> Words.lp(straddling));
        assertTrue(t instanceof IndexOutOfBoundsException || t instanceof IllegalArgumentException, t.toString());
    }

    @Test
    void misalignedOffsetsThrowIllegalArgument() {
        for (final long delta : new long[] {1, 3, 4, 7}) {
            final long bad = base + delta;
            assertThrows(IllegalArgumentException.class, () -> Words.lp(bad), "lp +" + delta);
            assertThrows(IllegalArgumentException.class, () -> Words.sp(bad, 1L), "sp +" + delta);
            assertThrows(IllegalArgumentException.class, () -> Words.opaqueLoad(bad), "opaqueLoad +" + delta);
            assertThrows(IllegalArgumentException.class, () -> Words.opaqueStore(bad, 1L), "opaqueStore +" + delta);
            assertThrows(IllegalArgumentException.class, () -> Words.la(bad), "la +" + delta);
            assertThrows(IllegalArgumentException.class, () -> Words.sr(bad, 1L), "sr +" + delta);
            assertThrows(IllegalArgumentException.class, () -> Words.lv(bad), "lv +" + delta);
            assertThrows(IllegalArgumentException.class, () -> Words.sv(bad, 1L), "sv +" + delta);
            assertThrows(IllegalArgumentException.class, () -> Words.cas(bad, 0L, 1L), "cas +" + delta);
            assertThrows(IllegalArgumentException.class, () -> Words.casWeak(bad, 0L, 1L), "casWeak +" + delta);
            assertThrows(IllegalArgumentException.class, () -> Words.cae(bad, 0L, 1L), "cae +" + delta);
            assertThrows(IllegalArgumentException.class, () -> Words.xadd(bad, 1L), "xadd +" + delta);
            assertThrows(IllegalArgumentException.class, () -> Words.xchg(bad, 1L), "xchg +" + delta);
        }
        for (int i = 0; i < 8; i++) {
            assertEquals(0L, Words.lp(word(i)), "a refused misaligned store must not have written");
        }
    }

    @Test
    void concurrentXaddsAddUpExactly() throws Exception {
        final int threads = 4;
        final int perThread = 200_000;
        final long counter = word(0);
        final CyclicBarrier start = new CyclicBarrier(threads);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final Thread worker = new Thread(() -> {
                try {
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        Words.xadd(counter, 1L);
                    }
                } catch (final Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            worker.start();
            workers.add(worker);
        }
        for (final Thread worker : workers) {
            worker.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        assertEquals((long) threads * perThread, Words.lv(counter));
    }

    @Test
    void concurrentCasLoopsLoseNoUpdates() throws Exception {
        final int threads = 3;
        final int perThread = 100_000;
        final long counter = word(1);
        final CyclicBarrier start = new CyclicBarrier(threads);
        final List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final Thread worker = new Thread(() -> {
                try {
                    start.await();
                } catch (final Exception e) {
                    throw new IllegalStateException(e);
                }
                for (int i = 0; i < perThread; i++) {
                    long seen;
                    do {
                        seen = Words.lv(counter);
                    } while (!Words.casWeak(counter, seen, seen + 1));
                }
            });
            worker.start();
            workers.add(worker);
        }
        for (final Thread worker : workers) {
            worker.join();
        }
        assertEquals((long) threads * perThread, Words.lv(counter));
    }
}
