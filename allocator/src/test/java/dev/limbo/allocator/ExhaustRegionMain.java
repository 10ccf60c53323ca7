package dev.limbo.allocator;

import dev.limbo.core.OffHeapOutOfMemoryError;
import dev.limbo.core.Words;

import java.util.ArrayList;
import java.util.List;

/**
 * Run in a forked JVM by {@link LimboAllocatorExhaustionTest}: allocates blocks of {@code args[0]}
 * bytes (default 1 MiB) until the region or its commit limit runs out, prints the error's message
 * on a line starting with {@code OOM: }, retries {@code args[1]} times (default 0) and prints the
 * last retry's message on a line starting with {@code RETRY: }, checks that the allocator still
 * works after freeing half, and exits 0. Exits 2 if memory never ran out, 3 if the allocator
 * misbehaves after the error.
 */
public final class ExhaustRegionMain {

    private ExhaustRegionMain() {
    }

    public static void main(final String[] args) {
        final long size = args.length > 0 ? Long.parseLong(args[0]) : 1 << 20;
        final int retries = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        final LimboAllocator a = LimboAllocator.create();
        final List<Long> held = new ArrayList<>();
        String message = null;
        for (int i = 0; i < 1_000_000 && message == null; i++) {
            try {
                final long p = a.allocate(size);
                Words.sp(p, p);
                Words.sp(p + size - 8, p);
                held.add(p);
            } catch (final OffHeapOutOfMemoryError e) {
                message = e.getMessage();
            }
        }
        if (message == null) {
            System.out.println("no OutOfMemoryError after " + held.size() + " allocations");
            System.exit(2);
        }
        System.out.println("allocations: " + held.size());
        System.out.println("OOM: " + message);
        for (int i = 0; i < retries; i++) {
            try {
                held.add(a.allocate(size));
                System.out.println("retry " + i + " succeeded");
                System.exit(3);
            } catch (final OffHeapOutOfMemoryError e) {
                message = e.getMessage();
            }
        }
        if (retries > 0) {
            System.out.println("RETRY: " + message);
        }
        // The error leaves the allocator consistent: frees work, and freed memory is reusable.
        for (int i = 0; i < held.size(); i++) {
            final long p = held.get(i);
            if (Words.lp(p) != p || Words.lp(p + size - 8) != p) {
                System.out.println("block 0x" + Long.toHexString(p) + " was overwritten");
                System.exit(3);
            }
            if ((i & 1) == 0) {
                a.free(p);
            }
        }
        a.trim();
        final int again = held.size() / 2 - 1;
        for (int i = 0; i < again; i++) {
            try {
                a.allocate(size);
            } catch (final OffHeapOutOfMemoryError e) {
                System.out.println("freed memory was not reusable after " + i + " of " + again + ": " + e.getMessage());
                System.exit(3);
            }
        }
        System.out.println("reallocated: " + again);
        System.exit(0);
    }
}
