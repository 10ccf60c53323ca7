package dev.limbo.bench.alloc;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Larson (Larson and Krishnan; thesis §6.2): a long-running server. Each benchmark thread owns a
 * slice of 1000 slots; each invocation hands the slice to a fresh, short-lived platform thread
 * (thread churn) that performs 20k operations: pick a random slot, free its block (usually
 * allocated by an earlier, now dead thread: a remote free), allocate a new one of 16..128 bytes.
 * Score: operations per microsecond, thread creation included; divide by the thread count for the
 * per-thread figure. Committed memory must stay flat: {@link AllocGauges} reports it, and its peak,
 * at the end of every iteration (the iteration log also prints the region's committed bytes).
 * {@code sameThread} runs the same operations on the benchmark thread itself, without the churn,
 * which separates the allocator's own scaling from the cost of starting and ending threads.
 * {@code threadChurnOnly} starts and joins the same worker threads with no work: with the same
 * operations per invocation, its score is the ceiling that thread churn alone puts on {@code churn}
 * on this machine, whatever the allocator.
 */
@State(Scope.Thread)
public class AllocLarson extends AllocBenchmark {

    static final int SLOTS = 1000;
    static final int OPS = 20_000;

    private final long[] slots = new long[SLOTS];
    private long seed = System.nanoTime() | 1;

    @Setup(Level.Trial)
    public void fill(final AllocatorState s) {
        for (int i = 0; i < SLOTS; i++) {
            slots[i] = s.alloc.allocate(16 + (i % 113));
        }
    }

    @TearDown(Level.Trial)
    public void empty(final AllocatorState s) {
        for (int i = 0; i < SLOTS; i++) {
            s.alloc.free(slots[i]);
        }
    }

    @Benchmark
    @OperationsPerInvocation(OPS)
    public long sameThread(final AllocatorState s, final AllocGauges memory) {
        return work(s);
    }

    @Benchmark
    @OperationsPerInvocation(OPS)
    public long churn(final AllocatorState s, final AllocGauges memory) throws InterruptedException {
        final long[] result = new long[1];
        final Thread worker = new Thread(() -> result[0] = work(s));
        worker.start();
        worker.join();
        return result[0];
    }

    @Benchmark
    @OperationsPerInvocation(OPS)
    public void threadChurnOnly() throws InterruptedException {
        final Thread worker = new Thread(() -> { });
        worker.start();
        worker.join();
    }

    private long work(final AllocatorState s) {
        final long[] slots = this.slots;
        long x = seed;
        for (int i = 0; i < OPS; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            final int slot = (int) ((x >>> 33) % SLOTS);
            final long size = 16 + ((x >>> 8) & 0x7F) % 113;
            s.alloc.free(slots[slot]);
            slots[slot] = s.alloc.allocate(size);
        }
        seed = x;
        return x;
    }
}
