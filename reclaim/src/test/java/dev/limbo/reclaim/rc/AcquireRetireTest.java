package dev.limbo.reclaim.rc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Participants;
import dev.limbo.core.Words;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link AcquireRetire}: an announced handle is never ejected, multi-retire ejects each retire once
 * (s - t copies while t acquires are active), random histories of acquire, reserve, release,
 * retire and eject match a naive multiset model, the garbage bound R + H holds while another thread
 * stalls with its announcements, and a concurrent announce-vs-retire stress never ejects a handle a
 * reader still holds.
 */
class AcquireRetireTest {

    private static final long H = 0x1000;
    private static final LimboAllocator ALLOCATOR = LimboAllocator.shared();

    private final List<Long> cells = new ArrayList<>();

    /** Zeroed off-heap words for handles, freed after the test. */
    private long cell(final long bytes) {
        final long c = ALLOCATOR.allocateZeroed(bytes);
        cells.add(c);
        return c;
    }

    /** A word holding {@code handle}. */
    private long cellHolding(final long handle) {
        final long c = cell(Long.BYTES);
        Words.sv(c, handle);
        return c;
    }

    @AfterEach
    void freeCells() {
        cells.forEach(ALLOCATOR::free);
    }

    /** Ejects until nothing more comes, sorted. */
    private static long[] ejectAll(final AcquireRetire.Local l) {
        final long[] out = new long[4];
        long[] all = new long[0];
        for (int n; (n = l.ejectNow(out)) > 0; ) {
            final int old = all.length;
            all = Arrays.copyOf(all, old + n);
            System.arraycopy(out, 0, all, old, n);
        }
        Arrays.sort(all);
        return all;
    }

    /** Threads that each acquire the handle in a cell into their own slot and hold it until let go. */
    private static final class Holders {

        private final CountDownLatch done = new CountDownLatch(1);
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final Thread[] threads;

        /** Starts one holder per slot in {@code slots} and returns once each has acquired. */
        Holders(final AcquireRetire ar, final long cell, final int... slots) throws InterruptedException {
            final CountDownLatch acquired = new CountDownLatch(slots.length);
            threads = new Thread[slots.length];
            for (int i = 0; i < slots.length; i++) {
                final int slot = slots[i];
                threads[i] = new Thread(() -> {
                    try {
                        final AcquireRetire.Local l = ar.local();
                        l.acquire(slot, cell);
                        acquired.countDown();
                        assertTrue(done.await(60, TimeUnit.SECONDS), "holder was never let go");
                        l.release(slot);
                    } catch (final Throwable e) {
                        failure.set(e);
                        acquired.countDown();
                    } finally {
                        Participants.close();
                    }
                });
                threads[i].start();
            }
            assertTrue(acquired.await(60, TimeUnit.SECONDS));
        }

        /** Lets the holders release and exit, and rethrows a holder's failure. */
        void letGo() throws InterruptedException {
            done.countDown();
            for (final Thread t : threads) {
                t.join();
            }
            if (failure.get() != null) {
                throw new AssertionError(failure.get());
            }
        }
    }

    @Test
    @Timeout(60)
    void announcedHandleIsNeverEjectedUntilReleased() throws Exception {
        try (AcquireRetire ar = new AcquireRetire(2)) {
            final long cell = cellHolding(H);
            final Holders holder = new Holders(ar, cell, 1);
            Words.sv(cell, 0);
            final AcquireRetire.Local l = ar.local();
            l.retire(H);
            l.retire(H + 8);
            assertArrayEquals(new long[] {H + 8}, ejectAll(l));
            assertEquals(1, l.delayed());
            holder.letGo();
            assertArrayEquals(new long[] {H}, ejectAll(l));
            assertEquals(0, l.delayed());
        }
    }

