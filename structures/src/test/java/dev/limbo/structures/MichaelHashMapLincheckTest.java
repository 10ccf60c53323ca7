package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Scheme;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Lincheck (stress mode) linearizability test of {@link MichaelHashMap} over a DEBRA domain,
 * against a {@link HashMap} specification. Two buckets and keys 1..5, so that buckets hold several
 * keys and operations collide; values 1..3. Every instance Lincheck creates is closed after the
 * check, then the domain.
 */
@Param(name = "key", gen = LongGen.class, conf = "1:5")
@Param(name = "value", gen = LongGen.class, conf = "1:3")
public class MichaelHashMapLincheckTest {

    static final LimboAllocator ALLOC = LimboAllocator.create();
    static final ReclaimDomain DOMAIN = LongMapChecks.domain(Scheme.DEBRA, ALLOC, false);
    static final Queue<OffHeapStructure> CREATED = new ConcurrentLinkedQueue<>();

    private final MichaelHashMap map = new MichaelHashMap(DOMAIN, 2);

    public MichaelHashMapLincheckTest() {
        CREATED.add(map);
    }

    @Operation
    public long putIfAbsent(@Param(name = "key") final long key, @Param(name = "value") final long value) {
        return map.putIfAbsent(key, value);
    }

    @Operation
    public long put(@Param(name = "key") final long key, @Param(name = "value") final long value) {
        return map.put(key, value);
    }

    @Operation
    public long get(@Param(name = "key") final long key) {
        return map.get(key);
    }

    @Operation
    public boolean contains(@Param(name = "key") final long key) {
        return map.contains(key);
    }

    @Operation
    public long remove(@Param(name = "key") final long key) {
        return map.remove(key);
    }

    /** The sequential specification: a HashMap with the same operations. */
    public static final class Spec {
        private final HashMap<Long, Long> model = new HashMap<>();

        public long putIfAbsent(final long key, final long value) {
            return LongMapChecks.orReserved(model.putIfAbsent(key, value));
        }

        public long put(final long key, final long value) {
            return LongMapChecks.orReserved(model.put(key, value));
        }

        public long get(final long key) {
            return LongMapChecks.orReserved(model.get(key));
        }

        public boolean contains(final long key) {
            return model.containsKey(key);
        }

        public long remove(final long key) {
            return LongMapChecks.orReserved(model.remove(key));
        }
    }

    @Test
    void linearizable() {
        LincheckStress.check(getClass(), Spec.class, CREATED, DOMAIN);
    }
}
