package dev.limbo.index;

import java.util.AbstractMap;
import java.util.Collection;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentMap;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The map views' common part: the {@link ConcurrentMap} operations of one key, boxed, exact where
 * the primitive operations answer with the map's missing value, and {@code null}-free
 * ({@link NullPointerException} for a {@code null} key, value or function). A subclass says which
 * keys it holds ({@link #readKey}, {@link #writeKey}) and how it iterates: {@link LongLongMapView}
 * (every key) and {@link LongLongNavigableMapView} (a key range, a direction).
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
 * <p><b>Memory ordering, reclamation, ABA.</b> A view has no shared mutable state of its own (its
 * fields are final) and no non-plain access: every ordering it relies on is the map's, whose point
 * operations are linearizable. It never holds an off-heap address or a reclamation guard: values
 * travel as {@code long}s, so nothing it keeps can be freed under it. ABA on a value is harmless, as
 * said above: a conditional operation compares values, and the value it expects is the value the
 * result was computed from.
 *
 * <p>{@code equals}, {@code hashCode} and {@code toString} are {@link AbstractMap}'s, over the entry
 * set.
 */
abstract class AbstractLongLongView extends AbstractMap<Long, Long> implements ConcurrentMap<Long, Long> {

    /** The first default of an exact read: a value that stored values rarely equal. */
    private static final long PROBE = 0x9E3779B97F4A7C15L;

    /** The map this view shows. */
    final LongLongMap map;

    AbstractLongLongView(LongLongMap map) {
        this.map = Objects.requireNonNull(map, "map");
    }

    /**
     * The key of a read or a removal.
     *
     * @param key the caller's key
     * @return the key, or {@code null} when this view has no mapping for it (another type, or
     *     outside the view's range)
     * @throws NullPointerException for a {@code null} key
     */
    abstract Long readKey(Object key);

    /**
     * The key of a write.
     *
     * @param key the caller's key
     * @return the key
     * @throws NullPointerException for a {@code null} key
     * @throws IllegalArgumentException for a key this view cannot hold (outside its range)
     */
    abstract long writeKey(Long key);

    /**
     * A weakly consistent iterator over this view's entries (see {@link BatchIterator}); its
     * {@code remove()} removes the last key it returned from this view.
     *
     * @param <T> what the iterator returns
     * @param maker turns each entry into what the iterator returns
     * @return a new iterator
     */
    abstract <T> Iterator<T> iterator(EntryMaker<T> maker);

    /**
     * The {@link java.util.Spliterator} characteristic that tells whether this view's iteration
     * order is defined.
     *
     * @return {@link java.util.Spliterator#ORDERED} for a view in key order, otherwise 0
     */
    abstract int order();

    // ---- the exact operations on a primitive key ----

    /** The key's value, or {@code null} when it has none; linearizable (class notes). */
    private Long getAt(long key) {
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

    /**
     * Inserts the mapping if the key has none; otherwise, when {@code overwrite}, replaces its
     * value (put), else leaves it (putIfAbsent).
     *
     * @return the value the key had, or {@code null} when it had none
     */
    private Long insertAt(long key, long value, boolean overwrite) {
        for (;;) {
            if (map.putIfAbsent(key, value)) {
                return null;
            }
            final Long old = getAt(key);
            if (old != null && (!overwrite || map.replace(key, old, value))) {
                return old;
            }
        }
    }

    /**
     * Replaces the key's value with {@code value}, or removes its mapping when {@code value} is
     * {@code null}, if it has a mapping.
     *
     * @return the value the key had, or {@code null} when it had none
     */
    private Long updateAt(long key, Long value) {
        for (;;) {
            final Long old = getAt(key);
            if (old == null || commit(key, old, value)) {
                return old;
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
    public final Long get(Object key) {
        final Long k = readKey(key);
        return k == null ? null : getAt(k);
    }

    @Override
    public final boolean containsKey(Object key) {
        final Long k = readKey(key);
        return k != null && map.containsKey(k);
    }

    @Override
    public final boolean containsValue(Object value) {
        Objects.requireNonNull(value, "null value");
        return super.containsValue(value);
    }

    @Override
    public final Long put(Long key, Long value) {
        return insertAt(writeKey(key), value(value), true);
    }

    @Override
    public final Long putIfAbsent(Long key, Long value) {
        return insertAt(writeKey(key), value(value), false);
    }

    @Override
    public final Long remove(Object key) {
        final Long k = readKey(key);
        return k == null ? null : updateAt(k, null);
    }

    @Override
    public final boolean remove(Object key, Object value) {
        final Long k = readKey(key);
        return k != null && value instanceof Long v && map.remove(k, v);
    }

    @Override
    public final Long replace(Long key, Long value) {
        return updateAt(writeKey(key), value(value));
    }

    @Override
    public final boolean replace(Long key, Long oldValue, Long newValue) {
        return map.replace(writeKey(key), value(oldValue), value(newValue));
    }

    @Override
    public final Long computeIfAbsent(Long key, Function<? super Long, ? extends Long> function) {
        final long k = writeKey(key);
        Objects.requireNonNull(function, "null function");
        final Long old = getAt(k);
        if (old != null) {
            return old;
        }
        final Long value = function.apply(k);
        if (value == null) {
            return null;
        }
        final Long raced = insertAt(k, value, false);
        return raced != null ? raced : value;
    }

    @Override
    public final Long computeIfPresent(Long key, BiFunction<? super Long, ? super Long, ? extends Long> function) {
        final long k = writeKey(key);
        Objects.requireNonNull(function, "null function");
        for (;;) {
            final Long old = getAt(k);
            if (old == null) {
                return null;
            }
            final Long value = function.apply(k, old);
            if (commit(k, old, value)) {
                return value;
            }
        }
    }

    @Override
    public final Long compute(Long key, BiFunction<? super Long, ? super Long, ? extends Long> function) {
        final long k = writeKey(key);
        Objects.requireNonNull(function, "null function");
        for (;;) {
            final Long old = getAt(k);
            final Long value = function.apply(k, old);
            if (commit(k, old, value)) {
                return value;
            }
        }
    }

    @Override
    public final Long merge(Long key, Long value, BiFunction<? super Long, ? super Long, ? extends Long> function) {
        final long k = writeKey(key);
        final long v = value(value);
        Objects.requireNonNull(function, "null function");
        for (;;) {
            final Long old = getAt(k);
            final Long merged = old == null ? Long.valueOf(v) : function.apply(old, v);
            if (commit(k, old, merged)) {
                return merged;
            }
        }
    }

    @Override
    public final Collection<Long> values() {
        return new ValuesView(this);
    }

    @Override
    public final Set<Map.Entry<Long, Long>> entrySet() {
        return new EntrySetView(this);
    }
}
