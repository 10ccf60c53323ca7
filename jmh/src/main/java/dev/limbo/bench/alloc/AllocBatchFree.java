package dev.limbo.bench.alloc;

import dev.limbo.allocator.LimboAllocator;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.util.Random;

/**
 * The batch-free pathology of Token-EBR / amortized free (Kim, Brown, Singh, PPoPP'24): a reclaimer
 * frees a large batch of nodes that were allocated long ago and are scattered over many
 * superblocks. Freed one by one through a thread cache ({@code mode=loop}), the cache overflows and
 * flushes runs of length ~1, one CAS per block; {@code mode=batch} uses
 * {@link LimboAllocator#freeBatch}, which sorts the batch and returns each superblock's run with one
 * CAS. Each invocation allocates {@value #BATCH} 64-byte blocks and frees them in a shuffled order.
 * Score: allocate+free pairs per microsecond; {@link AllocGauges} reports the committed memory.
 * Non-Limbo allocators always use the loop. One thread frees its own blocks here;
 * {@link AllocRemoteBatchFree} has the pathology's shape, a reclaimer freeing other threads' blocks.
 */
@State(Scope.Thread)
public class AllocBatchFree extends AllocBenchmark {

    static final int BATCH = 16_384;

    @Param({"loop", "batch"})
    public String mode;

    private final long[] blocks = new long[BATCH];
    private final int[] order = new int[BATCH];
    private final long[] shuffled = new long[BATCH];

    @Setup
    public void shuffle() {
        final Random random = new Random(42);
        for (int i = 0; i < BATCH; i++) {
            order[i] = i;
        }
        for (int i = BATCH - 1; i > 0; i--) {
            final int j = random.nextInt(i + 1);
            final int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long run(final AllocatorState s, final AllocGauges memory) {
        for (int i = 0; i < BATCH; i++) {
            blocks[i] = s.alloc.allocate(64);
        }
        for (int i = 0; i < BATCH; i++) {
            shuffled[i] = blocks[order[i]];
        }
        if (mode.equals("batch") && s.alloc instanceof LimboAllocator limbo) {
            limbo.freeBatch(shuffled, BATCH);
        } else {
            for (int i = 0; i < BATCH; i++) {
                s.alloc.free(shuffled[i]);
            }
        }
        return shuffled[0];
    }
}
