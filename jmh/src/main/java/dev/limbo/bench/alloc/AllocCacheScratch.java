package dev.limbo.bench.alloc;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.ThreadParams;

import java.util.concurrent.CountDownLatch;

/**
 * cache-scratch (Hoard suite; thesis §6.2): a separate main thread allocates one {@code size}-byte
 * block (16 bytes, as in the thesis) per worker, adjacent, so that four share a cache line, and
 * stays alive; each worker frees the block it was handed (a remote free), then repeatedly allocates
 * a block of the same size, writes it 1000 times (the thesis: 100,000) and frees it. An allocator
 * that gives the remotely freed block back to the worker makes the workers share a line: passive
 * false sharing, no scaling from 1 to 2 threads. Score: rounds per microsecond.
 */
@State(Scope.Thread)
public class AllocCacheScratch extends AllocBenchmark {

    /** The main thread and the blocks it hands out, renewed every iteration. */
    @State(Scope.Benchmark)
    public static class Handout {
        long[] blocks;
        private CountDownLatch done;
        private Thread main;

        @Setup(Level.Iteration)
        public void handOut(final AllocatorState s, final BenchmarkParams params) throws InterruptedException {
            final int n = params.getThreads();
            final long size = Long.parseLong(params.getParam("size"));
            blocks = new long[n];
            done = new CountDownLatch(1);
            final CountDownLatch ready = new CountDownLatch(1);
            main = new Thread(() -> {
                for (int i = 0; i < n; i++) {
                    blocks[i] = s.alloc.allocate(size);
                }
                ready.countDown();
                try {
                    done.await(); // stay alive, as Hoard's main thread does
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            main.start();
            ready.await();
        }

        @TearDown(Level.Iteration)
        public void finish() throws InterruptedException {
            done.countDown();
            main.join();
        }
    }

    @Setup(Level.Iteration)
    public void freeHandedBlock(final AllocatorState s, final Handout h, final ThreadParams t) {
        s.alloc.free(h.blocks[t.getThreadIndex()]);
    }

    @Param({"16"})
    public int size;

    @Benchmark
    public long round(final AllocatorState s) {
        final long ptr = s.alloc.allocate(size);
        AllocatorState.touch(s.memory, ptr, AllocCacheThrash.WRITES);
        s.alloc.free(ptr);
        return ptr;
    }
}
