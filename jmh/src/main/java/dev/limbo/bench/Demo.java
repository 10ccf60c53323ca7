package dev.limbo.bench;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Region;
import dev.limbo.core.Words;

import java.lang.foreign.MemorySegment;

/** The README's first command: allocate, use and free off-heap memory, and say what happened. */
public final class Demo {

    private Demo() {
    }

    public static void main(final String[] args) {
        final Region region = Region.global();
        System.out.println("Reserved      " + region);
        final LimboAllocator allocator = LimboAllocator.create();
        System.out.println("Allocator     " + allocator.describe());

        final int n = 100_000;
        final long[] blocks = new long[n];
        long requested = 0;
        for (int i = 0; i < n; i++) {
            final long size = 8 + (i % 32) * 8;
            blocks[i] = allocator.allocate(size);
            requested += size;
            Words.sp(blocks[i], i);
        }
        final long big = allocator.allocate(8L << 20);
        Words.SEGMENT.asSlice(big, 8L << 20).fill((byte) 7);
        System.out.printf("Allocated     %d small blocks (%.1f MiB requested) and one 8 MiB block%n",
                n, requested / 1048576.0);
        System.out.println("Stats         " + allocator.stats());

        long sum = 0;
        for (int i = 0; i < n; i++) {
            sum += Words.lp(blocks[i]);
        }
        System.out.printf("Read back     sum of stored indices = %d (expected %d)%n", sum, (long) n * (n - 1) / 2);

        final MemorySegment text = allocator.asSegmentAllocator().allocateFrom("hello from off-heap");
        System.out.println("Segment       \"" + text.getString(0) + "\" at region offset 0x"
                + Long.toHexString(text.address() - Words.SEGMENT.address()));
        allocator.free(text);

        try {
            allocator.free(blocks[1] + 8); // 8 bytes into a 16-byte block
        } catch (final IllegalArgumentException e) {
            System.out.println("Bad free      rejected: " + e.getMessage());
        }
        allocator.freeBatch(blocks, n);
        allocator.free(big);
        try {
            allocator.free(big);
        } catch (final IllegalStateException e) {
            System.out.println("Double free   rejected: " + e.getMessage());
        }
        final long released = allocator.trim();
        System.out.printf("Freed all     trim() decommitted %.1f MiB%n", released / 1048576.0);
        System.out.println("Stats         " + allocator.stats());
        System.out.println("Region        " + region);
    }
}
