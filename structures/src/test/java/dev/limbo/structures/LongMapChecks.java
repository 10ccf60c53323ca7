package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.ReclaimStats;
import dev.limbo.reclaim.Scheme;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;

import static dev.limbo.structures.OffHeapStructure.RESERVED;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Checks shared by {@link HarrisMichaelListTest} and {@link MichaelHashMapTest}: both structures
 * are long-to-long maps, seen here through {@link Subject}.
 */
final class LongMapChecks {

    /** The map operations of the structure under test, plus quiescent inspection. */
    interface Subject extends AutoCloseable {
        long putIfAbsent(long key, long value);

        long put(long key, long value);

        long get(long key);

        boolean contains(long key);

        long remove(long key);

        long size();

        /** Quiescent: every linked node as {key, value, next word, address}. */
        List<long[]> nodes();

        /**
         * Quiescent: the structure's shape (order, marks, buckets), checked with assertions; returns
         * the keys in the order the structure holds them.
         */
        long[] checkShape();

        @Override
        void close();
    }

    private LongMapChecks() {
    }

    static ReclaimDomain domain(final Scheme scheme, final LimboAllocator allocator, final boolean debug) {
        return ReclaimDomain.builder(scheme).allocator(allocator).recordBytes(ListNodeLayout.SIZE)
                .slots(HarrisMichaelList.SLOTS).debug(debug).build();
    }

    /**
     * The shape every bucket list must have when quiescent: strictly increasing keys, no mark, no
     * tombstone. Returns its keys.
     */
    static long[] checkList(final List<long[]> nodes) {
        final long[] keys = new long[nodes.size()];
        for (int i = 0; i < keys.length; i++) {
            final long[] n = nodes.get(i);
            keys[i] = n[0];
            assertEquals(0, n[2] & HarrisMichaelList.MARK, "marked node left linked, key " + n[0]);
            assertNotEquals(HarrisMichaelList.TOMBSTONE, n[1], "tombstoned node left linked, key " + n[0]);
            if (i > 0) {
                assertTrue(keys[i - 1] < keys[i], "keys not strictly increasing: " + keys[i - 1] + ", " + keys[i]);
            }
        }
        return keys;
    }

    /**
     * {@code ops} random operations over keys {@code [lo, lo + range)}, each result compared with
     * {@code model}; then the contents.
     */
    static void sequential(final Subject s, final Map<Long, Long> model, final long seed, final int ops,
                           final long lo, final int range) {
        final Random rnd = new Random(seed);
        for (int i = 0; i < ops; i++) {
            final long k = lo + rnd.nextInt(range);
            final long v = rnd.nextInt(1000) - 500L;
            final String at = "op " + i + " key " + k;
            switch (rnd.nextInt(6)) {
                case 0 -> assertEquals(orReserved(model.put(k, v)), s.put(k, v), at + " put");
                case 1 -> assertEquals(orReserved(model.putIfAbsent(k, v)), s.putIfAbsent(k, v), at + " putIfAbsent");
                case 2 -> assertEquals(orReserved(model.get(k)), s.get(k), at + " get");
                case 3 -> assertEquals(model.containsKey(k), s.contains(k), at + " contains");
                case 4 -> assertEquals(orReserved(model.remove(k)), s.remove(k), at + " remove");
                default -> assertEquals(model.size(), s.size(), at + " size");
            }
        }
        assertContents(s, model);
    }

    static long orReserved(final Long v) {
        return v == null ? RESERVED : v;
    }

    /** Quiescent: the structure holds exactly {@code expected}. */
    static void assertContents(final Subject s, final Map<Long, Long> expected) {
        s.checkShape();
        final Map<Long, Long> actual = new HashMap<>();
        for (final long[] n : s.nodes()) {
            assertEquals(null, actual.put(n[0], n[1]), "key linked twice: " + n[0]);
        }
        assertEquals(expected, actual);
        assertEquals(expected.size(), s.size());
        for (final Map.Entry<Long, Long> e : expected.entrySet()) {
            assertTrue(s.contains(e.getKey()));
            assertEquals(e.getValue(), s.get(e.getKey()));
        }
    }

    /** Keys {@code t + threads * i} belong to thread t; these are shared by all threads. */
    static final long SHARED_LO = -4;
    static final int SHARED = 4;
    static final int PRIVATE = 24;

