package dev.limbo.index;

import com.google.common.collect.testing.SampleElements;
import com.google.common.collect.testing.TestMapGenerator;
import com.google.common.collect.testing.TestSortedMapGenerator;
import dev.limbo.allocator.LimboAllocator;
import java.util.AbstractMap;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;

/**
 * Guava testlib's generator of {@code Map<Long, Long>} views: each {@link #create} makes a fresh
 * map of the {@link IndexMap} chosen by {@link #use} (missing value 0, which one sample value equals, so the views' exact reads are
 * exercised) and fills its {@code asNavigableMap()} or {@code asMap()} view. After each test
 * {@link #recycle} clears the maps a test made and keeps them for the next tests; {@link #closeAll}
 * closes them. Sample keys include 0 and -1; the keys below
 * and above the samples are {@link Long#MIN_VALUE} and {@link Long#MAX_VALUE} and their neighbours.
 */
class LongMapGenerator implements TestMapGenerator<Long, Long> {

    private final LimboAllocator allocator;
    private final List<LongLongMap> made = new ArrayList<>();
    private final Deque<LongLongMap> spare = new ArrayDeque<>();
    private IndexMap kind;

    /** Generates {@code asMap()} views. */
    LongMapGenerator(LimboAllocator allocator) {
        this.allocator = allocator;
    }

    /**
     * Chooses the map that {@link #create} makes from now on: a suite built once runs over each map
     * in turn (building a testlib suite costs about as much as running it).
     */
    synchronized void use(IndexMap map) {
        if (kind != map) {
            closeAll();
            kind = map;
        }
    }

    /** Generates {@code asNavigableMap()} views of an ordered map. */
    static final class Navigable extends LongMapGenerator implements TestSortedMapGenerator<Long, Long> {

        Navigable(LimboAllocator allocator) {
            super(allocator);
        }

        @Override
        Map<Long, Long> view(LongLongMap map) {
            return ((LongLongNavigableMap) map).asNavigableMap();
        }

        @Override
        public SortedMap<Long, Long> create(Object... entries) {
            return (SortedMap<Long, Long>) super.create(entries);
        }

        @Override
        public Map.Entry<Long, Long> belowSamplesLesser() {
            return entry(Long.MIN_VALUE, 11);
        }

        @Override
        public Map.Entry<Long, Long> belowSamplesGreater() {
            return entry(Long.MIN_VALUE + 1, 12);
        }

        @Override
        public Map.Entry<Long, Long> aboveSamplesLesser() {
            return entry(Long.MAX_VALUE - 1, 13);
        }

        @Override
        public Map.Entry<Long, Long> aboveSamplesGreater() {
            return entry(Long.MAX_VALUE, 14);
        }
    }

    Map<Long, Long> view(LongLongMap map) {
        return map.asMap();
    }

    static Map.Entry<Long, Long> entry(long key, long value) {
        return new AbstractMap.SimpleImmutableEntry<>(key, value);
    }

    @Override
    public SampleElements<Map.Entry<Long, Long>> samples() {
        return new SampleElements<>(entry(-1000, 0), entry(-1, Long.MIN_VALUE), entry(0, -1),
                entry(1, Long.MAX_VALUE), entry(1L << 40, 7));
    }

    /** A cleared map of the chosen kind: a spare one when there is one (making maps is most of the suites' cost). */
    @Override
    public synchronized Map<Long, Long> create(Object... entries) {
        final LongLongMap map = spare.isEmpty() ? kind.create(allocator, 0) : spare.pop();
        made.add(map);
        final Map<Long, Long> view = view(map);
        for (Object o : entries) {
            @SuppressWarnings("unchecked")
            final Map.Entry<Long, Long> e = (Map.Entry<Long, Long>) o;
            view.put(e.getKey(), e.getValue());
        }
        return view;
    }

    /** After a test: clears the maps it made and keeps them as spares. */
    synchronized void recycle() {
        for (LongLongMap map : made) {
            map.clear();
            spare.push(map);
        }
        made.clear();
    }

    /** Closes every map this generator made. */
    synchronized void closeAll() {
        made.forEach(LongLongMap::close);
        made.clear();
        spare.forEach(LongLongMap::close);
        spare.clear();
    }

    @Override
    @SuppressWarnings("unchecked")
    public Map.Entry<Long, Long>[] createArray(int length) {
        return (Map.Entry<Long, Long>[]) new Map.Entry<?, ?>[length];
    }

    @Override
    public Iterable<Map.Entry<Long, Long>> order(List<Map.Entry<Long, Long>> insertionOrder) {
        final List<Map.Entry<Long, Long>> sorted = new ArrayList<>(insertionOrder);
        sorted.sort(Map.Entry.comparingByKey(Comparator.naturalOrder()));
        return sorted;
    }

    @Override
    public Long[] createKeyArray(int length) {
        return new Long[length];
    }

    @Override
    public Long[] createValueArray(int length) {
        return new Long[length];
    }
}
