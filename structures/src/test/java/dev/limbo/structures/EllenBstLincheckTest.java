package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Scheme;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Lincheck (stress mode) linearizability test of {@link EllenBst}, against a {@link TreeMap}
 * specification, over a DEBRA domain and over a hazard-pointer one (whose searches validate and
 * help marked nodes). Keys 1..5, values 1..3, so that operations collide and meet each other's
 * flags and marks. Every instance Lincheck creates is closed after the check, then the domain.
 */
@Param(name = "key", gen = LongGen.class, conf = "1:5")
@Param(name = "value", gen = LongGen.class, conf = "1:3")
public class EllenBstLincheckTest {

    static final LimboAllocator ALLOC = LimboAllocator.create();
    /** The domain of the check in progress (the test methods run one at a time). */
    static volatile ReclaimDomain domain;
    static final Queue<OffHeapStructure> CREATED = new ConcurrentLinkedQueue<>();

    private final EllenBst tree;

    /** Lincheck's instances get a tree; JUnit's own instance (no check in progress) none. */
    public EllenBstLincheckTest() {
        final ReclaimDomain d = domain;
        tree = d == null ? null : new EllenBst(d);
        if (tree != null) {
            CREATED.add(tree);
        }
    }

    @Operation
    public boolean insert(@Param(name = "key") final long key, @Param(name = "value") final long value) {
        return tree.insert(key, value);
    }

    @Operation
    public long putIfAbsent(@Param(name = "key") final long key, @Param(name = "value") final long value) {
        return tree.putIfAbsent(key, value);
    }

    @Operation
    public long get(@Param(name = "key") final long key) {
        return tree.get(key);
    }

    @Operation
    public boolean contains(@Param(name = "key") final long key) {
        return tree.contains(key);
    }

    @Operation
    public long remove(@Param(name = "key") final long key) {
        return tree.remove(key);
    }

    /** The sequential specification: a TreeMap with the same operations. */
    public static final class Spec {
        private final TreeMap<Long, Long> map = new TreeMap<>();

        public boolean insert(final long key, final long value) {
            return map.putIfAbsent(key, value) == null;
        }

        public long putIfAbsent(final long key, final long value) {
            return LongMapChecks.orReserved(map.putIfAbsent(key, value));
        }

        public long get(final long key) {
            return LongMapChecks.orReserved(map.get(key));
        }

        public boolean contains(final long key) {
            return map.containsKey(key);
        }

        public long remove(final long key) {
            return LongMapChecks.orReserved(map.remove(key));
        }
    }

    private static void check(final Scheme scheme) {
        domain = ReclaimDomain.builder(scheme).allocator(ALLOC).recordBytes(EllenBst.RECORD_BYTES)
                .slots(EllenBst.SLOTS).build();
        try {
            LincheckStress.check(EllenBstLincheckTest.class, Spec.class, CREATED, domain);
        } finally {
            domain = null;
        }
    }

    @Test
    void linearizableUnderDebra() {
        check(Scheme.DEBRA);
    }

    @Test
    void linearizableUnderHazardPointers() {
        check(Scheme.HP);
    }
}
