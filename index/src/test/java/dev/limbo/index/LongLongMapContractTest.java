package dev.limbo.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The {@link LongLongMap} contract, over every map of {@link IndexMap#all()} (the hashed and the
 * ordered ones, as plain maps): seeded sequential operations against {@link HashMap}, the exact
 * forms that resolve the missing-value ambiguity, the {@code asMap()} view's exact semantics,
 * concurrent stress with exact final contents, and the weak consistency of iteration under
 * concurrent updates. Every test ends with the allocator back at its baseline after close.
 */
final class LongLongMapContractTest {

    /** Keys the tests always include: the edges of the key space and the usual sentinels. */
    static final long[] EDGE_KEYS = {Long.MIN_VALUE, Long.MAX_VALUE, 0, -1, 1, Long.MIN_VALUE + 1, Long.MAX_VALUE - 1};

    /** Generous bound on the concurrent tests, which end by the progress they assert. */
    static final long TIMEOUT_MS = 120_000;

    static List<IndexMap> maps() {
        return IndexMap.all();
    }

    /** A pool of keys: the edge keys and {@code n - EDGE_KEYS.length} random ones, some close together. */
    static long[] keyPool(Random rnd, int n) {
        final long[] keys = new long[n];
        System.arraycopy(EDGE_KEYS, 0, keys, 0, EDGE_KEYS.length);
        for (int i = EDGE_KEYS.length; i < n; i++) {
            keys[i] = i % 2 == 0 ? rnd.nextLong() : rnd.nextInt(4 * n) - 2L * n;
        }
        return keys;
    }

