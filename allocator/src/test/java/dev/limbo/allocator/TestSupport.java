package dev.limbo.allocator;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.limbo.allocator.internal.PageMap;
import dev.limbo.core.Participants;
import dev.limbo.core.Words;

import java.lang.foreign.ValueLayout;
import java.lang.reflect.Field;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;

/** Helpers shared by the allocator tests. */
final class TestSupport {

    private TestSupport() {
    }

    /** The word written at word {@code i} of a block at {@code ptr} of {@code size} bytes. */
    static long patternWord(final long ptr, final long size, final long i) {
        return (ptr * 0x9E37_79B9_7F4A_7C15L) ^ (size << 40) ^ (i * 0xC2B2_AE3D_27D4_EB4FL) ^ i;
    }

    /** Writes the pattern of {@code (ptr, size)} over the first {@code size / 8} words of the block. */
    static void writePattern(final long ptr, final long size) {
        final long words = size >>> 3;
        for (long i = 0; i < words; i++) {
            Words.SEGMENT.set(ValueLayout.JAVA_LONG, ptr + (i << 3), patternWord(ptr, size, i));
        }
    }

    /** Checks the pattern written by {@link #writePattern}; returns the first bad word index or -1. */
    static long checkPattern(final long ptr, final long size) {
        return checkMovedPattern(ptr, ptr, size);
    }

    /** Checks that {@code at} holds the pattern written for {@code (ptr, size)}; first bad word or -1. */
    static long checkMovedPattern(final long at, final long ptr, final long size) {
        final long words = size >>> 3;
        for (long i = 0; i < words; i++) {
            if (Words.SEGMENT.get(ValueLayout.JAVA_LONG, at + (i << 3)) != patternWord(ptr, size, i)) {
                return i;
            }
        }
        return -1;
    }

    static void assertPattern(final long ptr, final long size) {
        assertEquals(-1, checkPattern(ptr, size),
                () -> String.format("block 0x%x (%d bytes) was overwritten", ptr, size));
    }

    /** Runs {@code body} on a fresh platform thread, waits for it to die, and returns its result. */
    static <T> T inFreshThread(final Callable<T> body) throws InterruptedException {
        final AtomicReference<T> result = new AtomicReference<>();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread thread = new Thread(() -> {
            try {
                result.set(body.call());
            } catch (final Throwable t) {
                failure.set(t);
            }
        });
        thread.start();
        thread.join();
        if (failure.get() != null) {
            throw new AssertionError("thread body failed", failure.get());
        }
        return result.get();
    }

    /**
     * Returns every cached block of {@code allocator} to its superblock: the calling thread's cache
     * (trim) and those of terminated threads (reaped, so the release hook drains them; a release
     * the Cleaner won is awaited).
     */
    static AllocatorStats quiesce(final LimboAllocator allocator) {
        reap();
        allocator.trim();
        return allocator.stats();
    }

    /**
     * Releases the ids of terminated threads, and waits for the releases the Cleaner began (it
     * releases the id of a thread once the GC finds the thread's token unreachable, and a reap skips
     * those), so that every release hook has run.
     */
    static void reap() {
        Participants.reapTerminated();
        Participants.awaitReleases();
    }

    /** Asserts that nothing is in use, nothing is cached, and no superblock holds a block. */
    static void assertAllReturned(final LimboAllocator allocator) {
        final AllocatorStats s = quiesce(allocator);
        assertEquals(0, s.bytesInUse(), () -> "bytes in use: " + s);
        assertEquals(0, s.largeBytes(), () -> "large bytes: " + s);
        assertEquals(0, s.cachedBytes(), () -> "cached bytes: " + s);
        assertEquals(0, s.superblocksFull(), () -> "full superblocks left (leaked blocks): " + s);
        assertEquals(0, s.superblocksPartial(), () -> "partial superblocks left (leaked blocks): " + s);
    }

    /**
     * The bytes of the pages {@code s}'s allocator holds: its superblocks in use and its large runs.
     * A test's allocations may grow this while the JVM's committed bytes stay put, when the Cleaner
     * has freed another allocator's pages into the page allocator's committed reserve meanwhile.
     */
    static long ownPageBytes(final AllocatorStats s) {
        return (s.superblocksFull() + s.superblocksPartial()) * PageMap.PAGE + s.largeBytes();
    }

    static long page(final long ptr) {
        return ptr >>> PageMap.PAGE_SHIFT;
    }

    /** The striped caches that virtual threads share (a private field, read by reflection). */
    static ThreadCache[] stripes(final LimboAllocator allocator) throws ReflectiveOperationException {
        final Field f = CacheRegistry.class.getDeclaredField("stripes");
        f.setAccessible(true);
        return (ThreadCache[]) f.get(allocator.registry);
    }
}
