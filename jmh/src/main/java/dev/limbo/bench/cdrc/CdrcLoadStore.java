package dev.limbo.bench.cdrc;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.bench.structures.StructureBenchmark;
import dev.limbo.core.Layouts;
import dev.limbo.core.Words;
import dev.limbo.reclaim.rc.Cdrc;
import dev.limbo.reclaim.rc.RcType;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * CDRC's microbenchmark #1 (PLDI '21 §7.1, Figure 6a-6c; digest §6.2, B1): an array of
 * {@code size} counted fields, each pointing to an object with a 32-byte payload. An operation
 * picks a field uniformly at random; with probability {@code storePercent} it allocates a fresh
 * object and stores it ({@link Cdrc#storeMove}: the new object's count moves into the field, the
 * old one is retired), otherwise it loads the field ({@link Cdrc#load}, an increment), reads the
 * payload and releases the reference. {@code size} 10 is the paper's heavy contention, 10^7 its
 * almost none.
 *
 * <p>{@code scheme}: {@code cdrc}, or {@code heap}, the Java gold standard (digest §7.7): an
 * {@link AtomicReferenceArray} of on-heap objects with the same payload, reclaimed by the GC.
 * Snapshots play no part here (the paper's remark), so there is no {@code cdrc-rc}; the manual
 * schemes have no counted field to compare.
 *
 * <p>Fields are padded to 128 bytes each (the paper pads them to a cache line) when there are at
 * most {@value #PAD_LIMIT} of them; 10^7 fields see almost no contention, and padding them would
 * only multiply the memory (on the heap too: the baseline's references are spread the same way).
 *
 * <p>Space overhead ({@link Space#unreclaimedNodes}): objects alive beyond the one each field
 * holds, i.e. those whose decrements are still deferred; 0 for {@code heap} (the GC's share shows
 * under {@code -prof gc}).
 */
public class CdrcLoadStore extends StructureBenchmark {

    /** The payload of an object, as in the paper. */
    static final long PAYLOAD = 32;
    /** Most fields that are padded. */
    static final int PAD_LIMIT = 1 << 16;
    /** The CDRC scheme. */
    public static final String CDRC = "cdrc";
    /** The on-heap baseline. */
    public static final String HEAP = "heap";

    /** The heap baseline's object: 32 bytes of payload. */
    static final class Payload {
        final long a;
        final long b;
        final long c;
        final long d;

        Payload(final long a) {
            this.a = a;
            this.b = a + 1;
            this.c = a + 2;
            this.d = a + 3;
        }
    }

    @State(Scope.Benchmark)
    public static class Cells {
        @Param({CDRC, HEAP})
        public String scheme;

        @Param({"10", "10000000"})
        public int size;

        @Param({"10", "50"})
        public int storePercent;

        LimboAllocator allocator;
        Cdrc rc;
        int type;
        long cells;
        long stride;
        AtomicReferenceArray<Payload> heap;
        int heapStride;
        private long baselineBytes;
        private long objectBytes;
        /** The last iteration whose space a thread sampled (guarded by this). */
        private int sampledIteration;

        @Setup(Level.Trial)
        public void create() {
            final boolean padded = size <= PAD_LIMIT;
            if (HEAP.equals(scheme)) {
                heapStride = padded ? (int) (Layouts.PADDED / Integer.BYTES) : 1;
                heap = new AtomicReferenceArray<>(size * heapStride);
                for (int i = 0; i < size; i++) {
                    heap.set(i * heapStride, new Payload(i));
                }
                return;
            }
            if (!CDRC.equals(scheme)) {
                throw new IllegalArgumentException("unknown scheme '" + scheme + "'; known: " + CDRC + ", " + HEAP);
            }
            allocator = LimboAllocator.create();
            rc = new Cdrc(allocator);
            type = rc.register(new RcType("payload", Cdrc.HEADER + PAYLOAD));
            stride = padded ? Layouts.PADDED : Long.BYTES;
            cells = allocator.allocateZeroed(size * stride);
            for (int i = 0; i < size; i++) {
                rc.storeMove(cell(i), fresh(i));
            }
            final long probe = rc.allocate(type);
            objectBytes = allocator.usableSize(probe);
            rc.release(probe);
            rc.flush();
            baselineBytes = allocator.stats().bytesInUse();
        }

        long cell(final int i) {
            return cells + i * stride;
        }

        /** A new object with payload {@code v} (count 1, the caller's). */
        long fresh(final long v) {
            final long p = rc.allocate(type);
            Words.sp(p + Cdrc.HEADER, v);
            return p;
        }

        /** Objects alive beyond the fields' own (exact while no operation runs). */
        long unreclaimed() {
            return rc == null ? 0 : (allocator.stats().bytesInUse() - baselineBytes) / objectBytes;
        }

        /**
         * Samples the end of the calling thread's {@code iteration}-th iteration into {@code s}
         * unless another thread did already (as {@link CdrcScheme#sample}, atomic with
         * {@link #close}, which another thread may run meanwhile); returns whether it did.
         */
        synchronized boolean sample(final int iteration, final Space s) {
            if (iteration <= sampledIteration) {
                return false;
            }
            sampledIteration = iteration;
            s.unreclaimedNodes = unreclaimed();
            s.offHeapBytes = rc == null ? 0 : allocator.stats().bytesInUse();
            return true;
        }

        @TearDown(Level.Trial)
        public synchronized void close() {
            if (rc != null) {
                rc.close();
                allocator.close(); // frees the fields' objects and the fields
            }
        }
    }

    /**
     * The space overhead and off-heap bytes at the end of each iteration (names as in the
     * structure family); only the first thread to sample an iteration reports, since JMH sums the
     * threads' counters.
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Space {
        public long unreclaimedNodes;
        public long offHeapBytes;
        /** Iterations this thread ended, warmup included. */
        private int iteration;

        @TearDown(Level.Iteration)
        public void sample(final Cells c) {
            iteration++;
            if (!c.sample(iteration, this)) {
                unreclaimedNodes = 0;
                offHeapBytes = 0;
            }
        }
    }

    @Benchmark
    public long loadStore(final Cells c, final Worker w, final Space space) {
        final int i = w.rng.nextInt(c.size);
        final boolean store = w.rng.nextInt(100) < c.storePercent;
        if (c.heap != null) {
            final int at = i * c.heapStride;
            if (store) {
                c.heap.set(at, new Payload(i));
                return i;
            }
            return c.heap.get(at).a;
        }
        final Cdrc rc = c.rc;
        final long cell = c.cell(i);
        if (store) {
            rc.storeMove(cell, c.fresh(i));
            return i;
        }
        final long p = rc.load(cell);
        final long v = Words.lp(p + Cdrc.HEADER);
        rc.release(p);
        return v;
    }
}
