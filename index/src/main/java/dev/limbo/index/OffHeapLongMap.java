package dev.limbo.index;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Scheme;
import dev.limbo.structures.AbTreeLeafCopy;
import dev.limbo.structures.BrownAbTree;

import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.function.LongBinaryOperator;

/**
 * An ordered off-heap {@code long -> long} map: Brown's lock-free relaxed (a,b)-tree
 * ({@link BrownAbTree}) over its own {@link ReclaimDomain}. Every {@code long} is a valid key and a
 * valid value; {@link #missingValue()} (the builder's, default 0) is what the operations that
 * return a value return for "no mapping".
 *
 * <pre>{@code
 * try (OffHeapLongMap map = OffHeapLongMap.builder().scheme(Scheme.DEBRA).build()) {
 *     map.put(7, 70);
 *     map.scan(0, 100, (k, v) -> { System.out.println(k + " -> " + v); return true; });
 * }
 * }</pre>
 *
 * <p>Consistency. Linearizable: get, getOrDefault, containsKey, put, putIfAbsent, both replace and
 * both remove forms (each one search and at most one SCX of the tree), and compute and merge (a
 * retry loop over those; the function may run more than once under contention, and a retry sees
 * the value the conflicting update left). Weakly consistent, in the {@code java.util.concurrent}
 * sense: scans and cursors (one linearizable leaf copy per step; they see every key present for
 * the whole scan, never a key absent for the whole scan, each key at most once, in order),
 * floor/ceiling/lower/higher/first/last (the entry was present during the call, and no key nearer
 * to the argument was present for the whole call), isEmpty and clear (a scan that removes what it
 * sees). size() is exact when no update runs, otherwise an estimate.
 *
 * <p>Memory: a node is 16 + 16 b bytes (b = {@link Builder#nodeDegree}, default 14: 240 bytes, a
 * 256-byte block with the domain's trailer); leaves are copied on every update, and each internal
 * node keeps the record of the last SCX that changed its links. {@link #stats()} reports the
 * bytes per entry. Every scan, cursor step and navigation allocates nothing on the heap (a cursor
 * allocates its two buffers once).
 */
public final class OffHeapLongMap implements LongLongNavigableMap {

    private final BrownAbTree tree;
    private final ReclaimDomain domain;
    private final long missing;
    private final long blockBytes;
    /** Per thread: leaf buffers by scan nesting depth (a visitor may scan again). */
    private final ThreadLocal<Buffers> buffers;
    private volatile boolean closed;

    private OffHeapLongMap(final Builder b) {
        final int degree = b.degree;
        final long recordBytes = BrownAbTree.recordBytes(degree);
        this.domain = ReclaimDomain.builder(b.scheme).allocator(b.allocator).recordBytes(recordBytes)
                .slots(BrownAbTree.SLOTS).build();
        try {
            this.tree = new BrownAbTree(domain, degree);
        } catch (final RuntimeException | Error e) {
            domain.close();
            throw e;
        }
        this.missing = b.missingValue;
        final long probe = domain.allocateExclusive();
        this.blockBytes = domain.allocator().usableSize(probe);
        domain.freeExclusive(probe);
        this.buffers = ThreadLocal.withInitial(() -> new Buffers(degree));
    }

    /** A builder with the defaults: {@link Scheme#DEBRA}, the shared allocator, missing value 0, degree 14. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * A map with the defaults.
     *
     * @return {@code builder().build()}
     */
    public static OffHeapLongMap create() {
        return builder().build();
    }

    /**
     * A map built by {@code builder} and loaded with strictly ascending {@code sortedKeys} and
     * their {@code values}, in full nodes (b entries per leaf, b children per internal node, but
     * the last two of each level): 19.7 bytes per entry at 10^6 keys and the default degree.
     *
     * @param builder the map's settings
     * @param sortedKeys strictly ascending keys
     * @param values their values, as many as keys
     * @return the loaded map
     * @throws IllegalArgumentException if the keys are not strictly ascending (unsorted or
     *     duplicate) or the arrays differ in length
     */
    public static OffHeapLongMap bulkLoad(final Builder builder, final long[] sortedKeys, final long[] values) {
        Objects.requireNonNull(builder, "builder must not be null");
        final OffHeapLongMap map = builder.build();
        try {
            map.tree.bulkLoad(sortedKeys, values);
        } catch (final RuntimeException | Error e) {
            map.close();
            throw e;
        }
        return map;
    }

