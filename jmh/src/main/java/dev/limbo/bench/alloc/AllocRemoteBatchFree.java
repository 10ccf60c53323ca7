package dev.limbo.bench.alloc;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.allocator.OffHeapAllocator;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.Control;
import org.openjdk.jmh.infra.ThreadParams;

import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * The batch-free pathology as it arises (Kim, Brown, Singh, PPoPP'24; notes/token-ebr-amortized-free.md
 * §2.2): worker threads allocate nodes, and a reclaimer thread frees them in large batches, all
 * allocated by other threads, while the workers keep allocating. Each group has {@code work} threads
 * (one by default; JMH's {@code -tg} sets more) and one {@code reclaim} thread; more threads ({@code
 * -t}) make more groups. A worker fills a buffer with {@value #BATCH} 64-byte blocks and hands it
 * over; the reclaimer frees a full buffer, one {@code free} at a time ({@code mode=loop}: its cache
 * overflows and flushes back to the workers' superblocks) or with {@link LimboAllocator#freeBatch}
 * ({@code mode=batch}: one CAS per superblock's run). Each worker has {@value #DEPTH} buffers, so it
 * runs ahead of the reclaimer by at most that many batches and then waits for it; a slow free
 * therefore slows allocation too, as in the paper. The blocks of a buffer are in random order, as a
 * reclaimer's batch is (nodes unlinked in another order than allocated).
 *
 * <p>The allocators: Limbo with each flush policy (the pathology's subject) and malloc for reference
 * ({@code mode=batch} falls back to the loop there). Score: allocations plus frees per microsecond
 * (the group's sum; each method's own rate is a secondary result). A call that finds the measurement
 * over while it waits for the other side returns without work, once per thread and iteration. The
 * measured methods allocate nothing on the Java heap.
 */
public class AllocRemoteBatchFree extends AllocBenchmark {

    static final int BATCH = 16_384;
    /** Buffers per worker. */
    static final int DEPTH = 4;
    /** Where a worker puts its i-th block in a buffer: a random permutation, the same for every buffer. */
    private static final int[] SLOT_OF = permutation();

    static final int EMPTY = 0;
    static final int FULL = 1;
    static final int FREEING = 2;
    /** Buffer states are 32 ints (128 bytes) apart, so that no two share a cache line. */
    static final int STRIDE = 32;

    /** The allocator and the buffers of one group. */
    @State(Scope.Group)
    public static class HandOff {
        @Param({"limbo-flush-all", "limbo-partial-flush", "limbo-owner-return", "malloc"})
        public String allocator;

        @Param({"loop", "batch"})
        public String mode;

        OffHeapAllocator alloc;
        /** The allocator when it is Limbo's and the mode is batch; else null. */
        LimboAllocator batchFree;
        long[][] buffers;
        /** Per buffer, at {@code i * STRIDE}: EMPTY (the worker's), FULL or FREEING (the reclaimer's). */
        AtomicIntegerArray states;

        @Setup(Level.Trial)
        public void create(final BenchmarkParams params) {
            final List<String> roles = List.copyOf(params.getThreadGroupLabels());
            prepare(params.getThreadGroups()[roles.indexOf("work")]);
        }

        /** Creates the allocator, and the buffers of {@code workers} workers. */
        void prepare(final int workers) {
            alloc = Allocators.create(allocator);
            batchFree = mode.equals("batch") && alloc instanceof LimboAllocator limbo ? limbo : null;
            buffers = new long[workers * DEPTH][BATCH];
            states = new AtomicIntegerArray(workers * DEPTH * STRIDE);
        }

        /** Frees the blocks of the buffers the reclaimer has not freed. */
        @TearDown(Level.Trial)
        public void freeLeftovers() {
            for (int i = 0; i < buffers.length; i++) {
                if (states.get(i * STRIDE) == FULL) {
                    for (final long ptr : buffers[i]) {
                        alloc.free(ptr);
                    }
                    states.set(i * STRIDE, EMPTY);
                }
            }
        }
    }

    /** A thread's place: a worker's next buffer, or where the reclaimer looks next. */
    @State(Scope.Thread)
    public static class Cursor {
        int first;
        int next;

        @Setup(Level.Trial)
        public void place(final ThreadParams thread) {
            first = thread.getSubgroupThreadIndex() * DEPTH; // a worker's buffers; reclaimers wrap it
            next = first;
        }
    }

    private static int[] permutation() {
        final Random random = new Random(42);
        final int[] p = new int[BATCH];
        for (int i = 0; i < BATCH; i++) {
            p[i] = i;
        }
        for (int i = BATCH - 1; i > 0; i--) {
            final int j = random.nextInt(i + 1);
            final int t = p[i];
            p[i] = p[j];
            p[j] = t;
        }
        return p;
    }

    /** A worker: waits for its next buffer to be empty, fills it with new blocks, hands it over. */
    @Benchmark
    @Group("handOff")
    @GroupThreads(1)
    @OperationsPerInvocation(BATCH)
    public long work(final HandOff h, final Cursor c, final Control control, final AllocGauges memory) {
        final int i = c.next;
        // (1) volatile load; pairs with the reclaimer's release store (4): its frees are done.
        while (h.states.get(i * STRIDE) != EMPTY) {
            if (control.stopMeasurement) {
                return 0;
            }
            Thread.onSpinWait();
        }
        final long[] buffer = h.buffers[i];
        for (int k = 0; k < BATCH; k++) {
            buffer[SLOT_OF[k]] = h.alloc.allocate(64);
        }
        // (2) release store: publishes the buffer; pairs with (3).
        h.states.setRelease(i * STRIDE, FULL);
        c.next = c.first + (i - c.first + 1) % DEPTH;
        return buffer[0];
    }

    /** The reclaimer: takes the next full buffer of any worker and frees its blocks. */
    @Benchmark
    @Group("handOff")
    @GroupThreads(1)
    @OperationsPerInvocation(BATCH)
    public long reclaim(final HandOff h, final Cursor c, final Control control, final AllocGauges memory) {
        final int n = h.buffers.length;
        final int start = c.next % n;
        for (int i = start;; i = (i + 1) % n) {
            // (3) CAS FULL -> FREEING (volatile): acquires the worker's (2); one reclaimer takes a buffer.
            if (h.states.get(i * STRIDE) == FULL && h.states.compareAndSet(i * STRIDE, FULL, FREEING)) {
                final long[] buffer = h.buffers[i];
                final long first = buffer[0];
                if (h.batchFree != null) {
                    h.batchFree.freeBatch(buffer, BATCH);
                } else {
                    for (final long ptr : buffer) {
                        h.alloc.free(ptr);
                    }
                }
                // (4) release store: the buffer is the worker's again; pairs with (1).
                h.states.setRelease(i * STRIDE, EMPTY);
                c.next = (i + 1) % n;
                return first;
            }
            if ((i + 1) % n == start) { // a whole round without a full buffer
                if (control.stopMeasurement) {
                    return 0;
                }
                Thread.onSpinWait();
            }
        }
    }
}
