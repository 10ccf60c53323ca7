package dev.limbo.allocator.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SizeClassesTest {

    @Test
    void thereAreFortyStrictlyIncreasingClassesOfMultiplesOfEightFromEightBytesToSixteenKibibytes() {
        assertEquals(40, SizeClasses.COUNT);
        assertEquals(8, SizeClasses.size(1));
        assertEquals(16384, SizeClasses.size(SizeClasses.COUNT));
        assertEquals(SizeClasses.MAX_SMALL, SizeClasses.size(SizeClasses.COUNT));
        for (int c = 1; c <= SizeClasses.COUNT; c++) {
            final int size = SizeClasses.size(c);
            assertEquals(0, size % 8, "class " + c + " size " + size);
            if (c > 1) {
                assertTrue(size > SizeClasses.size(c - 1), "class " + c + " is not larger than class " + (c - 1));
            }
        }
    }

    @Test
    void everyPowerOfTwoFromThirtyTwoOnHasFourClassesAndTheSmallerOnesKeepTheMultiplesOfEight() {
        assertEquals(java.util.List.of(8, 16, 24), java.util.List.of(SizeClasses.size(1), SizeClasses.size(2),
                SizeClasses.size(3)));
        for (int x = 5; x < 14; x++) {
            int inRange = 0;
            for (int c = 1; c <= SizeClasses.COUNT; c++) {
                final int size = SizeClasses.size(c);
                if (size >= (1 << x) && size < (1 << (x + 1))) {
                    inRange++;
                    final int q = 1 << (x - 2);
                    assertEquals(0, size % q, "class size " + size + " is not on the quarter grid of 2^" + x);
                }
            }
            assertEquals(4, inRange, "classes in [2^" + x + ", 2^" + (x + 1) + ")");
        }
    }

    @Test
    void classOfIsTheSmallestClassThatHoldsTheRequestForEverySmallSize() {
        for (int n = 1; n <= SizeClasses.MAX_SMALL; n++) {
            final int c = SizeClasses.classOf(n);
            assertTrue(c >= 1 && c <= SizeClasses.COUNT, "class index " + c + " for " + n);
            assertTrue(SizeClasses.size(c) >= n, n + " bytes got class " + c + " of " + SizeClasses.size(c));
            if (c > 1) {
                assertTrue(SizeClasses.size(c - 1) < n, n + " bytes would fit class " + (c - 1));
            }
        }
    }

    @Test
    void wasteIsBelowAQuarterForRequestsOfThirtyTwoBytesAndMore() {
        for (int n = 32; n <= SizeClasses.MAX_SMALL; n++) {
            final int c = SizeClasses.size(SizeClasses.classOf(n));
            assertTrue((c - n) * 4 < c, n + " bytes waste " + (c - n) + " of " + c);
        }
    }

    @Test
    void divideIsExactForEveryMultipleOfTheClassSizeBelowThePage() {
        for (int c = 1; c <= SizeClasses.COUNT; c++) {
            final int size = SizeClasses.size(c);
            for (long k = 0; k * size < PageMap.PAGE; k++) {
                assertEquals(k, SizeClasses.divide(k * size, c), "class " + c + " offset " + k * size);
            }
        }
    }

    @Test
    void divideNeverMapsANonMultipleBackOntoItselfSoInteriorPointersAreCaught() {
        for (int c = 1; c <= SizeClasses.COUNT; c++) {
            final int size = SizeClasses.size(c);
            for (long off = 8; off < PageMap.PAGE; off += 8) {
                if (off % size != 0) {
                    final long index = SizeClasses.divide(off, c);
                    assertTrue(index * size != off, "class " + c + " offset " + off);
                    assertEquals(off / size, index, "class " + c + " offset " + off);
                }
            }
        }
    }
}
