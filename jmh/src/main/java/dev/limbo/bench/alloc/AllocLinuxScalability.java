package dev.limbo.bench.alloc;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * Linux scalability (Lever and Boreham; thesis §6.2): each thread allocates 16-byte blocks without
 * touching them, then frees them in the same order. The thesis uses 10M per thread; we use 100k
 * per invocation. Score: allocate+free pairs per microsecond; {@link AllocGauges} reports the
 * committed memory.
 */
@State(Scope.Thread)
public class AllocLinuxScalability extends AllocBenchmark {

    static final int COUNT = 100_000;
    static final int SIZE = 16;

    private final long[] blocks = new long[COUNT];

    @Benchmark
    @OperationsPerInvocation(COUNT)
    public long run(final AllocatorState s, final AllocGauges memory) {
        final long[] blocks = this.blocks;
        for (int i = 0; i < COUNT; i++) {
            blocks[i] = s.alloc.allocate(SIZE);
        }
        for (int i = 0; i < COUNT; i++) {
            s.alloc.free(blocks[i]);
        }
        return blocks[COUNT - 1];
    }
}
