package dev.limbo.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

@SuppressWarnings("restricted") // reinterpret() to read and write the memory the calls return
class NativeTest {

    private static final int EINVAL = 22;
    private static final int ENOMEM = 12;

    @BeforeAll
    static void onLinuxOnly() {
        assumeTrue(Native.AVAILABLE, "native calls are linked only on Linux");
    }

    @Test
    void membarrierReturnsNormallyWhereTheKernelSupportsIt() {
        assumeTrue(Native.MEMBARRIER, "membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) is not supported here");
        for (int i = 0; i < 100; i++) {
            Native.membarrier();
        }
    }

    @Test
    void thePageSizeIsAPowerOfTwoOfAtLeast4096() {
        final long page = Native.pageSize();
        assertTrue(page >= 4096, "page size " + page);
        assertEquals(1, Long.bitCount(page), "page size " + page);
    }

    @Test
    void physicalMemoryIsPositiveAndAWholeNumberOfPages() {
        final long bytes = Native.physicalMemory();
        assertTrue(bytes > 0);
        assertTrue(bytes == Long.MAX_VALUE || bytes % Native.pageSize() == 0, "physical memory " + bytes);
    }

    @Test
    void anAnonymousMappingIsZeroedWritableAndUnmappable() {
        final long page = Native.pageSize();
        final long bytes = 4 * page;
        final long address = Native.mmapAnonymous(bytes, Native.PROT_READ | Native.PROT_WRITE,
                Native.MAP_PRIVATE | Native.MAP_NORESERVE);
        try {
            assertNotEquals(0, address);
            assertNotEquals(-1, address);
            assertEquals(0, address % page, "mappings are page-aligned");
            final MemorySegment segment = MemorySegment.ofAddress(address).reinterpret(bytes);
            assertEquals(0L, segment.get(ValueLayout.JAVA_LONG, 0));
            assertEquals(0L, segment.get(ValueLayout.JAVA_LONG, bytes - 8));
            segment.set(ValueLayout.JAVA_LONG, 0, 123L);
            segment.set(ValueLayout.JAVA_LONG, bytes - 8, 456L);
            assertEquals(123L, segment.get(ValueLayout.JAVA_LONG, 0));
            assertEquals(456L, segment.get(ValueLayout.JAVA_LONG, bytes - 8));
        } finally {
            Native.munmap(address, bytes);
        }
    }

    @Test
    void madviseDontNeedZeroesAPrivateAnonymousPage() {
        final long page = Native.pageSize();
        final long address = Native.mmapAnonymous(page, Native.PROT_READ | Native.PROT_WRITE, Native.MAP_PRIVATE);
        try {
            final MemorySegment segment = MemorySegment.ofAddress(address).reinterpret(page);
            segment.set(ValueLayout.JAVA_LONG, 64, -1L);
            Native.madvise(address, page, Native.MADV_DONTNEED);
            assertEquals(0L, segment.get(ValueLayout.JAVA_LONG, 64));
        } finally {
            Native.munmap(address, page);
        }
    }

    @Test
    void anMmapTheKernelRefusesThrowsWithEnomem() {
        final NativeCallException e = assertThrows(NativeCallException.class,
                () -> Native.mmapAnonymous(1L << 60, Native.PROT_READ | Native.PROT_WRITE,
                        Native.MAP_PRIVATE | Native.MAP_NORESERVE));
        assertEquals(ENOMEM, e.errno());
        assertTrue(e.getMessage().contains("ENOMEM"), e.getMessage());
        assertTrue(e.getMessage().contains("mmap"), e.getMessage());
    }

    @Test
    void munmapOfAMisalignedAddressThrowsWithEinval() {
        final NativeCallException e = assertThrows(NativeCallException.class, () -> Native.munmap(1, 4096));
        assertEquals(EINVAL, e.errno());
        assertTrue(e.getMessage().contains("EINVAL"), e.getMessage());
        assertTrue(e.getMessage().contains("munmap(0x1, 4096)"), e.getMessage());
    }

    @Test
    void munmapOfZeroLengthThrowsWithEinval() {
        final NativeCallException e = assertThrows(NativeCallException.class,
                () -> Native.munmap(Native.pageSize(), 0));
        assertEquals(EINVAL, e.errno());
    }

    @Test
    void madviseWithAnUnknownAdviceThrowsWithEinval() {
        final long page = Native.pageSize();
        final long address = Native.mmapAnonymous(page, Native.PROT_READ | Native.PROT_WRITE, Native.MAP_PRIVATE);
        try {
            final NativeCallException e = assertThrows(NativeCallException.class,
                    () -> Native.madvise(address, page, 12345));
            assertEquals(EINVAL, e.errno());
            assertTrue(e.getMessage().contains("EINVAL"), e.getMessage());
            assertTrue(e.getMessage().contains("madvise"), e.getMessage());
            assertTrue(e.getMessage().contains("12345"), e.getMessage());
        } finally {
            Native.munmap(address, page);
        }
    }

    @Test
    void theErrorDescriptionCarriesTheNameAndStrerrorText() {
        final String einval = Native.describe(EINVAL);
        assertTrue(einval.startsWith("EINVAL: ") && einval.length() > "EINVAL: ".length(), einval);
        assertTrue(Native.describe(ENOMEM).startsWith("ENOMEM: "), Native.describe(ENOMEM));
        assertTrue(Native.describe(9999).startsWith("errno 9999"), Native.describe(9999));
        final NativeCallException e = Native.failure("call(1)", EINVAL);
        assertEquals("call(1) failed: " + einval, e.getMessage());
        assertEquals(EINVAL, e.errno());
    }

    @Test
    void mallocAndFreeRoundTrip() {
        final long address = Native.malloc(256);
        assertNotEquals(0, address);
        try {
            assertEquals(0, address % 8, "malloc returns suitably aligned memory");
            final MemorySegment segment = MemorySegment.ofAddress(address).reinterpret(256);
            segment.fill((byte) 0x11);
            segment.set(ValueLayout.JAVA_LONG, 248, 99L);
            assertEquals(0x1111111111111111L, segment.get(ValueLayout.JAVA_LONG, 0));
            assertEquals(99L, segment.get(ValueLayout.JAVA_LONG, 248));
        } finally {
            Native.free(address);
        }
    }

    @Test
    void freeOfNullIsANoOp() {
        Native.free(0);
    }
}
