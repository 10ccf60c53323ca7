package dev.limbo.bench.alloc;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * cache-thrash (Hoard suite; thesis §6.2): each thread repeatedly allocates an 8-byte block, writes
 * it 1000 times and frees it. An allocator that gives two threads blocks on one cache line shows
 * active false sharing: no scaling from 1 to 2 threads. Score: rounds per microsecond.
 */
@State(Scope.Thread)
public class AllocCacheThrash extends AllocBenchmark {

    static final int WRITES = 1000;

    @Benchmark
    public long round(final AllocatorState s) {
        final long ptr = s.alloc.allocate(8);
        AllocatorState.touch(s.memory, ptr, WRITES);
        s.alloc.free(ptr);
        return ptr;
    }
}
