package dev.limbo.bench.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Scheme;
import dev.limbo.reclaim.ReclaimStats;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * The scheme under test: {@code jdk} (the on-heap JDK counterpart, boxed) or a reclamation scheme
 * id. Shared by all benchmark threads; one JMH fork per scheme keeps the guard call sites
 * monomorphic.
 */
@State(Scope.Benchmark)
public class SchemeState {

    /** The id of the on-heap JDK baseline. */
    public static final String JDK = "jdk";

    @Param({"jdk", "none", "ebr", "debra", "hp", "ebr-af", "debra-af",
            "qsbr", "nebr", "rcu", "qsbr-af", "nebr-af", "rcu-af", "debra+", "debra+-af",
            "token-naive", "token-passfirst", "token-periodic", "token-af",
            "ibr", "he", "wfe", "ibr-af", "he-af", "wfe-af",
            "nbr", "nbr+", "nbr-af", "nbr+-af", "hp-af",
            "stampit",
            "lfrc"})
    public String scheme;

    LimboAllocator allocator;
    ReclaimDomain domain;

    boolean jdk() {
        return JDK.equals(scheme);
    }

    /** Creates the allocator and domain (not for {@code jdk}). */
    ReclaimDomain domain(final long recordBytes, final int slots) {
        allocator = LimboAllocator.create();
        // amortized free frees straight to the allocator, as in the Token-EBR paper (where batch free hurts)
        domain = ReclaimDomain.builder(scheme).allocator(allocator).recordBytes(recordBytes).slots(slots)
                .bypassPool(Scheme.of(scheme).amortized()).build();
        return domain;
    }

    /** Unreclaimed (retired, not yet freed) nodes; 0 for {@code jdk}. */
    long unreclaimed() {
        if (domain == null) {
            return 0;
        }
        final ReclaimStats s = domain.stats();
        return s.inLimbo();
    }

    /** Off-heap bytes in use by the structure's allocator; 0 for {@code jdk}. */
    long offHeapBytes() {
        return allocator == null ? 0 : allocator.stats().bytesInUse();
    }

    /** Closes the domain and trims the allocator (after the structure was closed). */
    void close() {
        if (domain != null) {
            domain.close();
            allocator.trim();
        }
    }
}
