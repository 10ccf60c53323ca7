package dev.limbo.index;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Scheme;
import dev.limbo.structures.LiuZhangSpearHashMap;

import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ConcurrentMap;
import java.util.function.LongBinaryOperator;

/**
 * A hashed off-heap {@code long -> long} map: Liu, Zhang and Spear's lock-free hash table
 * ({@link LiuZhangSpearHashMap}) over its own {@link ReclaimDomain}. It grows (doubles) when the
 * keys exceed 8 per bucket and shrinks (halves, down to its initial size) when they fall below 2
 * per bucket, without a global lock: the buckets move to the new table one at a time, each on
 * first use, and the old tables' memory goes back through the reclamation scheme. Every
 * {@code long} is a valid key and a valid value; {@link #missingValue()} (the builder's, default
 * 0) is what the operations that return a value return for "no mapping".
 *
 * <pre>{@code
 * try (OffHeapLongHashMap map = OffHeapLongHashMap.builder().initialCapacity(1_000_000).build()) {
 *     map.put(7, 70);
 *     map.merge(7, 1, Long::sum);
 * }
 * }</pre>
 *
 * <p>Consistency. Linearizable: get, getOrDefault, containsKey, put, putIfAbsent, both replace and
 * both remove forms (each one CAS on one bucket, or a read of it), and compute and merge (a retry
 * loop over replace(key, expected, new) and putIfAbsent; the function may run more than once under
 * contention, so it should have no side effects). Weakly consistent, in the
 * {@code java.util.concurrent} sense: {@link #scan} (one bucket snapshot per step, in split order,
 * across resizes), isEmpty and clear (a scan that removes what it sees). size() is a striped count:
 * exact when no update runs, otherwise an estimate.
 *
 * <p>Memory: entries live in 256-byte blocks of 14 pairs, one chain per bucket, copied on every
 * update; the directory costs 16 bytes per bucket. {@link #stats()} reports the bytes per entry.
 * Point operations allocate nothing on the heap; a scan uses a per-thread buffer.
 */
public final class OffHeapLongHashMap implements LongLongMap {

    private final LiuZhangSpearHashMap table;
    private final ReclaimDomain domain;
    private final long missing;
    /** Per thread: the scan step's buffer (next position, last flag, pairs), grown on demand. */
    private final ThreadLocal<long[][]> buffers = ThreadLocal.withInitial(() -> new long[1][]);
    private volatile boolean closed;

    private OffHeapLongHashMap(final Builder b) {
        this.domain = ReclaimDomain.builder(b.scheme).allocator(b.allocator)
                .recordBytes(LiuZhangSpearHashMap.RECORD_BYTES).slots(LiuZhangSpearHashMap.SLOTS).build();
        try {
            this.table = new LiuZhangSpearHashMap(domain, b.initialCapacity);
        } catch (final RuntimeException | Error e) {
            domain.close();
            throw e;
        }
        this.missing = b.missingValue;
    }

    /**
     * A builder with the defaults: {@link Scheme#DEBRA}, the shared allocator, missing value 0,
     * initial capacity 0 (one bucket).
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * A map with the defaults.
     *
     * @return {@code builder().build()}
     */
    public static OffHeapLongHashMap create() {
        return builder().build();
    }

    /** The settings of an {@link OffHeapLongHashMap}. */
    public static final class Builder {
        private Scheme scheme = Scheme.DEBRA;
        private LimboAllocator allocator = LimboAllocator.shared();
        private long missingValue;
        private long initialCapacity;

        private Builder() {
        }

        /**
         * The reclamation scheme (default {@link Scheme#DEBRA}); any scheme but the counting ones.
         *
         * @param scheme the scheme
         * @return this builder
         */
        public Builder scheme(final Scheme scheme) {
            this.scheme = Objects.requireNonNull(scheme, "scheme must not be null");
            return this;
        }

        /**
         * The allocator the entries come from (default: {@link LimboAllocator#shared()}).
         *
         * @param allocator the allocator
         * @return this builder
         */
        public Builder allocator(final LimboAllocator allocator) {
            this.allocator = Objects.requireNonNull(allocator, "allocator must not be null");
            return this;
        }

        /**
         * What {@link #get}, {@link #put} and {@link #remove(long)} return for "no mapping"
         * (default 0). It stays a valid value.
         *
         * @param missingValue the missing value
         * @return this builder
         */
        public Builder missingValue(final long missingValue) {
            this.missingValue = missingValue;
            return this;
        }