    /** A pool of values that includes the missing value and its complement. */
    static long[] valuePool(Random rnd, long missing) {
        return new long[] {missing, ~missing, 0, -1, 1, Long.MIN_VALUE, Long.MAX_VALUE, rnd.nextLong(), rnd.nextLong(), 42};
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("maps")
    void sequentialAgainstHashMap(IndexMap kind) {
        final long missing = 7;
        final MapFixture f = new MapFixture(kind, missing);
        final LongLongMap map = f.map;
        final ConcurrentMap<Long, Long> view = map.asMap();
        final Map<Long, Long> model = new HashMap<>();
        final Random rnd = new Random(18_001);
        final long[] keys = keyPool(rnd, 400);
        final long[] values = valuePool(rnd, missing);
        for (int i = 0; i < 100_000; i++) {
            final long k = keys[rnd.nextInt(keys.length)];
            final long v = values[rnd.nextInt(values.length)];
            final long w = values[rnd.nextInt(values.length)];
            final Long old = model.get(k);
            final int op = rnd.nextInt(20);
            final String what = "op " + i + " (" + op + ") key " + k;
            switch (op) {
                case 0, 1 -> assertEquals(old == null ? missing : old, map.get(k), what);
                case 2 -> assertEquals(old == null ? w : old, map.getOrDefault(k, w), what);
                case 3 -> assertEquals(old != null, map.containsKey(k), what);
                case 4, 5 -> {
                    assertEquals(old == null ? missing : old, map.put(k, v), what);
                    model.put(k, v);
                }
                case 6 -> {
                    assertEquals(old == null, map.putIfAbsent(k, v), what);
                    model.putIfAbsent(k, v);
                }
                case 7 -> {
                    assertEquals(old != null, map.replace(k, v), what);
                    model.replace(k, v);
                }
                case 8 -> {
                    final long expected = old != null && rnd.nextBoolean() ? old : w;
                    assertEquals(model.replace(k, expected, v), map.replace(k, expected, v), what);
                }
                case 9 -> {
                    assertEquals(old == null ? missing : old, map.remove(k), what);
                    model.remove(k);
                }
                case 10 -> {
                    final long expected = old != null && rnd.nextBoolean() ? old : w;
                    assertEquals(model.remove(k, expected), map.remove(k, expected), what);
                }
                case 11 -> {
                    final long expectNew = old == null ? v : old * 31 + v;
                    assertEquals(expectNew, map.compute(k, (key, present, oldValue) -> {
                        assertEquals(k, key, what);
                        assertEquals(old != null, present, what);
                        assertEquals(old == null ? missing : old, oldValue, what);
                        return present ? oldValue * 31 + v : v;
                    }), what);
                    model.put(k, expectNew);
                }
                case 12 -> assertEquals(model.merge(k, v, (a, b) -> a ^ b), map.merge(k, v, (a, b) -> a ^ b), what);
                case 13 -> assertEquals(old, view.get(k), what);
                case 14 -> assertEquals(model.put(k, v), view.put(k, v), what);
                case 15 -> assertEquals(model.remove(k), view.remove(k), what);
                case 16 -> assertEquals(model.putIfAbsent(k, v), view.putIfAbsent(k, v), what);
                case 17 -> assertEquals(model.replace(k, v), view.replace(k, v), what);
                case 18 -> {
                    final BiFunction<Long, Long, Long> fn = (key, o) -> o == null ? Long.valueOf(v) : o == w ? null : Long.valueOf(o + v);
                    assertEquals(model.compute(k, fn), view.compute(k, fn), what);
                }
                default -> {
                    final BiFunction<Long, Long, Long> fn = (a, b) -> a == w ? null : Long.valueOf(a - b);
                    assertEquals(model.merge(k, v, fn), view.merge(k, v, fn), what);
                }
            }
            if (i % 1000 == 0) {
                assertEquals(model.size(), map.size(), "size at op " + i);
                assertEquals(model.isEmpty(), map.isEmpty(), "isEmpty at op " + i);
            }
            if (i % 20_000 == 0) {
                assertEquals(model, contents(map), "contents at op " + i);
                assertEquals(model, view, "the view at op " + i);
            }
        }
        assertEquals(model, contents(map), "contents at the end");
        assertEquals(model.hashCode(), view.hashCode());
        map.clear();
        assertTrue(map.isEmpty());
        assertEquals(0, map.size());
        assertEquals(Map.of(), contents(map));
        f.closeAndCheckMemory();
    }

    /** Every entry, through {@link LongLongMap#scan(LongLongPredicate)}; fails on a key seen twice. */
    static Map<Long, Long> contents(LongLongMap map) {
        final Map<Long, Long> seen = new HashMap<>();
        final long visited = map.scan((k, v) -> {
            assertNull(seen.put(k, v), () -> "key " + k + " visited twice");
            return true;
        });
        assertEquals(seen.size(), visited, "scan's count");
        return seen;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("maps")
    void exactFormsResolveTheMissingValue(IndexMap kind) {
        final long missing = -1;
        final MapFixture f = new MapFixture(kind, missing);
        final LongLongMap map = f.map;
        final ConcurrentMap<Long, Long> view = map.asMap();
        assertEquals(missing, map.missingValue());
        for (long k : EDGE_KEYS) {
            // absent: the primitive answers missing, the exact forms say absent
            assertEquals(missing, map.get(k));
            assertFalse(map.containsKey(k));
            assertEquals(5, map.getOrDefault(k, 5));
            assertNull(view.get(k));
            assertNull(view.remove(k));
            assertFalse(view.containsKey(k));
            // mapped to the missing value: the primitive answers the same, the exact forms do not
            assertTrue(map.putIfAbsent(k, missing));
            assertEquals(missing, map.get(k));
            assertTrue(map.containsKey(k));
            assertEquals(missing, map.getOrDefault(k, 5));
            assertEquals(missing, view.get(k));
            assertTrue(view.containsKey(k));
            assertFalse(map.putIfAbsent(k, 3), "a key mapped to the missing value is present");
            assertEquals(Long.valueOf(missing), view.putIfAbsent(k, 3L));
            assertEquals(missing, map.compute(k, (key, present, old) -> {
                assertTrue(present, "compute sees the mapping to the missing value");
                return old;
            }));
            assertEquals(Long.valueOf(missing), view.put(k, 9L), "the view's put returns the old missing value, not null");
            assertEquals(Long.valueOf(9), view.put(k, missing));
            assertEquals(Long.valueOf(missing), view.replace(k, missing));
            assertTrue(view.replace(k, missing, missing));
            assertEquals(Long.valueOf(missing + 4), view.merge(k, 4L, Long::sum));
            assertTrue(map.replace(k, missing + 4, missing));
            assertEquals(Long.valueOf(missing), view.remove(k), "the view's remove returns the missing value");
            assertFalse(map.containsKey(k));
            assertNull(view.compute(k, (key, old) -> {
                assertNull(old, "absent");
                return null;
            }));
            assertFalse(map.containsKey(k), "compute returning null for an absent key inserts nothing");
            assertEquals(Long.valueOf(missing), view.computeIfAbsent(k, key -> missing));
            assertEquals(Long.valueOf(missing), view.computeIfAbsent(k, key -> fail("present: not called")));
            assertNull(view.computeIfPresent(k, (key, old) -> null));
            assertFalse(map.containsKey(k), "computeIfPresent returning null removes");
            assertEquals(1, map.merge(k, 1, (a, b) -> fail("absent: not called")), "merge of an absent key inserts");
            assertEquals(1, map.remove(k));
            assertEquals(missing, map.remove(k), "absent again: remove answers missing too");
        }
        assertTrue(map.isEmpty());
        f.closeAndCheckMemory();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("maps")
    void viewRejectsNulls(IndexMap kind) {
        final MapFixture f = new MapFixture(kind, 0);
        final ConcurrentMap<Long, Long> view = f.map.asMap();
        view.put(1L, 2L);
        assertThrows(NullPointerException.class, () -> view.get(null));
        assertThrows(NullPointerException.class, () -> view.containsKey(null));
        assertThrows(NullPointerException.class, () -> view.containsValue(null));
        assertThrows(NullPointerException.class, () -> view.put(null, 1L));
        assertThrows(NullPointerException.class, () -> view.put(1L, null));
        assertThrows(NullPointerException.class, () -> view.putIfAbsent(3L, null));
        assertThrows(NullPointerException.class, () -> view.remove(null));
        assertThrows(NullPointerException.class, () -> view.replace(1L, null));
        assertThrows(NullPointerException.class, () -> view.replace(1L, 2L, null));
        assertThrows(NullPointerException.class, () -> view.compute(1L, null));
        assertThrows(NullPointerException.class, () -> view.merge(1L, null, Long::sum));
        assertThrows(NullPointerException.class, () -> view.computeIfAbsent(null, k -> 1L));
        assertNull(view.get("1"), "a key of another type has no mapping");
        assertFalse(view.remove(1L, null));
        assertEquals(Map.of(1L, 2L), view);
        f.closeAndCheckMemory();
    }

    /**
     * Threads with disjoint key sets (put, replace, remove, checked reads of their own keys: only
     * the owner writes them, so each read must return its last write), and shared keys that every
     * thread increments with {@code merge(k, 1, Long::sum)}, half of them through the view. At the
     * end each thread's keys hold exactly what it wrote last, and the shared values sum to the
     * number of merges.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("maps")
    void concurrentDisjointKeysAndSharedCounters(IndexMap kind) throws InterruptedException {
        final int threads = 4;
        final int ownKeys = 2_000;
        final int rounds = 4;
        final int merges = 20_000;
        final MapFixture f = new MapFixture(kind, 0);
        final LongLongMap map = f.map;
        final ConcurrentMap<Long, Long> view = map.asMap();
        final long[] shared = {Long.MIN_VALUE, Long.MAX_VALUE, 0, -1, 1, 2, 3, 1L << 62};
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final int id = t;
            workers.add(Thread.ofPlatform().name("stress-" + t).start(() -> {
                try {
                    final Random rnd = new Random(18_100 + id);
                    int merged = 0;
                    for (int r = 0; r < rounds; r++) {
                        for (int j = 0; j < ownKeys; j++) {
                            final long k = ownKey(id, j, threads);
                            final long v = value(id, j, r);
                            if (r == 0) {
                                assertTrue(map.putIfAbsent(k, v), "own key absent before round 0");
                            } else {
                                assertTrue(map.replace(k, value(id, j, r - 1), v), "own key holds its last write");
                            }
                            assertEquals(v, map.getOrDefault(k, ~v), "own key reads its last write");
                            if (merged < merges && rnd.nextInt(3) == 0) {
                                final long s = shared[rnd.nextInt(shared.length)];
                                if (merged % 2 == 0) {
                                    map.merge(s, 1, Long::sum);
                                } else {
                                    view.merge(s, 1L, Long::sum);
                                }
                                merged++;
                            }
                        }
                    }
                    for (int j = 0; j < ownKeys; j += 2) {
                        final long k = ownKey(id, j, threads);
                        assertEquals(Long.valueOf(value(id, j, rounds - 1)), view.remove(k), "remove own key");
                    }
                    for (; merged < merges; merged++) {
                        map.merge(shared[rnd.nextInt(shared.length)], 1, Long::sum);
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        for (Thread w : workers) {
            w.join(TIMEOUT_MS);
            assertFalse(w.isAlive(), () -> w.getName() + " did not finish within " + TIMEOUT_MS + " ms");
        }
        if (failure.get() != null) {
            throw new AssertionError("a worker failed", failure.get());
        }
        final Map<Long, Long> expected = new HashMap<>();
        for (int t = 0; t < threads; t++) {
            for (int j = 1; j < ownKeys; j += 2) {
                expected.put(ownKey(t, j, threads), value(t, j, rounds - 1));
            }
        }
        final Map<Long, Long> actual = contents(map);
        long sum = 0;
        for (long s : shared) {
            final Long c = actual.remove(s);
            sum += c == null ? 0 : c;
        }
        assertEquals(expected, actual, "own keys");
        assertEquals((long) threads * merges, sum, "shared counters sum to the number of merges");
        assertEquals(expected.size() + shared.length, map.size(), "size when quiescent");
        f.closeAndCheckMemory();
    }

    /** Thread {@code t}'s {@code j}-th key: disjoint across threads, negative and positive, never a shared key. */
    private static long ownKey(int t, int j, int threads) {
        return ((long) j - 1_000) * threads * 1_000_003L + t + 10;
    }

    private static long value(int t, int j, int round) {
        return ((long) t << 48) ^ ((long) j << 8) ^ round;
    }

    /**
     * Weak consistency of iteration ({@link LongLongMap#scan(LongLongPredicate)} and the
     * {@code asMap()} view's iterators) while an updater churns some keys: keys present for the
     * whole iteration are seen, keys never inserted are not, no key is seen twice. The scanner runs
     * a fixed number of iterations once the updater has started; the updater stops when the scanner
     * is done.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("maps")
    void iterationIsWeaklyConsistentUnderUpdates(IndexMap kind) throws InterruptedException {
        final MapFixture f = new MapFixture(kind, 0);
        final KeyClasses keys = KeyClasses.fill(f.map, 3_000);
        final Churn churn = Churn.start(f.map, keys);
        try {
            final ConcurrentMap<Long, Long> view = f.map.asMap();
            for (int scan = 0; scan < 60; scan++) {
                final Set<Long> seen = new HashSet<>();
                if (scan % 2 == 0) {
                    f.map.scan((k, v) -> {
                        keys.check(seen, k, v);
                        return true;
                    });
                } else {
                    for (Map.Entry<Long, Long> e : view.entrySet()) {
                        keys.check(seen, e.getKey(), e.getValue());
                    }
                }
                keys.checkStableSeen(seen, Long.MIN_VALUE, true, Long.MAX_VALUE, true);
            }
        } finally {
            churn.stop();
        }
        churn.rethrow();
        f.closeAndCheckMemory();
    }

    /** Keys of three classes: stable (present throughout), churned (inserted and removed), never inserted. */
    static final class KeyClasses {
        final Set<Long> stable = new HashSet<>();
        final long[] churned;
        final Set<Long> never = new HashSet<>();

        private KeyClasses(int n) {
            final List<Long> churn = new ArrayList<>();
            for (long k : new long[] {Long.MIN_VALUE, Long.MAX_VALUE, 0, -1}) {
                stable.add(k);
            }
            for (int i = 0; i < n; i++) {
                final long k = (i - n / 2L) * 7 + 1;
                switch (i % 3) {
                    case 0 -> stable.add(k);
                    case 1 -> churn.add(k);
                    default -> never.add(k);
                }
            }
            churned = churn.stream().mapToLong(Long::longValue).toArray();
        }

        /** Key {@code i} of class {@code i % 3} (none is an edge key; those are stable); inserts the stable keys. */
        static KeyClasses fill(LongLongMap map, int n) {
            final KeyClasses c = new KeyClasses(n);
            for (long k : c.stable) {
                assertTrue(map.putIfAbsent(k, ~k));
            }
            return c;
        }

        /** One key of an iteration: not a never-inserted key, not seen before, its value the one written. */
        void check(Set<Long> seen, long k, long v) {
            assertFalse(never.contains(k), () -> "saw key " + k + ", which was never inserted");
            assertTrue(seen.add(k), () -> "saw key " + k + " twice");
            if (stable.contains(k)) {
                assertEquals(~k, v, () -> "stable key " + k + "'s value");
            } else {
                assertEquals(k * 3, v, () -> "churned key " + k + "'s value");
            }
        }

        /** After an iteration over a range: every stable key in it was seen. */
        void checkStableSeen(Set<Long> seen, long lo, boolean loInclusive, long hi, boolean hiInclusive) {
            for (long k : stable) {
                final boolean inRange = (k > lo || (k == lo && loInclusive)) && (k < hi || (k == hi && hiInclusive));
                if (inRange) {
                    assertTrue(seen.contains(k), () -> "missed stable key " + k);
                }
            }
        }
    }

    /** The updater: inserts and removes the churned keys until stopped; the scanner waits for its start. */
    static final class Churn {
        private final Thread thread;
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final AtomicLong updates = new AtomicLong();
        private volatile boolean stop;

        private Churn(LongLongMap map, KeyClasses keys) {
            thread = Thread.ofPlatform().name("churn").start(() -> {
                try {
                    final Random rnd = new Random(18_200);
                    while (!stop) {
                        final long k = keys.churned[rnd.nextInt(keys.churned.length)];
                        if (rnd.nextBoolean()) {
                            map.put(k, k * 3);
                        } else {
                            map.remove(k);
                        }
                        updates.incrementAndGet();
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
        }

        /** Starts the updater and returns once it has made its first updates (bounded by the timeout). */
        static Churn start(LongLongMap map, KeyClasses keys) throws InterruptedException {
            final Churn c = new Churn(map, keys);
            final long deadline = System.nanoTime() + TIMEOUT_MS * 1_000_000;
            while (c.updates.get() < 100 && c.failure.get() == null) {
                if (System.nanoTime() > deadline) {
                    c.stop();
                    fail("the updater made no progress within " + TIMEOUT_MS + " ms");
                }
                Thread.onSpinWait();
            }
            return c;
        }

        void stop() throws InterruptedException {
            stop = true;
            thread.join(TIMEOUT_MS);
            assertFalse(thread.isAlive(), "the updater did not stop");
        }

        void rethrow() {
            if (failure.get() != null) {
                throw new AssertionError("the updater failed", failure.get());
            }
            assertTrue(updates.get() >= 100, "the updater ran");
        }
    }
}
