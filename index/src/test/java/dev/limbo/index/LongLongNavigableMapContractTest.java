package dev.limbo.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.index.LongLongMapContractTest.Churn;
import dev.limbo.index.LongLongMapContractTest.KeyClasses;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NoSuchElementException;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentNavigableMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The {@link LongLongNavigableMap} contract, over every ordered map of {@link IndexMap#all()}:
 * seeded sequential operations against {@link TreeMap} with navigation, range scans and cursors in
 * both directions and with every combination of inclusive bounds, the navigable view's navigation
 * and sub-maps, and the weak consistency of scans, cursors and view iterators under concurrent
 * updates. Every test ends with the allocator back at its baseline after close.
 */
final class LongLongNavigableMapContractTest {

    static List<IndexMap> maps() {
        return IndexMap.orderedMaps();
    }

    /** Records what a navigation handed over. */
    private static final class Found implements LongLongConsumer {
        long key;
        long value;
        int calls;

        @Override
        public void accept(long k, long v) {
            key = k;
            value = v;
            calls++;
        }

        /** Checks a navigation's answer against the model's entry. */
        void check(Map.Entry<Long, Long> expected, boolean answered, String what) {
            assertEquals(expected != null, answered, what);
            assertEquals(answered ? 1 : 0, calls, () -> what + ": the action runs once per entry found");
            if (expected != null) {
                assertEquals(expected.getKey(), key, what);
                assertEquals(expected.getValue(), value, what);
            }
        }
    }

    /** The model's entries of a range, per the contract's bounds (empty when from > to, or equal with an exclusive end). */
    static List<Map.Entry<Long, Long>> range(NavigableMap<Long, Long> model, long from, boolean fromInclusive,
            long to, boolean toInclusive, boolean descending) {
        if (from > to || (from == to && !(fromInclusive && toInclusive))) {
            return List.of();
        }
        final NavigableMap<Long, Long> sub = model.subMap(from, fromInclusive, to, toInclusive);
        return new ArrayList<>((descending ? sub.descendingMap() : sub).entrySet());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("maps")
    void sequentialAgainstTreeMap(IndexMap kind) {
        final long missing = 0;
        final MapFixture f = new MapFixture(kind, missing);
        final LongLongNavigableMap map = f.ordered();
        final ConcurrentNavigableMap<Long, Long> view = map.asNavigableMap();
        final TreeMap<Long, Long> model = new TreeMap<>();
        final Random rnd = new Random(18_300);
        final long[] keys = LongLongMapContractTest.keyPool(rnd, 200);
        final long[] values = LongLongMapContractTest.valuePool(rnd, missing);
        for (int i = 0; i < 100_000; i++) {
            final long k = keys[rnd.nextInt(keys.length)];
            final long q = rnd.nextInt(4) == 0 ? rnd.nextLong() : keys[rnd.nextInt(keys.length)] + rnd.nextInt(3) - 1;
            final long v = values[rnd.nextInt(values.length)];
            final int op = rnd.nextInt(40);
            final String what = "op " + i + " (" + op + ") key " + k + " query " + q;
            final Found found = new Found();
            switch (op) {
                case 0, 1, 2, 3 -> {
                    final Long old = model.put(k, v);
                    assertEquals(old == null ? missing : old, map.put(k, v), what);
                }
                case 4, 5 -> {
                    final Long old = model.remove(k);
                    assertEquals(old == null ? missing : old, map.remove(k), what);
                }
                case 6 -> assertEquals(model.putIfAbsent(k, v) == null, map.putIfAbsent(k, v), what);
                case 7 -> assertEquals(model.merge(k, v, Long::sum), map.merge(k, v, Long::sum), what);
                case 8 -> found.check(model.floorEntry(q), map.floor(q, found), what);
                case 9 -> found.check(model.ceilingEntry(q), map.ceiling(q, found), what);
                case 10 -> found.check(model.lowerEntry(q), map.lower(q, found), what);
                case 11 -> found.check(model.higherEntry(q), map.higher(q, found), what);
                case 12 -> found.check(model.firstEntry(), map.first(found), what);
                case 13 -> found.check(model.lastEntry(), map.last(found), what);
                case 14 -> {
                    if (model.isEmpty()) {
                        assertThrows(NoSuchElementException.class, map::firstKey, what);
                        assertThrows(NoSuchElementException.class, map::lastKey, what);
                    } else {
                        assertEquals(model.firstKey(), map.firstKey(), what);
                        assertEquals(model.lastKey(), map.lastKey(), what);
                    }
                }
                case 15, 16 -> checkScan(map, model, rnd, keys, what);
                case 17, 18 -> checkCursor(map, model, rnd, keys, what);
                case 19 -> assertEquals(model.containsKey(k), map.containsKey(k), what);
                case 20 -> {
                    assertEquals(model.floorEntry(q), view.floorEntry(q), what);
                    assertEquals(model.higherKey(q), view.higherKey(q), what);
                    assertEquals(model.descendingMap().ceilingEntry(q), view.descendingMap().ceilingEntry(q), what);
                }
                case 21 -> checkSubMapView(view, model, rnd, keys, what);
                case 22 -> assertEquals(model.pollFirstEntry(), rnd.nextBoolean() ? view.pollFirstEntry()
                        : view.descendingMap().pollLastEntry(), what);
                default -> assertEquals(model.get(k), view.get(k), what);
            }
            if (i % 10_000 == 0) {
                assertEquals(model.size(), map.size(), "size at op " + i);
                assertEquals(new ArrayList<>(model.entrySet()), new ArrayList<>(view.entrySet()), "contents at op " + i);
                assertEquals(new ArrayList<>(model.descendingKeySet()), new ArrayList<>(view.descendingKeySet()),
                        "descending keys at op " + i);
            }
        }
        f.closeAndCheckMemory();
    }

    /** A bound for a range: mostly a pool key or a neighbour of one, sometimes an edge or random key. */
    private static long bound(Random rnd, long[] keys) {
        return switch (rnd.nextInt(8)) {
            case 0 -> Long.MIN_VALUE;
            case 1 -> Long.MAX_VALUE;
            case 2 -> rnd.nextLong();
            default -> keys[rnd.nextInt(keys.length)] + rnd.nextInt(3) - 1;
        };
    }

    /** A random range of a scan, cursor or sub-map: bounds in order, unless {@code mayBeReversed} lets one in eight stay reversed (an empty range). */
    private record Range(long from, boolean fromInclusive, long to, boolean toInclusive, boolean descending) {

        static Range random(Random rnd, long[] keys, boolean mayBeReversed) {
            long from = bound(rnd, keys);
            long to = bound(rnd, keys);
            if (from > to && !(mayBeReversed && rnd.nextInt(8) == 0)) {
                final long t = from;
                from = to;
                to = t;
            }
            return new Range(from, rnd.nextBoolean(), to, rnd.nextBoolean(), rnd.nextBoolean());
        }

        List<Map.Entry<Long, Long>> of(NavigableMap<Long, Long> model) {
            return range(model, from, fromInclusive, to, toInclusive, descending);
        }

        /** Whether the range is {@code [from, to)}, what the two-bound shortcuts take. */
        boolean halfOpen() {
            return fromInclusive && !toInclusive;
        }

        @Override
        public String toString() {
            return (fromInclusive ? "[" : "(") + from + ", " + to + (toInclusive ? "]" : ")")
                    + (descending ? " descending" : "");
        }
    }

    private static void checkScan(LongLongNavigableMap map, NavigableMap<Long, Long> model, Random rnd,
            long[] keys, String what) {
        final Range r = Range.random(rnd, keys, true);
        final int stopAfter = rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(5) : Integer.MAX_VALUE;
        final List<Map.Entry<Long, Long>> expected = r.of(model);
        final List<Map.Entry<Long, Long>> seen = new ArrayList<>();
        final long visited = map.scan(r.from(), r.fromInclusive(), r.to(), r.toInclusive(), r.descending(), (k, v) -> {
            seen.add(Map.entry(k, v));
            return seen.size() < stopAfter;
        });
        final String scan = what + " scan " + r + " stop after " + stopAfter;
        assertEquals(expected.subList(0, Math.min(stopAfter, expected.size())), seen, scan);
        assertEquals(seen.size(), visited, scan + ": the count");
        if (r.halfOpen()) {
            final List<Map.Entry<Long, Long>> plain = new ArrayList<>();
            final LongLongPredicate all = (k, v) -> plain.add(Map.entry(k, v));
            if (r.descending()) {
                map.scanDescending(r.from(), r.to(), all);
            } else {
                map.scan(r.from(), r.to(), all);
            }
            assertEquals(expected, plain, scan + " via the [from, to) form");
        }
    }

    private static void checkCursor(LongLongNavigableMap map, NavigableMap<Long, Long> model, Random rnd,
            long[] keys, String what) {
        final Range r = Range.random(rnd, keys, false);
        final List<Map.Entry<Long, Long>> seen = new ArrayList<>();
        try (LongLongCursor c = r.halfOpen() ? map.cursor(r.from(), r.to(), r.descending())
                : map.cursor(r.from(), r.fromInclusive(), r.to(), r.toInclusive(), r.descending())) {
            assertThrows(IllegalStateException.class, c::key, "key() before next()");
            while (c.next()) {
                seen.add(Map.entry(c.key(), c.value()));
            }
            assertThrows(IllegalStateException.class, c::value, "value() after the end");
            assertFalse(c.next(), "next() after the end");
            c.close();
        }
        assertEquals(r.of(model), seen, what + " cursor " + r);
    }

    private static void checkSubMapView(ConcurrentNavigableMap<Long, Long> view, NavigableMap<Long, Long> model,
            Random rnd, long[] keys, String what) {
        final Range r = Range.random(rnd, keys, false);
        NavigableMap<Long, Long> expected = model.subMap(r.from(), r.fromInclusive(), r.to(), r.toInclusive());
        NavigableMap<Long, Long> actual = view.subMap(r.from(), r.fromInclusive(), r.to(), r.toInclusive());
        if (r.descending()) {
            expected = expected.descendingMap();
            actual = actual.descendingMap();
        }
        final String sub = what + " subMap " + r;
        assertEquals(new ArrayList<>(expected.entrySet()), new ArrayList<>(actual.entrySet()), sub);
        assertEquals(expected.size(), actual.size(), sub);
        assertEquals(expected.firstEntry(), actual.firstEntry(), sub);
        assertEquals(expected.lastEntry(), actual.lastEntry(), sub);
        final long q = bound(rnd, keys);
        assertEquals(expected.lowerEntry(q), actual.lowerEntry(q), sub + " lower " + q);
        assertEquals(expected.ceilingKey(q), actual.ceilingKey(q), sub + " ceiling " + q);
        final long h = Math.max(r.from(), Math.min(r.to(), q));
        assertEquals(expected.headMap(h, false).keySet().stream().toList(),
                List.copyOf(actual.headMap(h, false).keySet()), sub + " head " + h);
        assertEquals(expected.tailMap(h, false).keySet().stream().toList(),
                List.copyOf(actual.tailMap(h, false).keySet()), sub + " tail " + h);
    }

    /**
     * Weak consistency of range scans under concurrent updates: while an updater inserts and removes
     * the churned keys, each scan (primitive scan, cursor, the navigable view's iterators and a
     * sub-map view's, ascending and descending, with random bounds) sees every stable key in its
     * range, no key that was never inserted, keys in strictly increasing (decreasing) order and so
     * each at most once. The scanner does a fixed number of scans once the updater has started; the
     * updater stops when the scanner is done.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("maps")
    void scansAreWeaklyConsistentUnderUpdates(IndexMap kind) throws InterruptedException {
        final MapFixture f = new MapFixture(kind, 0);
        final LongLongNavigableMap map = f.ordered();
        final KeyClasses keys = KeyClasses.fill(map, 3_000);
        final Random rnd = new Random(18_400);
        final ConcurrentNavigableMap<Long, Long> view = map.asNavigableMap();
        final Churn churn = Churn.start(map, keys);
        try {
            for (int scan = 0; scan < 120; scan++) {
                final boolean whole = scan % 4 == 0;
                final long lo = whole ? Long.MIN_VALUE : rnd.nextInt(12_000) - 9_000L;
                final long hi = whole ? Long.MAX_VALUE : lo + rnd.nextInt(8_000);
                final boolean loIn = whole || rnd.nextBoolean();
                final boolean hiIn = whole || rnd.nextBoolean();
                final boolean desc = rnd.nextBoolean();
                final Set<Long> seen = new HashSet<>();
                final Order order = new Order(desc);
                switch (scan % 3) {
                    case 0 -> map.scan(lo, loIn, hi, hiIn, desc, (k, v) -> {
                        order.next(k);
                        keys.check(seen, k, v);
                        return true;
                    });
                    case 1 -> {
                        try (LongLongCursor c = map.cursor(lo, loIn, hi, hiIn, desc)) {
                            while (c.next()) {
                                order.next(c.key());
                                keys.check(seen, c.key(), c.value());
                            }
                        }
                    }
                    default -> {
                        ConcurrentNavigableMap<Long, Long> sub = whole ? view : view.subMap(lo, loIn, hi, hiIn);
                        sub = desc ? sub.descendingMap() : sub;
                        for (Iterator<Map.Entry<Long, Long>> it = sub.entrySet().iterator(); it.hasNext(); ) {
                            final Map.Entry<Long, Long> e = it.next();
                            order.next(e.getKey());
                            keys.check(seen, e.getKey(), e.getValue());
                        }
                    }
                }
                keys.checkStableSeen(seen, lo, loIn, hi, hiIn);
            }
        } finally {
            churn.stop();
        }
        churn.rethrow();
        f.closeAndCheckMemory();
    }

    /** Checks that a scan's keys come strictly increasing (or decreasing). */
    private static final class Order {
        private final boolean descending;
        private boolean started;
        private long previous;

        Order(boolean descending) {
            this.descending = descending;
        }

        void next(long key) {
            if (started) {
                final long prev = previous;
                assertTrue(descending ? key < prev : key > prev,
                        () -> "key " + key + " after " + prev + " in a " + (descending ? "descending" : "ascending") + " scan");
            }
            started = true;
            previous = key;
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("maps")
    void navigableViewBoundsAndNulls(IndexMap kind) {
        final MapFixture f = new MapFixture(kind, 0);
        final ConcurrentNavigableMap<Long, Long> view = f.ordered().asNavigableMap();
        for (long k = -5; k <= 5; k++) {
            view.put(k, k * 10);
        }
        view.put(Long.MIN_VALUE, 1L);
        view.put(Long.MAX_VALUE, 2L);
        final ConcurrentNavigableMap<Long, Long> sub = view.subMap(-2L, true, 3L, false);
        assertEquals(List.of(-2L, -1L, 0L, 1L, 2L), List.copyOf(sub.keySet()));
        assertThrows(IllegalArgumentException.class, () -> sub.put(3L, 0L), "a write outside the range");
        assertThrows(IllegalArgumentException.class, () -> sub.subMap(-3L, 0L), "a sub-range outside the range");
        assertThrows(IllegalArgumentException.class, () -> view.subMap(2L, 1L), "from > to");
        assertEquals(null, sub.get(4L), "a read outside the range finds nothing");
        assertEquals(null, sub.remove(4L), "a removal outside the range removes nothing");
        assertEquals(Long.valueOf(40), view.get(4L));
        assertEquals(List.of(2L, 1L, 0L, -1L, -2L), List.copyOf(sub.descendingKeySet()));
        assertEquals(Map.entry(Long.MIN_VALUE, 1L), view.headMap(-5L).firstEntry());
        assertEquals(Map.entry(Long.MAX_VALUE, 2L), view.tailMap(5L, false).pollFirstEntry());
        assertTrue(view.headMap(Long.MIN_VALUE).isEmpty(), "nothing below Long.MIN_VALUE");
        assertEquals(0, view.subMap(1L, false, 1L, false).size());
        assertEquals(null, view.comparator());
        assertEquals(List.of(5L, 4L), List.copyOf(view.descendingMap().headMap(3L).keySet()));
        assertThrows(NullPointerException.class, () -> view.floorKey(null));
        assertThrows(NullPointerException.class, () -> view.subMap(null, 1L));
        assertThrows(NullPointerException.class, () -> view.put(1L, null));
        sub.clear();
        assertEquals(List.of(Long.MIN_VALUE, -5L, -4L, -3L, 3L, 4L, 5L), List.copyOf(view.keySet()));
        final Iterator<Long> it = view.keySet().iterator();
        assertThrows(IllegalStateException.class, it::remove, "remove() before next()");
        it.next();
        it.remove();
        assertThrows(IllegalStateException.class, it::remove, "remove() twice");
        assertEquals(-5L, view.firstKey());
        view.clear();
        assertThrows(NoSuchElementException.class, view::firstKey);
        assertEquals(null, view.pollLastEntry());
        f.closeAndCheckMemory();
    }
}