        /**
         * The keys the first table is sized for (default 0: one bucket); the table never shrinks
         * below it.
         *
         * @param keys expected keys, in [0, {@value LiuZhangSpearHashMap#MAX_INITIAL_CAPACITY}]
         * @return this builder
         * @throws IllegalArgumentException if {@code keys} is out of range
         */
        public Builder initialCapacity(final long keys) {
            if (keys < 0 || keys > LiuZhangSpearHashMap.MAX_INITIAL_CAPACITY) {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                        "initial capacity must be between 0 and %d keys, was %d",
                        LiuZhangSpearHashMap.MAX_INITIAL_CAPACITY, keys));
            }
            this.initialCapacity = keys;
            return this;
        }

        /**
         * Builds the map, with a domain of its own.
         *
         * @return the map
         * @throws IllegalArgumentException if the scheme cannot serve the map (a counting scheme)
         */
        public OffHeapLongHashMap build() {
            return new OffHeapLongHashMap(this);
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("OffHeapLongHashMap is closed");
        }
    }

    // ---------------------------------------------------------------- point operations

    @Override
    public long missingValue() {
        return missing;
    }

    @Override
    public long get(final long key) {
        checkOpen();
        return table.getOrDefault(key, missing);
    }

    @Override
    public long getOrDefault(final long key, final long defaultValue) {
        checkOpen();
        return table.getOrDefault(key, defaultValue);
    }

    @Override
    public boolean containsKey(final long key) {
        checkOpen();
        return table.containsKey(key);
    }

    @Override
    public long put(final long key, final long value) {
        checkOpen();
        return table.put(key, value, missing);
    }

    @Override
    public boolean putIfAbsent(final long key, final long value) {
        checkOpen();
        return table.putIfAbsent(key, value);
    }

    @Override
    public boolean replace(final long key, final long value) {
        checkOpen();
        return table.replace(key, value);
    }

    @Override
    public boolean replace(final long key, final long expectedValue, final long newValue) {
        checkOpen();
        return table.replace(key, expectedValue, newValue);
    }

    @Override
    public long remove(final long key) {
        checkOpen();
        return table.remove(key, missing);
    }

    @Override
    public boolean remove(final long key, final long expectedValue) {
        checkOpen();
        return table.removeIfEquals(key, expectedValue);
    }

    /**
     * {@inheritDoc} A loop: read the mapping, apply the function, then replace exactly that value
     * (or insert if absent); a conflicting update makes it read and apply again.
     */
    @Override
    public long compute(final long key, final LongRemappingFunction function) {
        Objects.requireNonNull(function, "function must not be null");
        checkOpen();
        final long other = missing ^ 1;
        while (true) {
            long old = table.getOrDefault(key, missing);
            boolean present = true;
            if (old == missing) { // absent, or mapped to the missing value: ask with another default
                final long again = table.getOrDefault(key, other);
                present = again != other || table.containsKey(key);
                old = present ? again : missing;
            }
            final long value = function.apply(key, present, old);
            if (present ? table.replace(key, old, value) : table.putIfAbsent(key, value)) {
                return value;
            }
        }
    }

    /** {@inheritDoc} A loop like {@link #compute}'s. */
    @Override
    public long merge(final long key, final long value, final LongBinaryOperator function) {
        Objects.requireNonNull(function, "function must not be null");
        checkOpen();
        final long other = missing ^ 1;
        while (true) {
            if (table.putIfAbsent(key, value)) {
                return value;
            }
            final long old = table.getOrDefault(key, other);
            if (old == other && !table.containsKey(key)) {
                continue; // removed meanwhile: insert again
            }
            final long merged = function.applyAsLong(old, value);
            if (table.replace(key, old, merged)) {
                return merged;
            }
        }
    }

    @Override
    public long size() {
        checkOpen();
        return Math.max(0, table.size());
    }

    @Override
    public boolean isEmpty() {
        return scan((k, v) -> false) == 0;
    }

    /** {@inheritDoc} Removes the keys a scan sees; keys inserted meanwhile may stay. */
    @Override
    public void clear() {
        scan((k, v) -> {
            table.remove(k, missing);
            return true;
        });
    }

    /**
     * {@inheritDoc} In split order (bit-reversed hash), one bucket snapshot per step; the visitor
     * runs outside the map's critical sections and may update the map.
     */
    @Override
    public long scan(final LongLongPredicate visitor) {
        Objects.requireNonNull(visitor, "visitor must not be null");
        checkOpen();
        final long[][] holder = buffers.get();
        long[] out = holder[0] != null ? holder[0] : new long[LiuZhangSpearHashMap.SCAN_HEADER + 64];
        holder[0] = null; // a visitor that scans again gets a buffer of its own
        long visited = 0;
        try {
            long from = 0;
            while (true) {
                final int n = table.scanStep(from, out);
                if (n < 0) {
                    out = new long[LiuZhangSpearHashMap.SCAN_HEADER + 4 * -n];
                    continue;
                }
                final long next = out[0];
                final boolean last = out[1] != 0;
                for (int i = 0; i < n; i++) {
                    visited++;
                    if (!visitor.test(out[LiuZhangSpearHashMap.SCAN_HEADER + 2 * i], out[LiuZhangSpearHashMap.SCAN_HEADER + 2 * i + 1])) {
                        return visited;
                    }
                }
                if (last) {
                    return visited;
                }
                from = next;
            }
        } finally {
            holder[0] = out;
        }
    }

    @Override
    public IndexStats stats() {
        checkOpen();
        return new IndexStats(size(), table.offHeapBytes(), domain.stats().inLimbo() * table.recordFootprint(),
                domain.scheme().id());
    }

    /**
     * The buckets of the current table (a power of two that doubles and halves with the load).
     *
     * @return the bucket count
     */
    public long buckets() {
        checkOpen();
        return table.buckets();
    }

    @Override
    public ConcurrentMap<Long, Long> asMap() {
        return new LongLongMapView(this);
    }

    /** Closes the table (waiting for the operations in flight), then the map's domain. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        table.close();
        domain.close();
    }
}
