package dev.limbo.bench.cdrc;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Scheme;
import dev.limbo.reclaim.rc.Cdrc;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * The scheme of a CDRC structure benchmark (CDRC paper §7.2, digest §6.3): {@code cdrc}, the
 * structure over {@link Cdrc} with snapshots; {@code cdrc-rc}, the same structure with counted
 * loads only; or a manual reclamation scheme ({@code ebr}, {@code hp}, {@code none}) under the
 * manual structure of the same shape. One JMH fork per scheme keeps the call sites monomorphic.
 *
 * <p>Each scheme gets an allocator of its own, so that its space overhead can be read: the nodes
 * removed from the structure but not yet freed ({@link #unreclaimed()}). A manual scheme's domain
 * counts them (retired, not yet freed). CDRC has no retire call: a removed node lives until its
 * last deferred decrement is applied, so the overhead is the nodes alive beyond those the
 * structure holds, {@code (bytes in use - baseline bytes) / node class bytes - nodes per element
 * x (elements - baseline elements)}, where the baseline is taken after the prefill and the
 * elements are counted by the benchmark threads ({@link #added}).
 */
@State(Scope.Benchmark)
public class CdrcScheme {

    /** CDRC with snapshots. */
    public static final String CDRC = "cdrc";
    /** CDRC with counted loads only. */
    public static final String CDRC_RC = "cdrc-rc";
    /** Longs between two threads' element counters: each its own 128 bytes. */
    private static final int STRIDE = 16;

    @Param({CDRC, CDRC_RC, "ebr", "hp", "none"})
    public String scheme;

    LimboAllocator allocator;
    /** The CDRC domain, or null for a manual scheme. */
    Cdrc rc;
    /** The manual scheme's domain, or null for CDRC. */
    ReclaimDomain domain;
    /**
     * Net elements each benchmark thread added since the baseline, at {@link #slot}: a stride
     * apart, and one stride past the array's header (its length, which every thread reads).
     */
    private long[] added;
    private long baselineBytes;
    private long baselineElements;
    private long nodeClassBytes;
    private int nodesPerElement;
    /** The last iteration whose space a thread sampled (guarded by this). */
    private int sampledIteration;

    @Setup(Level.Trial)
    public void create(final BenchmarkParams params) {
        create(params.getThreads());
    }

    /** Creates the allocator and, for CDRC, the domain, for {@code threads} benchmark threads. */
    void create(final int threads) {
        if (!counted()) {
            try {
                Scheme.of(scheme);
            } catch (final IllegalArgumentException e) {
                throw new IllegalArgumentException("scheme '" + scheme + "' is neither " + CDRC + " nor " + CDRC_RC
                        + " nor a reclamation scheme", e);
            }
        }
        allocator = LimboAllocator.create();
        added = new long[(threads + 2) * STRIDE];
        if (counted()) {
            rc = new Cdrc(allocator);
        }
    }

    /** Whether the structure is a CDRC one ({@code cdrc} or {@code cdrc-rc}). */
    boolean counted() {
        return CDRC.equals(scheme) || CDRC_RC.equals(scheme);
    }

    /** Whether the CDRC structure reads with snapshots ({@code cdrc}). */
    boolean snapshots() {
        return CDRC.equals(scheme);
    }

    /** Creates the manual scheme's domain over this state's allocator, as the structure benchmarks do. */
    ReclaimDomain domain(final long recordBytes, final int slots) {
        domain = ReclaimDomain.builder(scheme).allocator(allocator).recordBytes(recordBytes).slots(slots)
                .bypassPool(Scheme.of(scheme).amortized()).build();
        return domain;
    }

    /**
     * Takes the space baseline once the structure holds {@code elements} elements of
     * {@code nodesPerElement} nodes of {@code nodeBytes} bytes each (CDRC only; a manual domain
     * counts its retired nodes itself). Called at the end of the prefill, by one thread.
     */
    void baseline(final long elements, final int nodesPerElement, final long nodeBytes) {
        if (rc == null) {
            return;
        }
        rc.flush(); // the prefill's own delayed decrements are no overhead of the measured operations
        final long probe = allocator.allocate(nodeBytes);
        nodeClassBytes = allocator.usableSize(probe);
        allocator.free(probe);
        this.nodesPerElement = nodesPerElement;
        baselineElements = elements;
        baselineBytes = allocator.stats().bytesInUse();
    }

    /** The slot of benchmark thread {@code thread} in the element counters. */
    static int slot(final int thread) {
        return (thread + 1) * STRIDE;
    }

    /** Records that the thread with counter {@code slot} changed the structure's size by {@code delta}. */
    void added(final int slot, final long delta) {
        added[slot] += delta;
    }

    /**
     * Nodes removed but not yet freed (see the class comment). Exact when the benchmark threads
     * are quiescent (JMH's iteration teardown follows their end).
     */
    long unreclaimed() {
        if (domain != null) {
            return domain.stats().inLimbo();
        }
        if (nodeClassBytes == 0) {
            return 0;
        }
        long elements = baselineElements;
        for (int i = STRIDE; i < added.length; i += STRIDE) {
            elements += added[i];
        }
        final long nodes = (allocator.stats().bytesInUse() - baselineBytes) / nodeClassBytes;
        return nodes - nodesPerElement * (elements - baselineElements);
    }

    /** Off-heap bytes in use by the structure's allocator. */
    long offHeapBytes() {
        return allocator.stats().bytesInUse();
    }

    /**
     * Samples the space at the end of the calling thread's {@code iteration}-th iteration into
     * {@code g}, unless another thread did already; returns whether it did. Every thread samples
     * each iteration, and the first one reports (JMH sums the threads' counters). Atomic with
     * {@link #close}: JMH runs the trial teardown on whichever thread gets there first, maybe
     * while another still samples the last iteration; the closing thread sampled (or saw that
     * iteration sampled) before it closes, so the last sample never reads a closed structure.
     */
    synchronized boolean sample(final int iteration, final SpaceGauges g) {
        if (iteration <= sampledIteration) {
            return false;
        }
        sampledIteration = iteration;
        g.unreclaimedNodes = unreclaimed();
        g.offHeapBytes = offHeapBytes();
        return true;
    }

    /**
     * Ends the trial (atomic with {@link #sample}). A manual scheme: runs {@code closeStructures},
     * closes the domain and trims the allocator. CDRC: closes the domain and then the allocator,
     * which frees the structure's nodes wholesale; the structures are not closed node by node,
     * since that cascades through deferred decrements whose retire lists (megabytes for 10^5
     * nodes) would show in {@code -prof gc}'s last iteration, which the trial teardown belongs to.
     */
    synchronized void close(final Runnable closeStructures) {
        if (rc != null) {
            rc.close();
            allocator.close();
            return;
        }
        closeStructures.run();
        if (domain != null) {
            domain.close();
        }
        allocator.trim();
    }
}
