package dev.limbo.index;

import java.util.concurrent.ConcurrentMap;
import java.util.function.LongBinaryOperator;

/**
 * A concurrent {@code long -> long} map whose entries live off-heap: the point operations that
 * {@code OffHeapLongMap} and {@code OffHeapLongHashMap} share.
 *
 * <p>Every {@code long} is a valid key and a valid value. The operations that answer "no mapping"
 * with a value ({@link #get}, {@link #put}, {@link #remove(long)}) return the map's
 * {@link #missingValue()}, which its builder chooses (0 unless told otherwise); where a stored value
 * may equal it, use {@link #containsKey}, {@link #getOrDefault}, the {@code boolean} forms or the
 * {@link #asMap()} view, which are exact.
 *
 * <p>Every point operation is linearizable. The operations allocate nothing on the heap, and
 * they are safe to call from any number of platform or virtual threads. After {@link #close()}
 * every operation throws {@link IllegalStateException}.
 */
public interface LongLongMap extends AutoCloseable {

    /**
     * The value that {@link #get}, {@link #put} and {@link #remove(long)} return for "no mapping".
     *
     * @return the missing value the builder chose
     */
    long missingValue();

    /**
     * The key's value.
     *
     * @param key any key
     * @return its value, or {@link #missingValue()} when it has none
     */
    long get(long key);

    /**
     * The key's value, or a default.
     *
     * @param key any key
     * @param defaultValue what to return when the key has no mapping
     * @return its value, or {@code defaultValue}
     */
    long getOrDefault(long key, long defaultValue);

    /**
     * Whether the key has a mapping.
     *
     * @param key any key
     * @return {@code true} when it has one
     */
    boolean containsKey(long key);

    /**
     * Maps the key to the value, replacing any mapping it had.
     *
     * @param key any key
     * @param value any value
     * @return the previous value, or {@link #missingValue()} when there was none
     */
    long put(long key, long value);

    /**
     * Maps the key to the value if it has no mapping.
     *
     * @param key any key
     * @param value any value
     * @return {@code true} when it inserted the mapping, {@code false} when the key had one (left
     *     unchanged)
     */
    boolean putIfAbsent(long key, long value);

    /**
     * Replaces the key's value if it has a mapping.
     *
     * @param key any key
     * @param value the new value
     * @return {@code true} when the key had a mapping (now replaced)
     */
    boolean replace(long key, long value);

    /**
     * Replaces the key's value if it is mapped to {@code expectedValue}.
     *
     * @param key any key
     * @param expectedValue the value it must have
     * @param newValue the value to give it
     * @return {@code true} when it replaced the value
     */
    boolean replace(long key, long expectedValue, long newValue);

    /**
     * Removes the key's mapping.
     *
     * @param key any key
     * @return the value it had, or {@link #missingValue()} when there was none
     */
    long remove(long key);

    /**
     * Removes the key's mapping if it is mapped to {@code expectedValue}.
     *
     * @param key any key
     * @param expectedValue the value it must have
     * @return {@code true} when it removed the mapping
     */
    boolean remove(long key, long expectedValue);

    /**
     * Maps the key to {@code function}'s result, atomically: the result replaces exactly the mapping
     * (or absence) that the function was given. Under contention the function may be called more
     * than once, so it should be free of side effects.
     *
     * @param key any key
     * @param function computes the new value from the current mapping
     * @return the new value
     */
    long compute(long key, LongRemappingFunction function);

    /**
     * Maps an absent key to {@code value}, or a present key to {@code function(oldValue, value)},
     * atomically (see {@link #compute}).
     *
     * @param key any key
     * @param value the value to insert or to merge with
     * @param function merges the old value with {@code value}
     * @return the new value
     */
    long merge(long key, long value, LongBinaryOperator function);

    /**
     * Visits every entry until the visitor returns {@code false}: in key order for a
     * {@link LongLongNavigableMap}, otherwise in no particular order. Weakly consistent, as
     * {@link LongLongNavigableMap#scan} states it: it sees every key present for the whole visit,
     * never a key absent for the whole visit, each key at most once. The {@link #asMap()} view
     * iterates through it.
     *
     * @param visitor receives each entry; {@code false} stops the visit
     * @return the number of entries visited (including the one whose visit returned {@code false})
     */
    long scan(LongLongPredicate visitor);

    /**
     * The number of mappings: exact when no update runs, otherwise an estimate.
     *
     * @return the number of mappings
     */
    long size();

    /**
     * Whether the map has no mapping ({@link #size()} {@code == 0}).
     *
     * @return {@code true} when it is empty
     */
    boolean isEmpty();

    /**
     * Removes every mapping. Concurrent updates may leave some of theirs in place.
     */
    void clear();

    /**
     * The map's size and memory.
     *
     * @return a snapshot
     */
    IndexStats stats();

    /**
     * A {@link ConcurrentMap} view: boxed, exact where the primitive operations return
     * {@link #missingValue()}, with weakly consistent iterators. It rejects {@code null} keys and
     * values with a {@link NullPointerException}.
     *
     * @return the view, backed by this map
     */
    ConcurrentMap<Long, Long> asMap();

    /**
     * Refuses new operations, waits for those in flight and frees every entry. Idempotent.
     */
    @Override
    void close();
}
