package dev.limbo.index;

import java.util.AbstractMap;
import java.util.Collection;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.Spliterator;
import java.util.concurrent.ConcurrentMap;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The {@link ConcurrentMap} view of a {@link LongLongMap} ({@link LongLongMap#asMap()}): boxed,
 * exact where the primitive operations answer with the map's missing value, and {@code null}-free
 * ({@link NullPointerException} for a {@code null} key, value or function).
 *
 * <h2>Implementation notes</h2>
 *
 * <p><b>Exact read.</b> The primitive {@code getOrDefault(k, d)} answers {@code d} both when {@code k}
 * is absent and when it is mapped to {@code d}. {@link #getAt} resolves that with three linearizable
 * reads: {@code getOrDefault(k, P)} (any answer other than {@code P} is the value, at that read);
 * else {@code containsKey(k)} ({@code false}: absent, at that read); else
 * {@code getOrDefault(k, ~P)} (any answer other than {@code ~P} is the value, at that read); else
 * retry. {@code P} is a constant that values rarely equal, so a present key costs one read and an
 * absent key two. A retry happens only if the three reads saw states that no single state explains
 * ({@code absent or P}, then present, then {@code absent or ~P}): some update linearized between them,
 * so the loop is lock-free.
 *
 * <p><b>Updates: CAS loops over the conditional operations.</b> Each update reads the current mapping
 * exactly, computes, and commits with the conditional primitive that succeeds only if the mapping is
 * still the one it read: {@code putIfAbsent(k, v)} (was absent), {@code replace(k, old, new)} (was
 * {@code old}), {@code remove(k, old)} (was {@code old}). The operation is linearizable at that
 * successful conditional operation, where the mapping is the one the result was computed from (an ABA
 * change in between is invisible and harmless: the mapping is {@code old} again at the commit); an
 * operation that answers without writing (e.g. {@code remove} of an absent key, {@code compute}
 * returning {@code null} for an absent key) is linearizable at its exact read. A conditional operation
 * fails only when another update changed the key's mapping since the read, so every retry follows
 * another thread's completed update: lock-free, not wait-free. The functions of {@code compute},
 * {@code computeIfPresent} and {@code merge} may therefore run more than once;
 * {@code computeIfAbsent}'s runs at most once (if the key gets a mapping meanwhile, that mapping
 * wins and is returned).
 * <ul>
 *   <li>{@code put}: {@code putIfAbsent} succeeds (returns {@code null}), or exact read: absent again
 *       → retry; else {@code replace(k, old, v)} (returns {@code old}).</li>
 *   <li>{@code putIfAbsent}: {@code putIfAbsent} succeeds, or an exact read that finds a value (the
 *       linearization point) returns it; absent again → retry.</li>
 *   <li>{@code remove(k)} / {@code replace(k, v)}: exact read ({@code null}: absent, done), then
 *       {@code remove(k, old)} / {@code replace(k, old, v)}.</li>
 *   <li>{@code remove(k, v)}, {@code replace(k, old, new)}, {@code containsKey}: the primitive, which
 *       is exact.</li>
 *   <li>{@code compute*}, {@code merge}: exact read, the function, then the conditional operation
 *       the (old, new) pair calls for: insert, replace or remove.</li>
 * </ul>
 *
 * <p><b>Iteration, size.</b> Iterators are weakly consistent (see {@link BatchIterator}): a
 * {@link RangeIterator} in key order when the map is a {@link LongLongNavigableMap}, otherwise a
 * {@link SnapshotIterator} that copies every entry with {@link LongLongMap#scan(LongLongPredicate)}.
 * {@link #size()} is the map's (an estimate while updates run), capped at
 * {@link Integer#MAX_VALUE}. {@code equals}, {@code hashCode} and {@code toString} are
 * {@link AbstractMap}'s, over the entry set.
 */
final class LongLongMapView extends AbstractMap<Long, Long> implements LongLongView {

    /** The first default of an exact read: a value that stored values rarely equal. */
    private static final long PROBE = 0x9E3779B97F4A7C15L;

    private final LongLongMap map;

    LongLongMapView(LongLongMap map) {
        this.map = Objects.requireNonNull(map, "map");
    }

    // ---- the exact operations on a primitive key, shared with LongLongNavigableMapView ----

    /** The key's value, or {@code null} when it has none; linearizable (class notes). */
    Long getAt(long key) {
        for (;;) {
            long value = map.getOrDefault(key, PROBE);
            if (value != PROBE) {
                return value;
            }
            if (!map.containsKey(key)) {
                return null;
            }
            value = map.getOrDefault(key, ~PROBE);
            if (value != ~PROBE) {
                return value;
            }
        }
    }

    Long putAt(long key, long value) {
        for (;;) {
            if (map.putIfAbsent(key, value)) {
                return null;
            }
            final Long old = getAt(key);
            if (old != null && map.replace(key, old, value)) {
                return old;
            }
        }
    }

    Long putIfAbsentAt(long key, long value) {
        for (;;) {
            if (map.putIfAbsent(key, value)) {
                return null;
            }
            final Long old = getAt(key);
            if (old != null) {
                return old;
            }
        }
    }

    Long removeAt(long key) {
        for (;;) {
            final Long old = getAt(key);
            if (old == null || map.remove(key, old)) {
                return old;
            }
        }
    }

    Long replaceAt(long key, long value) {
        for (;;) {
            final Long old = getAt(key);
            if (old == null || map.replace(key, old, value)) {
                return old;
            }
        }
    }

    Long computeIfAbsentAt(long key, Function<? super Long, ? extends Long> function) {
        Objects.requireNonNull(function, "null function");
        final Long old = getAt(key);
        if (old != null) {
            return old;
        }
        final Long value = function.apply(key);
        if (value == null) {
            return null;
        }
        final Long raced = putIfAbsentAt(key, value);
        return raced != null ? raced : value;
    }

    Long computeIfPresentAt(long key, BiFunction<? super Long, ? super Long, ? extends Long> function) {
        Objects.requireNonNull(function, "null function");
        for (;;) {
            final Long old = getAt(key);
            if (old == null) {
                return null;
            }
            final Long value = function.apply(key, old);
            if (value == null ? map.remove(key, old) : map.replace(key, old, value)) {
                return value;
            }
        }
    }

    Long computeAt(long key, BiFunction<? super Long, ? super Long, ? extends Long> function) {
        Objects.requireNonNull(function, "null function");
        for (;;) {
            final Long old = getAt(key);
            final Long value = function.apply(key, old);
            if (commit(key, old, value)) {
                return value;
            }
        }
    }

    Long mergeAt(long key, long value, BiFunction<? super Long, ? super Long, ? extends Long> function) {
        Objects.requireNonNull(function, "null function");
        for (;;) {
            final Long old = getAt(key);
            final Long merged = old == null ? Long.valueOf(value) : function.apply(old, value);
            if (commit(key, old, merged)) {
                return merged;
            }
        }
    }

    /** Changes the key's mapping from {@code old} to {@code value} ({@code null}: absent), if it is still {@code old}. */
    private boolean commit(long key, Long old, Long value) {
        if (old == null) {
            return value == null || map.putIfAbsent(key, value);
        }
        return value == null ? map.remove(key, old) : map.replace(key, old, value);
    }

    /** The key as a {@code long}: {@code null} throws, a key of another type has no mapping. */
    static Long queryKey(Object key) {
        Objects.requireNonNull(key, "null key");
        return key instanceof Long k ? k : null;
    }

    static long key(Long key) {
        return Objects.requireNonNull(key, "null key");
    }

    static long value(Long value) {
        return Objects.requireNonNull(value, "null value");
    }

    // ---- Map and ConcurrentMap ----

    @Override
    public Long get(Object key) {
        final Long k = queryKey(key);
        return k == null ? null : getAt(k);
    }

    @Override
    public boolean containsKey(Object key) {
        final Long k = queryKey(key);
        return k != null && map.containsKey(k);
    }

    @Override
    public boolean containsValue(Object value) {
        Objects.requireNonNull(value, "null value");
        return super.containsValue(value);
    }

    @Override
    public Long put(Long key, Long value) {
        return putAt(key(key), value(value));
    }

    @Override
    public Long putIfAbsent(Long key, Long value) {
        return putIfAbsentAt(key(key), value(value));
    }

    @Override
    public Long remove(Object key) {
        final Long k = queryKey(key);
        return k == null ? null : removeAt(k);
    }

    @Override
    public boolean remove(Object key, Object value) {
        final Long k = queryKey(key);
        return k != null && value instanceof Long v && map.remove(k, v);
    }

    @Override
    public Long replace(Long key, Long value) {
        return replaceAt(key(key), value(value));
    }

    @Override
    public boolean replace(Long key, Long oldValue, Long newValue) {
        return map.replace(key(key), value(oldValue), value(newValue));
    }

    @Override
    public Long computeIfAbsent(Long key, Function<? super Long, ? extends Long> function) {
        return computeIfAbsentAt(key(key), function);
    }

    @Override
    public Long computeIfPresent(Long key, BiFunction<? super Long, ? super Long, ? extends Long> function) {
        return computeIfPresentAt(key(key), function);
    }

    @Override
    public Long compute(Long key, BiFunction<? super Long, ? super Long, ? extends Long> function) {
        return computeAt(key(key), function);
    }

    @Override
    public Long merge(Long key, Long value, BiFunction<? super Long, ? super Long, ? extends Long> function) {
        return mergeAt(key(key), value(value), function);
    }

    @Override
    public int size() {
        return (int) Math.min(map.size(), Integer.MAX_VALUE);
    }

    @Override
    public boolean isEmpty() {
        return map.isEmpty();
    }

    @Override
    public void clear() {
        map.clear();
    }

    @Override
    public Set<Long> keySet() {
        return new KeySetView(this);
    }

    @Override
    public Collection<Long> values() {
        return new ValuesView(this);
    }

    @Override
    public Set<Map.Entry<Long, Long>> entrySet() {
        return new EntrySetView(this);
    }

    @Override
    public <T> Iterator<T> iterator(EntryMaker<T> maker) {
        if (map instanceof LongLongNavigableMap ordered) {
            return new RangeIterator<>(this, maker, ordered, Long.MIN_VALUE, true, Long.MAX_VALUE, true,
                    false);
        }
        return new SnapshotIterator<>(this, maker, map);
    }

    @Override
    public int order() {
        return map instanceof LongLongNavigableMap ? Spliterator.ORDERED : 0;
    }
}
