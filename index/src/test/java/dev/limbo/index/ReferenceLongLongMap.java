package dev.limbo.index;

import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.LongBinaryOperator;

/**
 * A test double: {@link LongLongNavigableMap} over a {@link ConcurrentSkipListMap}, with the
 * contracts' semantics (missing value, inclusive flags, empty ranges), so that the views and the
 * map-level contract tests can run over a map whose correctness is not in question. Its off-heap
 * numbers are zero.
 */
final class ReferenceLongLongMap implements LongLongNavigableMap {

    private final ConcurrentSkipListMap<Long, Long> map = new ConcurrentSkipListMap<>();
    private final long missing;
    private volatile boolean closed;

    ReferenceLongLongMap(long missing) {
        this.missing = missing;
    }

    private ConcurrentSkipListMap<Long, Long> open() {
        if (closed) {
            throw new IllegalStateException("closed");
        }
        return map;
    }

    @Override
    public long missingValue() {
        return missing;
    }

    @Override
    public long get(long key) {
        return open().getOrDefault(key, missing);
    }

    @Override
    public long getOrDefault(long key, long defaultValue) {
        return open().getOrDefault(key, defaultValue);
    }

    @Override
    public boolean containsKey(long key) {
        return open().containsKey(key);
    }

    @Override
    public long put(long key, long value) {
        final Long old = open().put(key, value);
        return old == null ? missing : old;
    }

    @Override
    public boolean putIfAbsent(long key, long value) {
        return open().putIfAbsent(key, value) == null;
    }

    @Override
    public boolean replace(long key, long value) {
        return open().replace(key, value) != null;
    }

    @Override
    public boolean replace(long key, long expectedValue, long newValue) {
        return open().replace(key, expectedValue, newValue);
    }

    @Override
    public long remove(long key) {
        final Long old = open().remove(key);
        return old == null ? missing : old;
    }

    @Override
    public boolean remove(long key, long expectedValue) {
        return open().remove(key, expectedValue);
    }

    @Override
    public long compute(long key, LongRemappingFunction function) {
        return open().compute(key, (k, old) -> function.apply(k, old != null, old == null ? missing : old));
    }

    @Override
    public long merge(long key, long value, LongBinaryOperator function) {
        return open().merge(key, value, (a, b) -> function.applyAsLong(a, b));
    }

    @Override
    public long scan(LongLongPredicate visitor) {
        return scan(Long.MIN_VALUE, true, Long.MAX_VALUE, true, false, visitor);
    }

    @Override
    public long size() {
        return open().size();
    }

    @Override
    public boolean isEmpty() {
        return open().isEmpty();
    }

    @Override
    public void clear() {
        open().clear();
    }

    @Override
    public IndexStats stats() {
        return new IndexStats(size(), 0, 0, "reference");
    }

    @Override
    public ConcurrentMap<Long, Long> asMap() {
        return new LongLongMapView(this);
    }

    @Override
    public ConcurrentNavigableMap<Long, Long> asNavigableMap() {
        return new LongLongNavigableMapView(this);
    }

    @Override
    public void close() {
        closed = true;
    }

    private static boolean hand(Map.Entry<Long, Long> e, LongLongConsumer action) {
        if (e == null) {
            return false;
        }
        action.accept(e.getKey(), e.getValue());
        return true;
    }

    @Override
    public boolean floor(long key, LongLongConsumer action) {
        return hand(open().floorEntry(key), action);
    }

    @Override
    public boolean ceiling(long key, LongLongConsumer action) {
        return hand(open().ceilingEntry(key), action);
    }

    @Override
    public boolean lower(long key, LongLongConsumer action) {
        return hand(open().lowerEntry(key), action);
    }

    @Override
    public boolean higher(long key, LongLongConsumer action) {
        return hand(open().higherEntry(key), action);
    }

    @Override
    public boolean first(LongLongConsumer action) {
        return hand(open().firstEntry(), action);
    }

    @Override
    public boolean last(LongLongConsumer action) {
        return hand(open().lastEntry(), action);
    }

    @Override
    public long firstKey() {
        return open().firstKey();
    }

    @Override
    public long lastKey() {
        return open().lastKey();
    }

    private NavigableMap<Long, Long> range(long from, boolean fromInclusive, long to, boolean toInclusive,
            boolean descending) {
        if (from > to || (from == to && !(fromInclusive && toInclusive))) {
            return new ConcurrentSkipListMap<>();
        }
        final NavigableMap<Long, Long> r = open().subMap(from, fromInclusive, to, toInclusive);
        return descending ? r.descendingMap() : r;
    }

    @Override
    public long scan(long from, boolean fromInclusive, long to, boolean toInclusive, boolean descending,
            LongLongPredicate visitor) {
        long visited = 0;
        for (Map.Entry<Long, Long> e : range(from, fromInclusive, to, toInclusive, descending).entrySet()) {
            visited++;
            if (!visitor.test(e.getKey(), e.getValue())) {
                break;
            }
        }
        return visited;
    }

    @Override
    public LongLongCursor cursor(long from, boolean fromInclusive, long to, boolean toInclusive,
            boolean descending) {
        final Iterator<Map.Entry<Long, Long>> it =
                range(from, fromInclusive, to, toInclusive, descending).entrySet().iterator();
        return new LongLongCursor() {
            private Map.Entry<Long, Long> current;
            private boolean closed;

            @Override
            public boolean next() {
                current = !closed && it.hasNext() ? it.next() : null;
                return current != null;
            }

            @Override
            public long key() {
                return entry().getKey();
            }

            @Override
            public long value() {
                return entry().getValue();
            }

            private Map.Entry<Long, Long> entry() {
                if (current == null) {
                    throw new IllegalStateException("no current entry");
                }
                return current;
            }

            @Override
            public void close() {
                closed = true;
                current = null;
            }
        };
    }
}
