package dev.limbo.reclaim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Words;
import dev.limbo.reclaim.internal.BlockBag;

import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Scheme-owned header words (SPI v2): a scheme that reserves words per record gets them
 * initialized on every path that hands a record out (a guard's allocation, fresh or recycled
 * through the pool, and the escape hatch), outside the structure's {@code recordBytes}, and the
 * record's identity checks still hold. The test scheme stamps a birth number in word 0 (as IBR and
 * HE stamp a birth era) and a constant in word 1, and frees a retired record at once through the
 * pool (single-threaded only).
 */
@Timeout(60)
class HeaderWordsTest {

    private static final long RECORD = 24;
    private static final long MAGIC = 0x5eed_5eedL;

    /** The test scheme: two header words; retire frees at once. */
    private static final class BirthStampDomain extends ReclaimDomain {

        long births;

        BirthStampDomain(final Builder b) {
            super(b, 2);
        }

        @Override
        void initHeader(final long header) {
            Words.sp(header, ++births);
            Words.sp(header + Long.BYTES, MAGIC);
        }

        @Override
        Guard newGuard(final int id) {
            return new Guard(this, id) {
                private final BlockBag now = new BlockBag(blocks);

                @Override
                void enter() {
                }

                @Override
                void exit() {
                }

                @Override
                public long protect(final int slot, final long address) {
                    slotAddress(slot);
                    return Words.la(address);
                }

                @Override
                public boolean protectIfEqual(final int slot, final long address, final long expected) {
                    slotAddress(slot);
                    return Words.la(address) == expected;
                }

                @Override
                public void retire(final long ptr) {
                    noteRetire(ptr);
                    now.add(ptr);
                    release(now);
                }
            };
        }

        @Override
        void flush(final Guard g) {
        }

        @Override
        void abandon(final Guard g) {
        }

        @Override
        void drainRetired(final Guard g, final BlockBag target) {
        }

        @Override
        long advances() {
            return 0;
        }

        @Override
        long garbageBound(final int n) {
            return 0;
        }
    }

    @Test
    void everyRecordHandedOutCarriesFreshHeaderWordsOutsideTheStructuresBytes() {
        final LimboAllocator a = LimboAllocator.create();
        final BirthStampDomain d = new BirthStampDomain(
                ReclaimDomain.builder(Scheme.NONE).allocator(a).recordBytes(RECORD).pool(16, 2));
        assertEquals(RECORD, d.recordBytes());
        final Set<Long> addresses = new HashSet<>();
        long expectedBirth = 0;
        for (int round = 0; round < 200; round++) {
            try (Guard g = d.pin()) {
                final long node = g.allocate();
                assertTrue(a.usableSize(node) >= RECORD + 3 * Long.BYTES, "room for 2 header words and the trailer");
                assertEquals(++expectedBirth, Words.lv(d.header(node, 0)), "initialized on allocation (round " + round + ")");
                assertEquals(MAGIC, Words.lv(d.header(node, 1)));
                for (long off = 0; off < RECORD; off += Long.BYTES) {
                    Words.sp(node + off, -1L); // the structure owns all of its bytes
                }
                assertEquals(expectedBirth, Words.lv(d.header(node, 0)));
                addresses.add(node);
                g.retire(node); // freed at once: the next round may get it back from the pool
                assertThrows(IllegalStateException.class, () -> g.retire(node), "identity checks still hold");
            }
        }
        assertTrue(addresses.size() < 200, "the pool recycled records: " + addresses.size() + " distinct");
        final long exclusive = d.allocateExclusive();
        assertEquals(++expectedBirth, Words.lv(d.header(exclusive, 0)));
        assertEquals(MAGIC, Words.lv(d.header(exclusive, 1)));
        assertThrows(IndexOutOfBoundsException.class, () -> d.header(exclusive, 2));
        d.freeExclusive(exclusive);
        d.close();
    }
}
