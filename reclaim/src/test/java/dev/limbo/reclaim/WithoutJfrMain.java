package dev.limbo.reclaim;

import static dev.limbo.reclaim.ReclaimTestSupport.drainCells;
import static dev.limbo.reclaim.ReclaimTestSupport.replaceAndRetire;
import static dev.limbo.reclaim.ReclaimTestSupport.runThreads;
import static dev.limbo.reclaim.ReclaimTestSupport.seq;

import dev.limbo.allocator.FlushPolicy;
import dev.limbo.allocator.LimboAllocator;

/**
 * Run by {@link WithoutJfrTest} in a JVM whose runtime has no {@code jdk.jfr} module: fills and
 * flushes an allocator's thread caches, then runs every scheme through retires, frees and close,
 * the paths that emit JFR events where JFR is present. Prints {@code ok} at the end.
 */
public final class WithoutJfrMain {

    private static final int CELLS = 64;
    private static final int REPLACEMENTS = 20_000;

    private WithoutJfrMain() {
    }

    public static void main(final String[] args) throws InterruptedException {
        if (ModuleLayer.boot().findModule("jdk.jfr").isPresent()) {
            throw new AssertionError("jdk.jfr is in the runtime; the test must leave it out");
        }
        // FLUSH_ALL: every free goes through the thread cache, so a full cache flushes
        try (LimboAllocator a = LimboAllocator.builder().flushPolicy(FlushPolicy.FLUSH_ALL).build()) {
            final long[] blocks = new long[100_000];
            for (int i = 0; i < blocks.length; i++) {
                blocks[i] = a.allocate(64);
            }
            for (final long p : blocks) {
                a.free(p);
            }
            a.trim();
            for (final Scheme scheme : Scheme.values()) {
                try (ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(64).build()) {
                    final long cells = a.allocateZeroed(CELLS * (long) Long.BYTES);
                    runThreads(2, t -> {
                        for (int k = 0; k < REPLACEMENTS; k++) {
                            replaceAndRetire(d, cells + (long) ((k * 3 + t) % CELLS) * Long.BYTES, seq(t, k));
                        }
                    });
                    drainCells(d, cells, CELLS);
                    d.flush();
                    a.free(cells);
                }
                System.out.println(scheme.id() + " ran");
            }
        }
        System.out.println("ok");
    }
}
