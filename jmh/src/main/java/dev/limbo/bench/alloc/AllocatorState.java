package dev.limbo.bench.alloc;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.allocator.OffHeapAllocator;
import dev.limbo.core.Region;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/** The allocator under test, shared by all benchmark threads; one JMH fork per allocator. */
@State(Scope.Benchmark)
public class AllocatorState {

    /** Word access for benchmarks that touch their blocks; opaque so the JIT cannot merge the writes. */
    static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle().withInvokeExactBehavior();

    @Param({"limbo", "malloc", "arena", "bump", "netty"})
    public String allocator;

    public OffHeapAllocator alloc;
    public MemorySegment memory;

    @Setup(Level.Trial)
    public void create() {
        alloc = Allocators.create(allocator);
        memory = alloc.memory();
    }

    /** Prints the region's committed bytes, so the log shows whether memory stays flat. */
    @TearDown(Level.Iteration)
    public void report() {
        if (alloc instanceof LimboAllocator limbo) {
            System.out.printf("%n[%s] region committed %.1f MiB; %s%n", allocator,
                    Region.global().committedBytes() / 1048576.0, limbo.stats());
        }
    }

    /** Increments the first word of {@code ptr} {@code times} times with opaque accesses. */
    static void touch(final MemorySegment memory, final long ptr, final int times) {
        for (int i = 0; i < times; i++) {
            WORD.setOpaque(memory, ptr, (long) WORD.getOpaque(memory, ptr) + 1);
        }
    }
}
