package dev.limbo.bench.alloc;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * cache-thrash (Hoard suite; thesis §6.2): each thread repeatedly allocates a {@code size}-byte
 * block (16 bytes, as in the thesis), writes it 1000 times (the thesis: 100,000) and frees it. An
 * allocator that gives two threads blocks on one cache line shows active false sharing: no scaling
 * from 1 to 2 threads. Score: rounds per microsecond.
 */
@State(Scope.Thread)
public class AllocCacheThrash extends AllocBenchmark {

    static final int WRITES = 1000;

    @Param({"16"})
    public int size;

    @Benchmark
    public long round(final AllocatorState s) {
        final long ptr = s.alloc.allocate(size);
        AllocatorState.touch(s.memory, ptr, WRITES);
        s.alloc.free(ptr);
        return ptr;
    }
}