    @Test
    @Timeout(60)
    void multiRetireEjectsEachRetireOnceAndKeepsOnePerActiveAcquire() throws Exception {
        try (AcquireRetire ar = new AcquireRetire(2)) {
            final long cell = cellHolding(H);
            final Holders holders = new Holders(ar, cell, 0, 1);
            final AcquireRetire.Local l = ar.local();
            for (int i = 0; i < 5; i++) {
                l.retire(H);
            }
            // s = 5 retires, t = 2 active acquires: exactly 3 copies may go
            assertArrayEquals(new long[] {H, H, H}, ejectAll(l));
            assertEquals(2, l.delayed());
            holders.letGo();
            assertArrayEquals(new long[] {H, H}, ejectAll(l));
            assertEquals(0, l.delayed());
        }
    }

    @Test
    void ownAnnouncementsCountAndReleaseEndsThem() {
        try (AcquireRetire ar = new AcquireRetire(3)) {
            final long cell = cellHolding(H);
            final AcquireRetire.Local l = ar.local();
            assertEquals(H, l.acquire(0, cell));
            l.reserve(1, H);
            l.reserve(2, H + 8);
            l.retire(H);
            l.retire(H);
            l.retire(H);
            l.retire(H + 8);
            assertArrayEquals(new long[] {H}, ejectAll(l));
            l.acquire(2, cell); // the acquire of H + 8 in slot 2 ends
            assertArrayEquals(new long[] {H + 8}, ejectAll(l));
            l.release(0);
            l.release(1);
            assertArrayEquals(new long[] {H}, ejectAll(l)); // slot 2 still owns one retire of H
            l.release(2);
            assertArrayEquals(new long[] {H}, ejectAll(l));
            assertEquals(0, l.delayed());
        }
    }

    @Test
    void theSlowPathAnnouncesWhatItReturns() {
        try (AcquireRetire ar = new AcquireRetire(2, 0)) {
            final AcquireRetire.Local l = ar.local();
            assertEquals(H | 1, l.acquire(0, cellHolding(H | 1))); // marks kept, announced without them
            assertEquals(0, l.acquire(1, cellHolding(0)));
            l.retire(H);
            l.retire(H);
            assertArrayEquals(new long[] {H}, ejectAll(l)); // one retire held back by slot 0
            l.release(0);
            assertArrayEquals(new long[] {H}, ejectAll(l));
        }
        assertThrows(IllegalArgumentException.class, () -> new AcquireRetire(1, -1));
    }

    @Test
    void anAnnouncementHoldsBackTheLowestKindOfItsAddressFirst() {
        try (AcquireRetire ar = new AcquireRetire(2)) {
            final AcquireRetire.Local l = ar.local();
            l.reserve(0, H);
            l.retire(H | 1);
            l.retire(H);
            l.retire(H | 1);
            assertArrayEquals(new long[] {H | 1, H | 1}, ejectAll(l));
            l.release(0);
            assertArrayEquals(new long[] {H}, ejectAll(l));
        }
    }

    @Test
    void aDepartedThreadsRetiresAreAdoptedByTheNextScan() throws Exception {
        try (AcquireRetire ar = new AcquireRetire(1)) {
            final Thread t = new Thread(() -> {
                ar.local().retire(H);
                Participants.close();
            });
            t.start();
            t.join();
            assertArrayEquals(new long[] {H}, ejectAll(ar.local()));
        }
    }

    @Test
    void badInputIsRefused() {
        try (AcquireRetire ar = new AcquireRetire(2)) {
            final AcquireRetire.Local l = ar.local();
            assertThrows(IllegalArgumentException.class, () -> l.retire(0));
            assertThrows(IllegalArgumentException.class, () -> l.retire(1)); // a kind without an address
            assertThrows(IndexOutOfBoundsException.class, () -> l.release(2));
            assertThrows(IndexOutOfBoundsException.class, () -> l.reserve(-1, H));
        }
        assertThrows(IllegalArgumentException.class, () -> new AcquireRetire(0));
        assertThrows(IllegalArgumentException.class, () -> new AcquireRetire(17));
    }