    /** A value that names its writer's key, thread and sequence number, unique in a run. */
    static long value(final long key, final int thread, final long seq) {
        return ((long) thread << 56) | ((key & 0xFFFF) << 40) | seq;
    }

    static long keyBits(final long value) {
        return (value >>> 40) & 0xFFFF;
    }

    /**
     * {@code threads} threads run {@code ops} random operations each, half on keys of their own
     * (results checked exactly against a per-thread model), half on shared keys (results checked
     * for plausibility). Afterwards: every value ever written was either consumed once (returned by
     * a replacing put or a remove) or is still mapped; per shared key, successful inserts minus
     * removes is 1 iff it is present; private keys hold exactly their owner's model; the shape.
     */
    static void concurrent(final Subject s, final int threads, final int ops, final long seed) throws Exception {
        final List<Map<Long, Long>> mine = new ArrayList<>();
        final long[][] written = new long[threads][];
        final long[][] consumed = new long[threads][];
        final long[][] net = new long[threads][SHARED];
        for (int t = 0; t < threads; t++) {
            mine.add(new HashMap<>());
        }
        Workers.run(threads, false, id -> {
            final Map<Long, Long> model = mine.get(id);
            final Random rnd = new Random(seed * 31 + id);
            final LongList w = new LongList();
            final LongList c = new LongList();
            for (int i = 0; i < ops; i++) {
                final boolean shared = rnd.nextBoolean();
                final long k = shared ? SHARED_LO + rnd.nextInt(SHARED) : id + (long) threads * rnd.nextInt(PRIVATE);
                final long v = value(k, id, i);
                final String at = "thread " + id + " op " + i + " key " + k;
                final long r;
                switch (rnd.nextInt(5)) {
                    case 0 -> {
                        r = s.put(k, v);
                        w.add(v);
                        if (r != RESERVED) {
                            c.add(r);
                        } else if (shared) {
                            net[id][(int) (k - SHARED_LO)]++;
                        }
                        if (!shared) {
                            assertEquals(orReserved(model.put(k, v)), r, at + " put");
                        }
                    }
                    case 1 -> {
                        r = s.putIfAbsent(k, v);
                        if (r == RESERVED) {
                            w.add(v);
                            if (shared) {
                                net[id][(int) (k - SHARED_LO)]++;
                            }
                        }
                        if (!shared) {
                            assertEquals(orReserved(model.putIfAbsent(k, v)), r, at + " putIfAbsent");
                        }
                    }
                    case 2 -> {
                        r = s.get(k);
                        if (!shared) {
                            assertEquals(orReserved(model.get(k)), r, at + " get");
                        }
                    }
                    case 3 -> {
                        final boolean present = s.contains(k);
                        r = RESERVED;
                        if (!shared) {
                            assertEquals(model.containsKey(k), present, at + " contains");
                        }
                    }
                    default -> {
                        r = s.remove(k);
                        if (r != RESERVED) {
                            c.add(r);
                            if (shared) {
                                net[id][(int) (k - SHARED_LO)]--;
                            }
                        }
                        if (!shared) {
                            assertEquals(orReserved(model.remove(k)), r, at + " remove");
                        }
                    }
                }
                if (r != RESERVED) {
                    assertEquals(k & 0xFFFF, keyBits(r), at + ": value 0x" + Long.toHexString(r)
                            + " was written for another key");
                }
            }
            written[id] = w.toArray();
            consumed[id] = c.toArray();
            return null;
        });

        final long[] keys = s.checkShape();
        final Map<Long, Long> finalMap = new HashMap<>();
        for (final long[] n : s.nodes()) {
            finalMap.put(n[0], n[1]);
        }
        assertEquals(keys.length, finalMap.size());

        // conservation of values: written = consumed + still mapped, as multisets of unique values
        final LongList all = new LongList();
        final LongList out = new LongList();
        for (int t = 0; t < threads; t++) {
            all.addAll(written[t]);
            out.addAll(consumed[t]);
        }
        finalMap.values().forEach(out::add);
        final long[] a = all.toArray();
        final long[] b = out.toArray();
        Arrays.sort(a);
        Arrays.sort(b);
        assertArrayEquals(a, b, "a value was lost or reported twice");

        // shared keys: net successful inserts - removes is 1 iff present
        for (int k = 0; k < SHARED; k++) {
            long n = 0;
            for (int t = 0; t < threads; t++) {
                n += net[t][k];
            }
            assertEquals(finalMap.containsKey(SHARED_LO + k) ? 1 : 0, n, "net inserts of shared key " + (SHARED_LO + k));
        }
        // private keys: exactly the owners' models
        final Map<Long, Long> expectedPrivate = new HashMap<>();
        mine.forEach(expectedPrivate::putAll);
        final Map<Long, Long> actualPrivate = new HashMap<>(finalMap);
        actualPrivate.keySet().removeIf(k -> k >= SHARED_LO && k < SHARED_LO + SHARED);
        assertEquals(expectedPrivate, actualPrivate);

        assertContents(s, finalMap);
    }