    /** The settings of an {@link OffHeapLongMap}. */
    public static final class Builder {
        private Scheme scheme = Scheme.DEBRA;
        private LimboAllocator allocator = LimboAllocator.shared();
        private long missingValue;
        private int degree = BrownAbTree.DEFAULT_DEGREE;

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
         * The allocator the nodes come from (default: {@link LimboAllocator#shared()}).
         *
         * @param allocator the allocator
         * @return this builder
         */
        public Builder allocator(final LimboAllocator allocator) {
            this.allocator = Objects.requireNonNull(allocator, "allocator must not be null");
            return this;
        }

        /**
         * What {@link OffHeapLongMap#get}, {@link OffHeapLongMap#put} and
         * {@link OffHeapLongMap#remove(long)} return for "no mapping" (default 0). It stays a valid
         * value.
         *
         * @param missingValue the missing value
         * @return this builder
         */
        public Builder missingValue(final long missingValue) {
            this.missingValue = missingValue;
            return this;
        }

        /**
         * The node degree b: the most entries per leaf and children per internal node (default
         * 14: 240-byte nodes); a = max(b / 4, 2).
         *
         * @param degree b, in [{@value BrownAbTree#MIN_DEGREE}, {@value BrownAbTree#MAX_DEGREE}]
         * @return this builder
         * @throws IllegalArgumentException if the degree is out of range
         */
        public Builder nodeDegree(final int degree) {
            BrownAbTree.recordBytes(degree);
            this.degree = degree;
            return this;
        }

        /**
         * Builds the map, with a domain of its own.
         *
         * @return the map
         * @throws IllegalArgumentException if the scheme cannot serve the tree (a counting scheme)
         */
        public OffHeapLongMap build() {
            return new OffHeapLongMap(this);
        }
    }

    /** Per-thread leaf copies, one per scan nesting depth. */
    private static final class Buffers {
        private final int degree;
        private AbTreeLeafCopy[] copies = new AbTreeLeafCopy[2];
        private int depth;
        /** The entry {@link #locate} found. */
        private long foundKey;
        private long foundValue;

        Buffers(final int degree) {
            this.degree = degree;
        }

        AbTreeLeafCopy enter() {
            if (depth == copies.length) {
                copies = java.util.Arrays.copyOf(copies, 2 * depth);
            }
            if (copies[depth] == null) {
                copies[depth] = new AbTreeLeafCopy(degree);
            }
            return copies[depth++];
        }

        void exit() {
            depth--;
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("OffHeapLongMap is closed");
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
        return tree.get(key, missing);
    }

    @Override
    public long getOrDefault(final long key, final long defaultValue) {
        checkOpen();
        return tree.get(key, defaultValue);
    }

    @Override
    public boolean containsKey(final long key) {
        checkOpen();
        return tree.containsKey(key);
    }

    @Override
    public long put(final long key, final long value) {
        checkOpen();
        return tree.put(key, value, missing);
    }

    @Override
    public boolean putIfAbsent(final long key, final long value) {
        checkOpen();
        return tree.putIfAbsent(key, value);
    }

    @Override
    public boolean replace(final long key, final long value) {
        checkOpen();
        return tree.replace(key, value);
    }

    @Override
    public boolean replace(final long key, final long expectedValue, final long newValue) {
        checkOpen();
        return tree.replace(key, expectedValue, newValue);
    }

    @Override
    public long remove(final long key) {
        checkOpen();
        return tree.remove(key, missing);
    }

    @Override
    public boolean remove(final long key, final long expectedValue) {
        checkOpen();
        return tree.removeIfEquals(key, expectedValue);
    }

    /** {@inheritDoc} A retry loop ({@link AtomicRemapping}). */
    @Override
    public long compute(final long key, final LongRemappingFunction function) {
        checkOpen();
        return AtomicRemapping.compute(this, key, function);
    }

    /** {@inheritDoc} A retry loop ({@link AtomicRemapping}). */
    @Override
    public long merge(final long key, final long value, final LongBinaryOperator function) {
        checkOpen();
        return AtomicRemapping.merge(this, key, value, function);
    }

    @Override
    public long size() {
        checkOpen();
        return Math.max(0, tree.size());
    }

    @Override
    public boolean isEmpty() {
        return !first((k, v) -> { });
    }

    @Override
    public void clear() {
        checkOpen();
        final Buffers b = buffers.get();
        final AbTreeLeafCopy c = b.enter();
        try {
            long k = Long.MIN_VALUE;
            while (true) {
                tree.copyLeaf(k, c);
                for (int i = c.ceilingIndex(k); i < c.size(); i++) {
                    tree.remove(c.key(i), missing);
                }
                if (!c.hasAbove()) {
                    return;
                }
                k = c.above();
            }
        } finally {
            b.exit();
        }
    }

    @Override
    public IndexStats stats() {
        checkOpen();
        return new IndexStats(size(), tree.liveRecords() * blockBytes, domain.stats().inLimbo() * blockBytes,
                domain.scheme().id());
    }

    @Override
    public ConcurrentMap<Long, Long> asMap() {
        return new LongLongMapView(this);
    }

    @Override
    public ConcurrentNavigableMap<Long, Long> asNavigableMap() {
        return new LongLongNavigableMapView(this);
    }

    /**
     * Closes the tree (waiting for the operations in flight, as {@link BrownAbTree#close()} does),
     * then the map's domain. Idempotent; if operations are still in flight after the tree's
     * timeout it throws, and a later close tries again.
     */
    @Override
    public synchronized void close() {
        closed = true;
        tree.close();
        if (!domain.isClosed()) {
            domain.close();
        }
    }

    // ---------------------------------------------------------------- navigation

    /**
     * Finds the least key {@code >= key} ({@code up}) or the greatest {@code <= key} into the
     * thread's buffers' found entry; returns whether there is one.
     */
    private boolean locate(final long key, final boolean up, final Buffers b) {
        checkOpen();
        final AbTreeLeafCopy c = b.enter();
        try {
            final int i = up ? tree.ceiling(key, c) : tree.floor(key, c);
            if (i < 0) {
                return false;
            }
            b.foundKey = c.key(i);
            b.foundValue = c.value(i);
            return true;
        } finally {
            b.exit();
        }
    }

    /** {@link #locate}, then hands the entry to {@code action} (which may use the map). */
    private boolean nearest(final long key, final boolean up, final LongLongConsumer action) {
        final Buffers b = buffers.get();
        if (!locate(key, up, b)) {
            return false;
        }
        action.accept(b.foundKey, b.foundValue);
        return true;
    }

    @Override
    public boolean floor(final long key, final LongLongConsumer action) {
        return nearest(key, false, action);
    }

    @Override
    public boolean ceiling(final long key, final LongLongConsumer action) {
        return nearest(key, true, action);
    }

    @Override
    public boolean lower(final long key, final LongLongConsumer action) {
        checkOpen();
        return key != Long.MIN_VALUE && nearest(key - 1, false, action);
    }

    @Override
    public boolean higher(final long key, final LongLongConsumer action) {
        checkOpen();
        return key != Long.MAX_VALUE && nearest(key + 1, true, action);
    }

    @Override
    public boolean first(final LongLongConsumer action) {
        return nearest(Long.MIN_VALUE, true, action);
    }

    @Override
    public boolean last(final LongLongConsumer action) {
        return nearest(Long.MAX_VALUE, false, action);
    }

    @Override
    public long firstKey() {
        return endKey(true);
    }

    @Override
    public long lastKey() {
        return endKey(false);
    }

    private long endKey(final boolean first) {
        final Buffers b = buffers.get();
        if (!locate(first ? Long.MIN_VALUE : Long.MAX_VALUE, first, b)) {
            throw new NoSuchElementException("the map is empty");
        }
        return b.foundKey;
    }

    // ---------------------------------------------------------------- scans

    @Override
    public long scan(final long from, final boolean fromInclusive, final long to, final boolean toInclusive,
                     final boolean descending, final LongLongPredicate visitor) {
        Objects.requireNonNull(visitor, "visitor must not be null");
        checkOpen();
        if (!fromInclusive && from == Long.MAX_VALUE || !toInclusive && to == Long.MIN_VALUE) {
            return 0;
        }
        final long lo = fromInclusive ? from : from + 1;
        final long hi = toInclusive ? to : to - 1;
        if (lo > hi) {
            return 0;
        }
        final Buffers b = buffers.get();
        final AbTreeLeafCopy c = b.enter();
        try {
            long visited = 0;
            long k = descending ? hi : lo;
            while (true) {
                tree.copyLeaf(k, c);
                if (descending) {
                    for (int i = c.floorIndex(k); i >= 0 && c.key(i) >= lo; i--) {
                        visited++;
                        if (!visitor.test(c.key(i), c.value(i))) {
                            return visited;
                        }
                    }
                    if (!c.hasBelow() || c.below() <= lo) {
                        return visited;
                    }
                    k = c.below() - 1;
                } else {
                    for (int i = c.ceilingIndex(k); i < c.size() && c.key(i) <= hi; i++) {
                        visited++;
                        if (!visitor.test(c.key(i), c.value(i))) {
                            return visited;
                        }
                    }
                    if (!c.hasAbove() || c.above() > hi) {
                        return visited;
                    }
                    k = c.above();
                }
            }
        } finally {
            b.exit();
        }
    }

    @Override
    public LongLongCursor cursor(final long from, final boolean fromInclusive, final long to,
                                 final boolean toInclusive, final boolean descending) {
        checkOpen();
        final boolean empty = !fromInclusive && from == Long.MAX_VALUE || !toInclusive && to == Long.MIN_VALUE;
        final long lo = empty ? 1 : fromInclusive ? from : from + 1;
        final long hi = empty ? 0 : toInclusive ? to : to - 1;
        return new Cursor(lo, hi, descending);
    }

    /**
     * A weakly consistent cursor over [lo, hi]: one leaf copy at a time, into buffers it owns; the
     * next copy starts from the copied leaf's bound, so no key is seen twice.
     */
    private final class Cursor implements LongLongCursor {
        private final AbTreeLeafCopy copy = new AbTreeLeafCopy(tree.degree());
        private final long lo;
        private final long hi;
        private final boolean descending;
        /** The key the next copy starts from. */
        private long next;
        /** Whether a copy was made, and whether leaves beyond it may hold keys of the range. */
        private boolean copied;
        private boolean more;
        /** The index of the next entry in the copy, and of the current one. */
        private int pos;
        private int current;
        private boolean onEntry;
        private boolean ended;
        private boolean closedCursor;

        Cursor(final long lo, final long hi, final boolean descending) {
            this.lo = lo;
            this.hi = hi;
            this.descending = descending;
            this.next = descending ? hi : lo;
            this.ended = lo > hi;
        }

        @Override
        public boolean next() {
            if (closedCursor) {
                throw new IllegalStateException("the cursor is closed");
            }
            onEntry = false;
            if (ended) {
                return false;
            }
            while (true) {
                if (copied) {
                    if (descending ? pos >= 0 : pos < copy.size()) {
                        final long k = copy.key(pos);
                        if (descending ? k < lo : k > hi) {
                            return end();
                        }
                        current = pos;
                        pos += descending ? -1 : 1;
                        onEntry = true;
                        return true;
                    }
                    if (!more) {
                        return end();
                    }
                }
                checkOpen();
                final long k = next;
                tree.copyLeaf(k, copy);
                copied = true;
                if (descending) {
                    more = copy.hasBelow() && copy.below() > lo;
                    next = more ? copy.below() - 1 : next;
                    pos = copy.floorIndex(k);
                } else {
                    more = copy.hasAbove() && copy.above() <= hi;
                    next = more ? copy.above() : next;
                    pos = copy.ceilingIndex(k);
                }
            }
        }

        private boolean end() {
            ended = true;
            return false;
        }

        @Override
        public long key() {
            requireEntry();
            return copy.key(current);
        }

        @Override
        public long value() {
            requireEntry();
            return copy.value(current);
        }

        private void requireEntry() {
            if (closedCursor) {
                throw new IllegalStateException("the cursor is closed");
            }
            if (!onEntry) {
                throw new IllegalStateException(ended ? "the cursor is past its last entry"
                        : "call next() before reading the cursor's entry");
            }
        }

        @Override
        public void close() {
            closedCursor = true;
            onEntry = false;
        }
    }
}