    @Test
    @Timeout(60)
    void garbageBoundHoldsWhileAnAnnouncerStalls() throws Exception {
        final int k = 4;
        try (AcquireRetire ar = new AcquireRetire(k)) {
            final long words = cell((long) k * Long.BYTES);
            for (int s = 0; s < k; s++) {
                Words.sv(words + (long) s * Long.BYTES, H + 8L * s);
            }
            final CountDownLatch acquired = new CountDownLatch(1);
            final CountDownLatch done = new CountDownLatch(1);
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final Thread stalled = new Thread(() -> {
                try {
                    final AcquireRetire.Local l = ar.local();
                    for (int s = 0; s < k; s++) {
                        l.acquire(s, words + (long) s * Long.BYTES);
                    }
                    acquired.countDown();
                    assertTrue(done.await(60, TimeUnit.SECONDS), "stalled thread was never let go");
                } catch (final Throwable e) {
                    failure.set(e);
                    acquired.countDown();
                } finally {
                    Participants.close();
                }
            });
            stalled.start();
            assertTrue(acquired.await(60, TimeUnit.SECONDS));
            final AcquireRetire.Local l = ar.local();
            final long[] out = new long[1];
            long ejected = 0;
            final int retires = 100_000;
            for (int i = 0; i < retires; i++) {
                // every fourth retire names a stalled announcement; the rest are fresh handles
                l.retire(i % 4 == 0 ? H + 8L * (i / 4 % k) : H + 8L * (k + i));
                ejected += l.eject(out);
                final long bound = ar.garbageBound(Participants.highWater());
                assertTrue(l.delayed() <= bound, "delayed " + l.delayed() + " > bound " + bound + " at " + i);
            }
            assertEquals(retires, ejected + l.delayed());
            done.countDown();
            stalled.join();
            if (failure.get() != null) {
                throw new AssertionError(failure.get());
            }
            ejected += ejectAll(l).length;
            assertEquals(retires, ejected);
        }
    }

    /** {@code fastPathTries} = the default, or 0: every acquire takes the wait-free slow path (a copy that scans complete). */
    @ParameterizedTest(name = "fastPathTries {0}")
    @ValueSource(ints = {AcquireRetire.FAST_PATH_TRIES, 0})
    @Timeout(120)
    void concurrentAnnounceVersusRetireNeverEjectsAHeldHandle(final int fastPathTries) throws Exception {
        final int readers = 2;
        final int swaps = 200_000;
        final int handles = swaps + 2;
        // dead[h]: the handle h (an index, shifted into a word) was ejected; its reuse never happens
        final AtomicReferenceArray<Boolean> dead = new AtomicReferenceArray<>(handles);
        final AtomicLong bad = new AtomicLong();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        try (AcquireRetire ar = new AcquireRetire(1, fastPathTries)) {
            final long cell = cell(Long.BYTES);
            Words.sv(cell, 1L << 3);
            final AtomicLong writerDone = new AtomicLong();
            final Thread[] ts = new Thread[readers];
            for (int r = 0; r < readers; r++) {
                ts[r] = new Thread(() -> {
                    try {
                        final AcquireRetire.Local l = ar.local();
                        while (writerDone.get() == 0) {
                            final long h = l.acquire(0, cell);
                            if (dead.get((int) (h >>> 3)) != null) {
                                bad.incrementAndGet();
                            }
                            Thread.onSpinWait();
                            if (dead.get((int) (h >>> 3)) != null) {
                                bad.incrementAndGet();
                            }
                            l.release(0);
                        }
                    } catch (final Throwable e) {
                        failure.set(e);
                    } finally {
                        Participants.close();
                    }
                });
                ts[r].start();
            }
            final AcquireRetire.Local l = ar.local();
            final long[] out = new long[8];
            for (int i = 2; i < handles; i++) {
                final long old = Words.xchg(cell, (long) i << 3);
                l.retire(old);
                for (int n = l.eject(out), j = 0; j < n; j++) {
                    assertFalse(dead.getAndSet((int) (out[j] >>> 3), Boolean.TRUE) != null, "ejected twice");
                }
            }
            writerDone.set(1);
            for (final Thread t : ts) {
                t.join();
            }
            if (failure.get() != null) {
                throw new AssertionError(failure.get());
            }
            assertEquals(0, bad.get(), "a reader held a handle that was ejected");
            final int rest = ejectAll(l).length;
            assertEquals(0, l.delayed());
            int deadCount = 0;
            for (int i = 0; i < handles; i++) {
                deadCount += dead.get(i) != null ? 1 : 0;
            }
            assertEquals(swaps, deadCount + rest);
        }
    }

