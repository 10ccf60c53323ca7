package dev.limbo.example.index;

import dev.limbo.index.LongLongCursor;
import dev.limbo.index.OffHeapLongMap;

import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentNavigableMap;

/**
 * Loads a million entries into an {@link OffHeapLongMap}, runs range scans through the callback,
 * a cursor and the {@code ConcurrentNavigableMap} view, and checks every answer against a sorted
 * array of the keys. Prints what it did; exits with 1 if a check fails, 0 otherwise.
 */
public final class IndexApp {

    static final int ENTRIES = 1_000_000;
    static final int SCANS = 2_000;
    /** The key spacing of a scan of about 100 entries: the keys spread over the whole long range. */
    static final long SCAN_WIDTH = Long.divideUnsigned(-1L, ENTRIES) * 100;

    private IndexApp() {
    }

    /** Distinct keys over the whole signed range: multiplying by an odd constant is a bijection. */
    static long key(final int i) {
        return i * 0x9E3779B97F4A7C15L;
    }

    static long value(final long key) {
        return ~key;
    }

    public static void main(final String[] args) {
        final long[] sorted = new long[ENTRIES];
        try (OffHeapLongMap map = OffHeapLongMap.builder().build()) {
            long t = System.nanoTime();
            for (int i = 0; i < ENTRIES; i++) {
                sorted[i] = key(i);
                map.put(sorted[i], value(sorted[i]));
            }
            final double loadMs = (System.nanoTime() - t) / 1e6;
            Arrays.sort(sorted);
            check(map.size() == ENTRIES, "size() " + map.size() + " after loading " + ENTRIES + " entries");
            System.out.printf(Locale.ROOT, "loaded %,d entries in %.0f ms (%.2f M puts/s); off-heap %,d bytes, "
                            + "%.1f bytes/entry; scheme %s%n", map.size(), loadMs, ENTRIES / loadMs / 1e3,
                    map.stats().offHeapBytes(), map.stats().bytesPerEntry(), map.stats().scheme());

            final SplittableRandom rnd = new SplittableRandom(42);
            for (int i = 0; i < 10_000; i++) {
                final long k = sorted[rnd.nextInt(ENTRIES)];
                check(map.get(k) == value(k), "get(" + k + ")");
                final long absent = rnd.nextLong();
                check(map.containsKey(absent) == (Arrays.binarySearch(sorted, absent) >= 0), "containsKey(" + absent + ")");
            }
            check(map.firstKey() == sorted[0] && map.lastKey() == sorted[ENTRIES - 1], "firstKey()/lastKey()");

            // range scans [from, to) of about 100 entries, ascending and descending, against the sorted keys
            t = System.nanoTime();
            long visited = 0;
            for (int i = 0; i < SCANS; i++) {
                final long from = rnd.nextLong();
                final long to = from > Long.MAX_VALUE - SCAN_WIDTH ? Long.MAX_VALUE : from + SCAN_WIDTH;
                final int lo = lowerBound(sorted, from);
                final int hi = lowerBound(sorted, to);
                final int[] next = {lo};
                final boolean[] ok = {true};
                final long n = map.scan(from, to, (k, v) -> {
                    ok[0] &= next[0] < hi && k == sorted[next[0]] && v == value(k);
                    next[0]++;
                    return true;
                });
                check(ok[0] && n == hi - lo && next[0] == hi, "scan [" + from + ", " + to + ") saw " + n
                        + " entries, expected " + (hi - lo));
                final int[] prev = {hi};
                final long d = map.scanDescending(from, to, (k, v) -> {
                    ok[0] &= prev[0] > lo && k == sorted[--prev[0]];
                    return true;
                });
                check(ok[0] && d == hi - lo && prev[0] == lo, "descending scan [" + from + ", " + to + ")");
                visited += n + d;
            }
            final double scanMs = (System.nanoTime() - t) / 1e6;
            System.out.printf(Locale.ROOT, "%,d range scans of about 100 entries (ascending and descending): %,d entries "
                    + "in %.0f ms, %.1f ns/entry%n", 2 * SCANS, visited, scanMs, scanMs * 1e6 / visited);

            // a cursor and the navigable view over the same kind of range
            final long from = sorted[ENTRIES / 2];
            final long to = sorted[ENTRIES / 2 + 500];
            int seen = 0;
            try (LongLongCursor c = map.cursor(from, to, false)) {
                while (c.next()) {
                    check(c.key() == sorted[ENTRIES / 2 + seen] && c.value() == value(c.key()), "cursor entry " + seen);
                    seen++;
                }
            }
            check(seen == 500, "cursor over [" + from + ", " + to + ") saw " + seen + " entries, expected 500");
            final ConcurrentNavigableMap<Long, Long> view = map.asNavigableMap().subMap(from, true, to, false);
            check(view.size() == 500 && view.firstKey() == from && view.lastKey() == sorted[ENTRIES / 2 + 499],
                    "asNavigableMap().subMap(...)");
            System.out.printf(Locale.ROOT, "cursor and navigable view over [%d, %d): %d entries, as expected%n", from, to,
                    seen);

            // the rest of the keys out again, half of them
            t = System.nanoTime();
            for (int i = 0; i < ENTRIES; i += 2) {
                check(map.remove(sorted[i]) == value(sorted[i]), "remove(" + sorted[i] + ")");
            }
            check(map.size() == ENTRIES / 2, "size() " + map.size() + " after removing half");
            System.out.printf(Locale.ROOT, "removed %,d entries in %.0f ms; %,d left%n", ENTRIES / 2,
                    (System.nanoTime() - t) / 1e6, map.size());
        }
        bulkLoad(sorted);
        System.out.println("index-app: all checks passed");
    }

    /** The same keys bulk-loaded from sorted input (full nodes): fewer bytes per entry. */
    static void bulkLoad(final long[] sorted) {
        final long[] values = new long[sorted.length];
        for (int i = 0; i < sorted.length; i++) {
            values[i] = value(sorted[i]);
        }
        final long t = System.nanoTime();
        try (OffHeapLongMap map = OffHeapLongMap.bulkLoad(OffHeapLongMap.builder(), sorted, values)) {
            final double ms = (System.nanoTime() - t) / 1e6;
            final long[] seen = {0};
            final boolean[] ok = {true};
            map.scan(Long.MIN_VALUE, true, Long.MAX_VALUE, true, false, (k, v) -> {
                ok[0] &= k == sorted[(int) seen[0]] && v == value(k);
                seen[0]++;
                return true;
            });
            check(ok[0] && seen[0] == sorted.length && map.size() == sorted.length, "bulk-loaded map holds "
                    + seen[0] + " entries in order, expected " + sorted.length);
            System.out.printf(Locale.ROOT, "bulk-loaded %,d sorted entries in %.0f ms: %.1f bytes/entry%n",
                    map.size(), ms, map.stats().bytesPerEntry());
        }
    }

    /** The index of the first element {@code >= key}. */
    static int lowerBound(final long[] a, final long key) {
        int lo = 0;
        int hi = a.length;
        while (lo < hi) {
            final int mid = (lo + hi) >>> 1;
            if (a[mid] < key) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    static void check(final boolean ok, final String what) {
        if (!ok) {
            System.err.println("index-app: check failed: " + what);
            System.exit(1);
        }
    }
}
