package dev.limbo.allocator;

import dev.limbo.core.Participants;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;

/**
 * Run in a forked JVM by {@link LimboAllocatorParticipantOverflowTest}, with a small
 * {@code limbo.participants}: {@code 3 * CAPACITY + 2} platform threads, all alive at once, each
 * allocate blocks of small and large sizes, check them, free them, allocate and free again.
 * Prints {@code fallbacks: N} and {@code inUse: N} and exits 0, or prints the failures and exits 1.
 */
public final class ParticipantOverflowMain {

    static final int BLOCKS = 200;

    private ParticipantOverflowMain() {
    }

    public static void main(final String[] args) throws Exception {
        final int threads = 3 * Participants.CAPACITY + 2;
        final LimboAllocator a = LimboAllocator.create();
        final CyclicBarrier barrier = new CyclicBarrier(threads);
        final Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
        final Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            workers[t] = new Thread(() -> {
                try {
                    final long[] ptrs = new long[BLOCKS];
                    for (int i = 0; i < BLOCKS; i++) {
                        ptrs[i] = a.allocate(size(i));
                        TestSupport.writePattern(ptrs[i], size(i));
                    }
                    // Every worker is alive here, so at most CAPACITY of them hold a participant id.
                    barrier.await(60, TimeUnit.SECONDS);
                    for (int i = 0; i < BLOCKS; i++) {
                        TestSupport.assertPattern(ptrs[i], size(i));
                        if ((i & 1) != 0) {
                            a.free(ptrs[i]);
                        }
                    }
                    for (int i = 1; i < BLOCKS; i += 2) {
                        ptrs[i] = a.allocate(size(i));
                        TestSupport.writePattern(ptrs[i], size(i));
                    }
                    barrier.await(60, TimeUnit.SECONDS);
                    for (int i = 0; i < BLOCKS; i++) {
                        TestSupport.assertPattern(ptrs[i], size(i));
                        a.free(ptrs[i]);
                    }
                } catch (final Throwable e) {
                    failures.add(e);
                    barrier.reset(); // the others fail at once instead of waiting for the timeout
                }
            }, "worker-" + t);
            workers[t].start();
        }
        for (final Thread w : workers) {
            w.join();
        }
        if (!failures.isEmpty()) {
            for (final Throwable e : failures) {
                e.printStackTrace(System.out);
            }
            System.exit(1);
        }
        final AllocatorStats stats = a.stats();
        System.out.println("fallbacks: " + stats.participantFallbacks());
        System.out.println("inUse: " + stats.bytesInUse());
        System.exit(0);
    }

    /** Block sizes from 8 bytes to 40 KiB, small classes and large runs. */
    static long size(final int i) {
        return i % 10 == 9 ? 40_000 : 8L << (i % 10);
    }
}
