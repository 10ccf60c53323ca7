package dev.limbo.bench.cdrc;

import dev.limbo.bench.structures.StructureBenchmark;
import dev.limbo.structures.CdrcHarrisMichaelList;
import dev.limbo.structures.CdrcMichaelHashMap;
import dev.limbo.structures.MichaelHashMap;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * CDRC's hash table benchmark (PLDI '21 §7.2, Figure 7b; digest §6.3, B4): Michael's hash map
 * prefilled with {@value #KEYS} keys drawn uniformly from {@code [0, }{@value #RANGE}{@code )},
 * then {@code updatePercent} updates (half insert, half remove) and lookups for the rest.
 * {@value #BUCKETS} buckets: both maps take a power of two, and 2^17 is the one nearest the
 * paper's load factor 1 from below (0.76; {@code structures.HashMapBench.cdrc} has the same shape).
 * {@code scheme}: {@link CdrcMichaelHashMap} with snapshots ({@code cdrc}) or counted loads only
 * ({@code cdrc-rc}), or {@link MichaelHashMap} over a manual scheme. The space overhead
 * ({@link SpaceGauges}) is reported next to the throughput.
 */
public class CdrcHashMap extends StructureBenchmark {

    static final int KEYS = 100_000;
    static final int RANGE = 2 * KEYS;
    static final int BUCKETS = 1 << 17;

    @State(Scope.Benchmark)
    public static class Map {
        @Param({"10"})
        public int updatePercent;

        MichaelHashMap manual;
        CdrcMichaelHashMap counted;

        @Setup(Level.Trial)
        public void create(final CdrcScheme s) {
            if (s.counted()) {
                counted = new CdrcMichaelHashMap(s.rc, BUCKETS, s.snapshots());
            } else {
                manual = new MichaelHashMap(s.domain(24, 3), BUCKETS);
            }
            final Rng rng = new Rng(42);
            int size = 0;
            while (size < KEYS) {
                if (insert(rng.nextInt(RANGE))) {
                    size++;
                }
            }
            s.baseline(size, 1, CdrcHarrisMichaelList.NODE.bytes()); // the buckets are lists
        }

        boolean insert(final long key) {
            return counted != null ? counted.putIfAbsent(key, key) == CdrcMichaelHashMap.RESERVED
                    : manual.putIfAbsent(key, key) == MichaelHashMap.RESERVED;
        }

        boolean remove(final long key) {
            return counted != null ? counted.remove(key) != CdrcMichaelHashMap.RESERVED
                    : manual.remove(key) != MichaelHashMap.RESERVED;
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
    public boolean operation(final Map map, final CdrcScheme s, final Worker w, final SpaceGauges gauges) {
        final int r = w.rng.nextInt(100);
        final long key = w.rng.nextInt(RANGE);
        if (r < map.updatePercent / 2) {
            final boolean inserted = map.insert(key);
            if (inserted) {
                s.added(w.slot, 1);
            }
            return inserted;
        }
        if (r < map.updatePercent) {
            final boolean removed = map.remove(key);
            if (removed) {
                s.added(w.slot, -1);
            }
            return removed;
        }
        return map.contains(key);
    }
}
