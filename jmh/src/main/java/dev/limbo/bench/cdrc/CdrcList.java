package dev.limbo.bench.cdrc;

import dev.limbo.bench.structures.StructureBenchmark;
import dev.limbo.structures.CdrcHarrisMichaelList;
import dev.limbo.structures.HarrisMichaelList;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * CDRC's list benchmark (PLDI '21 §7.2, Figure 7a; digest §6.3, B3): a Harris-Michael list set
 * prefilled with {@value #KEYS} keys drawn uniformly from {@code [0, }{@value #RANGE}{@code )},
 * then {@code updatePercent} updates (half insert, half remove) and lookups for the rest.
 * {@code scheme}: {@link CdrcHarrisMichaelList} with snapshots ({@code cdrc}) or counted loads
 * only ({@code cdrc-rc}), or {@link HarrisMichaelList} over a manual scheme. The space overhead
 * ({@link SpaceGauges}) is reported next to the throughput.
 */
public class CdrcList extends StructureBenchmark {

    static final int KEYS = 1_000;
    static final int RANGE = 2 * KEYS;

    @State(Scope.Benchmark)
    public static class Set {
        @Param({"10"})
        public int updatePercent;

        HarrisMichaelList manual;
        CdrcHarrisMichaelList counted;

        @Setup(Level.Trial)
        public void create(final CdrcScheme s) {
            if (s.counted()) {
                counted = new CdrcHarrisMichaelList(s.rc, s.snapshots());
            } else {
                manual = new HarrisMichaelList(s.domain(24, 3));
            }
            final Rng rng = new Rng(42);
            int size = 0;
            while (size < KEYS) {
                if (insert(rng.nextInt(RANGE))) {
                    size++;
                }
            }
            s.baseline(size, 1, CdrcHarrisMichaelList.NODE.bytes());
        }

        boolean insert(final long key) {
            return counted != null ? counted.insert(key) : manual.insert(key);
        }

        boolean remove(final long key) {
            return counted != null ? counted.remove(key) != CdrcHarrisMichaelList.RESERVED
                    : manual.remove(key) != HarrisMichaelList.RESERVED;
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
    public boolean operation(final Set set, final CdrcScheme s, final Worker w, final SpaceGauges gauges) {
        final int r = w.rng.nextInt(100);
        final long key = w.rng.nextInt(RANGE);
        if (r < set.updatePercent / 2) {
            final boolean inserted = set.insert(key);
            if (inserted) {
                s.added(w.slot, 1);
            }
            return inserted;
        }
        if (r < set.updatePercent) {
            final boolean removed = set.remove(key);
            if (removed) {
                s.added(w.slot, -1);
            }
            return removed;
        }
        return set.contains(key);
    }
}
