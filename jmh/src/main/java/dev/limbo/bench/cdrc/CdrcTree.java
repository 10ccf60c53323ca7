package dev.limbo.bench.cdrc;

import dev.limbo.bench.structures.StructureBenchmark;
import dev.limbo.structures.CdrcNatarajanMittalTree;
import dev.limbo.structures.NatarajanMittalTree;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * CDRC's Natarajan-Mittal tree benchmark (PLDI '21 §7.2, Figures 7c-7f; digest §6.3, B5): a tree
 * prefilled with {@code keys} keys drawn uniformly from {@code [0, 2 x keys)}, then
 * {@code updatePercent} updates (half insert, half remove) and lookups for the rest, keys drawn
 * from the same range. {@code scheme}: {@link CdrcNatarajanMittalTree} with snapshots
 * ({@code cdrc}) or counted loads only ({@code cdrc-rc}), or {@link NatarajanMittalTree} over a
 * manual scheme. The space overhead ({@link SpaceGauges}) is reported next to the throughput.
 *
 * <p>Declared: the paper's 10^5 keys at 1, 10 and 50 % updates (Figures 7e, 7c, 7f). The large
 * tree (Figure 7d: 10^8 keys, here 10^7) runs at 10 % with {@code -p keys=10000000 -p
 * updatePercent=10}; the bench command's full suite runs it, its quick suite does not (its
 * prefill takes tens of seconds per fork).
 */
public class CdrcTree extends StructureBenchmark {

    /** Nodes per key: a leaf and the internal node that routes to it. */
    static final int NODES_PER_KEY = 2;

    @State(Scope.Benchmark)
    public static class Tree {
        @Param({"100000"})
        public int keys;

        @Param({"1", "10", "50"})
        public int updatePercent;

        int range;
        NatarajanMittalTree manual;
        CdrcNatarajanMittalTree counted;

        @Setup(Level.Trial)
        public void create(final CdrcScheme s) {
            if (s.counted()) {
                counted = new CdrcNatarajanMittalTree(s.rc, s.snapshots());
            } else {
                manual = new NatarajanMittalTree(s.domain(NatarajanMittalTree.NODE_BYTES, NatarajanMittalTree.SLOTS));
            }
            range = 2 * keys;
            final Rng rng = new Rng(42);
            int size = 0;
            while (size < keys) {
                if (insert(rng.nextInt(range))) {
                    size++;
                }
            }
            s.baseline(size, NODES_PER_KEY, CdrcNatarajanMittalTree.NODE_BYTES);
        }

        boolean insert(final long key) {
            return counted != null ? counted.insert(key, key) : manual.insert(key, key);
        }

        boolean remove(final long key) {
            return counted != null ? counted.remove(key) != CdrcNatarajanMittalTree.RESERVED
                    : manual.remove(key) != NatarajanMittalTree.RESERVED;
        }

        boolean contains(final long key) {
            return counted != null ? counted.contains(key) : manual.contains(key);
        }

        @TearDown(Level.Trial)
        public void close(final CdrcScheme s) {
            s.close(() -> {
                if (counted != null) {
                    counted.close();
                } else {
                    manual.close();
                }
            });
        }
    }

    @Benchmark
    public boolean operation(final Tree tree, final CdrcScheme s, final Worker w, final SpaceGauges gauges) {
        final int r = w.rng.nextInt(100);
        final long key = w.rng.nextInt(tree.range);
        if (r < tree.updatePercent / 2) {
            final boolean inserted = tree.insert(key);
            if (inserted) {
                s.added(w.slot, 1);
            }
            return inserted;
        }
        if (r < tree.updatePercent) {
            final boolean removed = tree.remove(key);
            if (removed) {
                s.added(w.slot, -1);
            }
            return removed;
        }
        return tree.contains(key);
    }
}
