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

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Lincheck (stress mode) linearizability test of {@link CdrcNatarajanMittalTree} on one poisoning
 * allocator and {@link Cdrc} domain, against {@link NatarajanMittalTreeLincheckTest.Spec} (a
 * {@link java.util.TreeMap}). Instances alternate between the two modes (snapshots, counted loads
 * only). Keys 1..5, values 1..3, so that operations collide. Afterwards every instance is closed,
 * then the domain, and the allocator's bytes in use are back at the baseline.
 */
@Param(name = "key", gen = LongGen.class, conf = "1:5")
@Param(name = "value", gen = LongGen.class, conf = "1:3")
public class CdrcNatarajanMittalTreeLincheckTest {

    static final LimboAllocator ALLOC = LimboAllocator.builder().debug(true).build();
    static final long BASELINE = ALLOC.stats().bytesInUse();
    static final Cdrc RC = new Cdrc(ALLOC);
    static final Queue<StructureLifecycle> CREATED = new ConcurrentLinkedQueue<>();
    static final AtomicLong INSTANCES = new AtomicLong();

    private final CdrcNatarajanMittalTree tree =
            new CdrcNatarajanMittalTree(RC, (INSTANCES.getAndIncrement() & 1) == 0);

    public CdrcNatarajanMittalTreeLincheckTest() {
        CREATED.add(tree);
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

    @Test
    void linearizable() {
        LincheckStress.check(getClass(), NatarajanMittalTreeLincheckTest.Spec.class, CREATED, RC::close);
        ALLOC.trim();
        assertEquals(BASELINE, ALLOC.stats().bytesInUse(), "bytes in use after closing every tree and the domain");
    }
}