    @Test
    void randomHistoriesMatchTheMultisetSpecification() {
        // a naive model (digest §3.2, §7.4): after a full drain, each address v retired s times and
        // announced t times keeps exactly min(s, t) of its retires, the lowest kinds, and each eject
        // hands back a distinct earlier retire
        final int k = 3;
        final int addresses = 4;
        try (AcquireRetire ar = new AcquireRetire(k)) {
            final AcquireRetire.Local l = ar.local();
            final long cell = cell(Long.BYTES);
            final SplittableRandom random = new SplittableRandom(0x5EED);
            final long[] announced = new long[k];
            final List<Long> delayed = new ArrayList<>();
            for (int round = 0; round < 1_500; round++) {
                for (int op = random.nextInt(1, 8); op > 0; op--) {
                    final int slot = random.nextInt(k);
                    final long a = H + 8L * random.nextInt(addresses);
                    switch (random.nextInt(4)) {
                        case 0 -> {
                            final long word = a | random.nextInt(4); // marks are validated, not announced
                            Words.sv(cell, word);
                            assertEquals(word, l.acquire(slot, cell));
                            announced[slot] = a;
                        }
                        case 1 -> {
                            l.reserve(slot, a | random.nextInt(4));
                            announced[slot] = a;
                        }
                        case 2 -> {
                            l.release(slot);
                            announced[slot] = 0;
                        }
                        default -> {
                            final long h = a | random.nextInt(2);
                            l.retire(h);
                            delayed.add(h);
                        }
                    }
                }
                final long[] ejected = ejectAll(l);
                final int r = round;
                for (final long h : ejected) {
                    assertTrue(delayed.remove(h), () -> "round " + r + ": ejected a handle never retired (or twice): " + Long.toHexString(h));
                }
                for (int i = 0; i < addresses; i++) {
                    final long a = H + 8L * i;
                    int t = 0;
                    for (final long v : announced) {
                        t += v == a ? 1 : 0;
                    }
                    final long[] kept = delayed.stream().mapToLong(Long::longValue).filter(h -> (h & ~7L) == a).sorted().toArray();
                    final long[] gone = Arrays.stream(ejected).filter(h -> (h & ~7L) == a).toArray();
                    final int announcements = t;
                    assertEquals(Math.min(kept.length + gone.length, t), kept.length,
                            () -> "round " + r + ", address " + Long.toHexString(a) + ": kept " + Arrays.toString(kept)
                                    + ", ejected " + Arrays.toString(gone) + ", announced " + announcements + " times");
                    if (gone.length > 0 && kept.length > 0) {
                        assertTrue(kept[kept.length - 1] <= gone[0], () -> "round " + r + ": a higher kind was kept over a lower one");
                    }
                }
                assertEquals(delayed.size(), l.delayed());
            }
        }
    }

    private static void assertArrayEquals(final long[] expected, final long[] actual) {
        org.junit.jupiter.api.Assertions.assertArrayEquals(expected, actual, () -> Arrays.toString(actual));
    }
}
