package dev.limbo.bench.stampit;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.ReclaimDomain;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

import java.util.ArrayList;
import java.util.List;

/**
 * The scheme of a Stamp-it benchmark, shared by its threads; one JMH fork per scheme keeps the
 * guard call sites monomorphic. There is no on-heap baseline here: Stamp-it compares schemes.
 */
@State(Scope.Benchmark)
public class StampItScheme {

    @Param({"none", "ebr", "debra", "hp", "ebr-af", "debra-af",
            "qsbr", "nebr", "rcu", "qsbr-af", "nebr-af", "rcu-af", "debra+", "debra+-af",
            "token-naive", "token-passfirst", "token-periodic", "token-af",
            "ibr", "he", "wfe", "ibr-af", "he-af", "wfe-af",
            "nbr", "nbr+", "nbr-af", "nbr+-af", "hp-af",
            "stampit",
            "lfrc"})
    public String scheme;

    LimboAllocator allocator;
    private final List<ReclaimDomain> domains = new ArrayList<>();

    /**
     * A domain of {@code recordBytes}-byte records with {@code slots} slots, on the benchmark's
     * allocator (created with the first domain). Structures whose nodes have different links
     * need domains of their own.
     */
    ReclaimDomain domain(final long recordBytes, final int slots) {
        if (allocator == null) {
            allocator = LimboAllocator.create();
        }
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(allocator).recordBytes(recordBytes)
                .slots(slots).build();
        domains.add(d);
        return d;
    }

    /** Closes the domains and trims the allocator (after the structures were closed). */
    void close() {
        domains.forEach(ReclaimDomain::close);
        domains.clear();
        allocator.trim();
    }
}
