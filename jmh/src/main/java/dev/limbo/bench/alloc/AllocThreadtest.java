package dev.limbo.bench.alloc;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * Threadtest (thesis §6.2, Hoard suite): each thread allocates a batch of 8-byte blocks, then frees
 * them in the same order. The thesis uses batches of 100k; we use 10k per invocation. Score:
 * allocate+free pairs per microsecond; {@link AllocGauges} reports the committed memory.
 */
@State(Scope.Thread)
public class AllocThreadtest extends AllocBenchmark {

    static final int BATCH = 10_000;
    static final int SIZE = 8;

    private final long[] blocks = new long[BATCH];

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long batch(final AllocatorState s, final AllocGauges memory) {
        final long[] blocks = this.blocks;
        for (int i = 0; i < BATCH; i++) {
            blocks[i] = s.alloc.allocate(SIZE);
        }
        for (int i = 0; i < BATCH; i++) {
            s.alloc.free(blocks[i]);
        }
        return blocks[BATCH - 1];
    }
}
