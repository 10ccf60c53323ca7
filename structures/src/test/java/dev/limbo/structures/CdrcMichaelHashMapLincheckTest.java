package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.rc.Cdrc;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Lincheck (stress mode) linearizability test of {@link CdrcMichaelHashMap} (2 buckets, so that keys share them) against a
 * {@link HashMap} specification; Lincheck's instances alternate between the two modes (snapshots,
 * counted loads). Keys 1..5, values 1..3, so that operations collide. Every instance Lincheck
 * creates is closed after the check, then the domain.
 */
@Param(name = "key", gen = LongGen.class, conf = "1:5")
@Param(name = "value", gen = LongGen.class, conf = "1:3")
public class CdrcMichaelHashMapLincheckTest {

    static final Cdrc RC = new Cdrc(LimboAllocator.create());
    static final Queue<StructureLifecycle> CREATED = new ConcurrentLinkedQueue<>();
    static final AtomicLong INSTANCES = new AtomicLong();

    private final CdrcMichaelHashMap map = new CdrcMichaelHashMap(RC, 2, INSTANCES.getAndIncrement() % 2 == 0);

    public CdrcMichaelHashMapLincheckTest() {
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

    @Test
    void linearizable() {
        LincheckStress.check(getClass(), MichaelHashMapLincheckTest.Spec.class, CREATED, RC);
    }
}
