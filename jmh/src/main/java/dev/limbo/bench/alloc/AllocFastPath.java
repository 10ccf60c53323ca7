package dev.limbo.bench.alloc;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.allocator.ThreadCache;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * One allocate + free pair: the thread-cache fast path. Score: pairs per microsecond.
 * {@code contextPair} measures Limbo's explicit-context path (no thread-cache lookup); for the
 * other allocators it is the same as {@code pair}.
 */
@State(Scope.Thread)
public class AllocFastPath extends AllocBenchmark {

    @Param({"16"})
    public int size;

    private ThreadCache context;

    @Setup
    public void context(final AllocatorState s) {
        context = s.alloc instanceof LimboAllocator limbo ? limbo.context() : null;
    }

    @Benchmark
    public long pair(final AllocatorState s) {
        final long ptr = s.alloc.allocate(size);
        s.alloc.free(ptr);
        return ptr;
    }

    @Benchmark
    public long contextPair(final AllocatorState s) {
        if (context == null) {
            return pair(s);
        }
        final long ptr = context.allocate(size);
        context.free(ptr);
        return ptr;
    }
}
