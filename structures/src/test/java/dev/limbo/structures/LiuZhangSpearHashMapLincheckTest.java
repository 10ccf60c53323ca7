package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Scheme;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Lincheck (stress mode) linearizability test of {@link LiuZhangSpearHashMap} over an HP domain,
 * against a {@link HashMap} specification. Keys 1..6 and thresholds that make the map grow past
 * one bucket per key and shrink back to one (grow when an insert leaves 2 keys in its bucket and
 * there is more than 1 key per bucket, shrink below half a key per bucket), so that scenarios run
 * across resizes, bucket migrations and retired tables; values 1..3. Every instance Lincheck
 * creates is closed after the check, then the domain.
 */
@Param(name = "key", gen = LongGen.class, conf = "1:6")
@Param(name = "value", gen = LongGen.class, conf = "1:3")
public class LiuZhangSpearHashMapLincheckTest {

    static final LimboAllocator ALLOC = LimboAllocator.create();
    static final ReclaimDomain DOMAIN = Kind.LZS_HASH_MAP.domain(Scheme.HP, ALLOC, false, 0);
    static final Queue<OffHeapStructure> CREATED = new ConcurrentLinkedQueue<>();

    private final LiuZhangSpearHashMap map = new LiuZhangSpearHashMap(DOMAIN, 0, 1, 0.5, 2);

    public LiuZhangSpearHashMapLincheckTest() {
        CREATED.add(map);
    }

    @Operation
    public boolean putIfAbsent(@Param(name = "key") final long key, @Param(name = "value") final long value) {
        return map.putIfAbsent(key, value);
    }

    @Operation
    public long put(@Param(name = "key") final long key, @Param(name = "value") final long value) {
        return map.put(key, value, 0);
    }

    @Operation
    public boolean replace(@Param(name = "key") final long key, @Param(name = "value") final long value) {
        return map.replace(key, 2, value);
    }

    @Operation
    public long get(@Param(name = "key") final long key) {
        return map.getOrDefault(key, 0);
    }

    @Operation
    public long remove(@Param(name = "key") final long key) {
        return map.remove(key, 0);
    }

    @Operation
    public boolean removeIfEquals(@Param(name = "key") final long key, @Param(name = "value") final long value) {
        return map.removeIfEquals(key, value);
    }

    /** The sequential specification: a HashMap with the same operations (0 for absent). */
    public static final class Spec {
        private final HashMap<Long, Long> model = new HashMap<>();

        public boolean putIfAbsent(final long key, final long value) {
            return model.putIfAbsent(key, value) == null;
        }

        public long put(final long key, final long value) {
            return Objects.requireNonNullElse(model.put(key, value), 0L);
        }

        public boolean replace(final long key, final long value) {
            return model.replace(key, 2L, value);
        }

        public long get(final long key) {
            return model.getOrDefault(key, 0L);
        }

        public long remove(final long key) {
            return Objects.requireNonNullElse(model.remove(key), 0L);
        }

        public boolean removeIfEquals(final long key, final long value) {
            return model.remove(key, value);
        }
    }

    @Test
    void linearizable() {
        LincheckStress.check(getClass(), Spec.class, CREATED, DOMAIN);
    }
}
