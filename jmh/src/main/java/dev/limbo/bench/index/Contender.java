package dev.limbo.bench.index;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.index.OffHeapLongHashMap;
import dev.limbo.reclaim.Scheme;
import net.openhft.chronicle.map.ChronicleMap;
import org.jctools.maps.NonBlockingHashMapLong;
import org.mapdb.BTreeMap;
import org.mapdb.DB;
import org.mapdb.DBMaker;
import org.mapdb.HTreeMap;
import org.mapdb.Serializer;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * A contender of {@link IndexBench}: a library's concurrent {@code long -> long} map in its
 * recommended configuration ({@link Library#settings()}). Ids are the {@link Library} ids; a Limbo
 * map with another scheme than its builder's default is {@code limbo-ordered-<scheme>} or
 * {@code limbo-hash-<scheme>} (e.g. {@code limbo-ordered-hp}).
 *
 * @param id      the contender's id
 * @param library its library
 * @param scheme  the reclamation scheme of a Limbo map, or null for the builder's default
 */
public record Contender(String id, Library library, Scheme scheme) {

    /** The maps and their settings. Versions are those of jmh/pom.xml. */
    public enum Library {
        /** Limbo's ordered map. */
        LIMBO_ORDERED("limbo-ordered", true, "Limbo 0.1.0-SNAPSHOT `OffHeapLongMap`",
                "`OffHeapLongMap.builder()` defaults (scheme, node degree), an allocator of its own"),
        /** Limbo's hash map. */
        LIMBO_HASH("limbo-hash", false, "Limbo 0.1.0-SNAPSHOT `OffHeapLongHashMap`",
                "`OffHeapLongHashMap.builder()` defaults (scheme), `initialCapacity(keys / 2)`, an allocator of its own"),
        /** The JDK's skip list. */
        CSLM("cslm", true, "JDK `ConcurrentSkipListMap<Long, Long>`", "`new ConcurrentSkipListMap<>()`"),
        /** The JDK's hash map. */
        CHM("chm", false, "JDK `ConcurrentHashMap<Long, Long>`", "`new ConcurrentHashMap<>(keys / 2)`"),
        /** JCTools' hash map with primitive keys. */
        NBHML("nbhml", false, "JCTools 4.0.5 `NonBlockingHashMapLong<Long>`", "`new NonBlockingHashMapLong<>(keys / 2)`"),
        /** Chronicle's off-heap hash map. */
        CHRONICLE("chronicle", false, "Chronicle Map 3.25ea6 `ChronicleMap<Long, Long>`",
                "`ChronicleMap.of(Long.class, Long.class).entries(keys / 2).maxBloatFactor(2).create()` (in memory, "
                        + "no file); its JDK 17+ `--add-opens`/`--add-exports` in the fork's JVM arguments"),
        /** MapDB's B-tree in direct memory. */
        MAPDB_BTREE("mapdb-btree", true, "MapDB 3.1.0 `BTreeMap<Long, Long>`",
                "`DBMaker.memoryDirectDB().make().treeMap(name, Serializer.LONG, Serializer.LONG).createOrOpen()`"),
        /** MapDB's hash tree in direct memory. */
        MAPDB_HTREE("mapdb-htree", false, "MapDB 3.1.0 `HTreeMap<Long, Long>`",
                "`DBMaker.memoryDirectDB().make().hashMap(name, Serializer.LONG, Serializer.LONG).createOrOpen()`");

        private final String id;
        private final boolean ordered;
        private final String title;
        private final String settings;

        Library(final String id, final boolean ordered, final String title, final String settings) {
            this.id = id;
            this.ordered = ordered;
            this.title = title;
            this.settings = settings;
        }

        public String id() {
            return id;
        }

        /** Whether the map is ordered (it runs the scan mix). */
        public boolean ordered() {
            return ordered;
        }

        /** The library, its version and the class. */
        public String title() {
            return title;
        }

        /** How the benchmark builds the map. */
        public String settings() {
            return settings;
        }

        /** Whether it is one of Limbo's maps (their forks get a 1 GiB heap from the bench command). */
        public boolean limbo() {
            return this == LIMBO_ORDERED || this == LIMBO_HASH;
        }
    }

    /** The contender of {@code id}: a {@link Library} id, or a Limbo map's id with a scheme id after it. */
    public static Contender of(final String id) {
        for (final Library l : Library.values()) {
            if (l.id.equals(id)) {
                return new Contender(id, l, null);
            }
            if (l.limbo() && id.startsWith(l.id + "-")) {
                return new Contender(id, l, Scheme.of(id.substring(l.id.length() + 1)));
            }
        }
        throw new IllegalArgumentException("unknown contender '" + id + "'; known: "
                + Arrays.stream(Library.values()).map(Library::id).toList()
                + ", or limbo-ordered-<scheme> and limbo-hash-<scheme>");
    }

    /** Whether the contender's map is ordered. */
    public boolean ordered() {
        return library.ordered;
    }

    /** A new, empty map for keys in {@code [0, keys)} that will hold about {@code keys / 2} of them. */
    public IndexAdapter create(final int keys) {
        final int expected = Math.max(1, keys / 2);
        return switch (library) {
            case LIMBO_ORDERED -> LimboOrderedAdapter.create(scheme);
            case LIMBO_HASH -> {
                final LimboAllocator allocator = LimboAllocator.create();
                final OffHeapLongHashMap.Builder b = OffHeapLongHashMap.builder().allocator(allocator)
                        .missingValue(IndexAdapter.MISSING).initialCapacity(expected);
                yield new LimboMapAdapter(allocator, (scheme == null ? b : b.scheme(scheme)).build());
            }
            case CSLM -> {
                final ConcurrentSkipListMap<Long, Long> m = new ConcurrentSkipListMap<>();
                yield new NavigableMapAdapter(m, () -> 0, m::clear);
            }
            case CHM -> {
                final ConcurrentHashMap<Long, Long> m = new ConcurrentHashMap<>(expected);
                yield new BoxedMapAdapter(m, () -> 0, m::clear);
            }
            case NBHML -> new NbhmlAdapter(new NonBlockingHashMapLong<>(expected));
            case CHRONICLE -> {
                final ChronicleMap<Long, Long> m = ChronicleMap.of(Long.class, Long.class).name("index-bench")
                        .entries(expected).maxBloatFactor(2).create();
                yield new BoxedMapAdapter(m, m::offHeapMemoryUsed, m::close);
            }
            case MAPDB_BTREE -> {
                final long base = directBytes();
                final DB db = DBMaker.memoryDirectDB().make();
                final BTreeMap<Long, Long> m = db.treeMap("index-bench", Serializer.LONG, Serializer.LONG).createOrOpen();
                yield new NavigableMapAdapter(m, () -> directBytes() - base, db::close);
            }
            case MAPDB_HTREE -> {
                final long base = directBytes();
                final DB db = DBMaker.memoryDirectDB().make();
                final HTreeMap<Long, Long> m = db.hashMap("index-bench", Serializer.LONG, Serializer.LONG).createOrOpen();
                yield new BoxedMapAdapter(m, () -> directBytes() - base, db::close);
            }
        };
    }

    /**
     * The JVM's direct buffer bytes: MapDB's direct memory store allocates direct byte buffers, so
     * its memory is what this grew by since the map was made.
     */
    static long directBytes() {
        for (final BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (pool.getName().toLowerCase(Locale.ROOT).equals("direct")) {
                return pool.getMemoryUsed();
            }
        }
        return 0;
    }
}
