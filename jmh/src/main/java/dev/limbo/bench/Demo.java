package dev.limbo.bench;

import dev.limbo.core.Participants;
import dev.limbo.core.Region;
import dev.limbo.core.Words;

/** The README's first command: allocate, use and free off-heap memory, and say what happened. */
public final class Demo {

    private Demo() {
    }

    public static void main(final String[] args) {
        final Region region = Region.global();
        System.out.println("Reserved " + region);
        final long page = region.pageSize();
        final long bytes = 256 * page;
        final long block = region.claim(bytes, page);
        region.commit(block, bytes);
        System.out.printf("Claimed and committed %d bytes at offset 0x%x (thread id %d)%n",
                bytes, block, Participants.current());
        for (long off = block; off < block + bytes; off += Long.BYTES) {
            Words.sp(off, off);
        }
        long sum = 0;
        for (long off = block; off < block + bytes; off += Long.BYTES) {
            sum += Words.lp(off);
        }
        System.out.printf("Wrote and read back %d words (checksum %d); CAS 0x%x: %s%n",
                bytes / Long.BYTES, sum, block, Words.cas(block, block, 42L));
        region.decommit(block, bytes);
        System.out.printf("Decommitted them: the word now reads %d; %s%n", Words.lp(block), region);
    }
}