    /**
     * Memory accounting: from a fresh allocator, run a concurrent then a sequential workload, close
     * the structure, flush and close the domain; the allocator's bytes in use are back where they
     * were, except for the nodes that scheme none leaks by design (retired x 32 bytes: a node and its trailer).
     */
    static void memory(final Scheme scheme, final Function<ReclaimDomain, Subject> create) throws Exception {
        final LimboAllocator alloc = LimboAllocator.create();
        final long baseline = alloc.stats().bytesInUse();
        final ReclaimDomain domain = domain(scheme, alloc, false);
        final Subject s = create.apply(domain);
        concurrent(s, 3, 20_000, 7);
        sequential(s, new HashMap<>(snapshot(s)), 11, 5_000, -4, 40);
        assertTrue(alloc.stats().bytesInUse() > baseline);
        s.close();
        domain.flush();
        final ReclaimStats stats = domain.stats();
        assertTrue(stats.retired() > 0, "the workload retired nothing: " + stats);
        final long leaked;
        if (scheme == Scheme.NONE) {
            leaked = stats.retired() * (ListNodeLayout.SIZE + ReclaimDomain.TRAILER_BYTES);
        } else {
            assertEquals(stats.retired(), stats.freed(), "flush after all threads ended left retired nodes: " + stats);
            leaked = 0;
        }
        domain.close();
        // the workers gave their participant ids back before they ended (Workers), so their
        // allocator caches were adopted then, not later on the JDK's Cleaner thread
        alloc.trim();
        assertEquals(baseline + leaked, alloc.stats().bytesInUse(), () -> "bytes in use after close, " + stats);
    }

    static Map<Long, Long> snapshot(final Subject s) {
        final Map<Long, Long> m = new HashMap<>();
        for (final long[] n : s.nodes()) {
            m.put(n[0], n[1]);
        }
        return m;
    }

    /** Keys at the ends of the signed range, and the reserved key and value. */
    static void extremes(final Subject s) {
        final long[] keys = {Long.MIN_VALUE, -1, 0, 1, Long.MAX_VALUE - 1};
        for (final long k : keys) {
            assertEquals(RESERVED, s.putIfAbsent(k, k == Long.MIN_VALUE ? 5 : k));
        }
        for (final long k : keys) {
            assertEquals(k == Long.MIN_VALUE ? 5 : k, s.get(k));
        }
        assertEquals(keys.length, s.size());
        assertFalse(s.contains(2));
        assertEquals(RESERVED, s.remove(2));
        assertEquals(Long.MAX_VALUE - 1, s.remove(Long.MAX_VALUE - 1));
        assertEquals(5, s.put(Long.MIN_VALUE, Long.MAX_VALUE));
        assertEquals(Long.MAX_VALUE, s.get(Long.MIN_VALUE));
        assertEquals(keys.length - 1, s.size());
        s.checkShape();
    }

    /** A growable long array. */
    static final class LongList {
        private long[] a = new long[64];
        private int n;

        void add(final long v) {
            if (n == a.length) {
                a = Arrays.copyOf(a, 2 * n);
            }
            a[n++] = v;
        }

        void addAll(final long[] vs) {
            for (final long v : vs) {
                add(v);
            }
        }

        int size() {
            return n;
        }

        long[] toArray() {
            return Arrays.copyOf(a, n);
        }
    }
}
