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
 * Lincheck (stress mode) linearizability test of {@link BrownAbTree}'s point operations, against a
 * {@link TreeMap} specification, over a DEBRA domain and over a hazard-pointer one (whose searches
 * validate and help marked nodes). Degree 4 (a = 2) and keys 1..6, so that a few inserts split
 * leaves and removes join them: the operations meet each other's frozen nodes and rebalancing.
 * Every instance Lincheck creates is closed after the check, then the domain.
 */
@Param(name = "key", gen = LongGen.class, conf = "1:6")
@Param(name = "value", gen = LongGen.class, conf = "1:3")
public class BrownAbTreeLincheckTest {

    static final LimboAllocator ALLOC = LimboAllocator.create();
    static final int DEGREE = 4;
    /** The domain of the check in progress (the test methods run one at a time). */
    static volatile ReclaimDomain domain;
    static final Queue<OffHeapStructure> CREATED = new ConcurrentLinkedQueue<>();

    private final BrownAbTree tree;

    /** Lincheck's instances get a tree; JUnit's own instance (no check in progress) none. */
    public BrownAbTreeLincheckTest() {
        final ReclaimDomain d = domain;
        tree = d == null ? null : new BrownAbTree(d, DEGREE);
        if (tree != null) {
            CREATED.add(tree);
        }
    }

    @Operation
    public long put(@Param(name = "key") final long key, @Param(name = "value") final long value) {
        return tree.put(key, value, 0);
    }

    @Operation
    public boolean putIfAbsent(@Param(name = "key") final long key, @Param(name = "value") final long value) {
        return tree.putIfAbsent(key, value);
    }

    @Operation
    public boolean replace(@Param(name = "key") final long key, @Param(name = "value") final long expected,
                           @Param(name = "value") final long value) {
        return tree.replace(key, expected, value);
    }

    @Operation
    public long get(@Param(name = "key") final long key) {
        return tree.get(key, 0);
    }

    @Operation
    public long remove(@Param(name = "key") final long key) {
        return tree.remove(key, 0);
    }

    @Operation
    public boolean removeIfEquals(@Param(name = "key") final long key, @Param(name = "value") final long expected) {
        return tree.removeIfEquals(key, expected);
    }

    /** The sequential specification: a TreeMap with the same operations (0: absent). */
    public static final class Spec {
        private final TreeMap<Long, Long> map = new TreeMap<>();

        public long put(final long key, final long value) {
            final Long old = map.put(key, value);
            return old == null ? 0 : old;
        }

        public boolean putIfAbsent(final long key, final long value) {
            return map.putIfAbsent(key, value) == null;
        }

        public boolean replace(final long key, final long expected, final long value) {
            return map.replace(key, expected, value);
        }

        public long get(final long key) {
            final Long v = map.get(key);
            return v == null ? 0 : v;
        }

        public long remove(final long key) {
            final Long old = map.remove(key);
            return old == null ? 0 : old;
        }

        public boolean removeIfEquals(final long key, final long expected) {
            return map.remove(key, expected);
        }
    }

    private static void check(final Scheme scheme) {
        domain = ReclaimDomain.builder(scheme).allocator(ALLOC).recordBytes(BrownAbTree.recordBytes(DEGREE))
                .slots(BrownAbTree.SLOTS).build();
        try {
            LincheckStress.check(BrownAbTreeLincheckTest.class, Spec.class, CREATED, domain);
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
