package dev.limbo.index;

import java.util.Objects;
import java.util.function.LongBinaryOperator;

/**
 * {@link LongLongMap#compute} and {@link LongLongMap#merge} as retry loops over a map's
 * linearizable conditional operations ({@code putIfAbsent}, {@code replace(key, expected, new)}),
 * for the maps whose structures have no remapping operation of their own. Each loop reads the
 * mapping, applies the function, then replaces exactly the value it read (or inserts if there was
 * none); a conflicting update makes it read and apply again, so the function may run more than
 * once. Linearizable at the conditional operation that succeeds. Lock-free: a retry means another
 * update of the key succeeded.
 */
final class AtomicRemapping {

    private AtomicRemapping() {
    }

    /** {@link LongLongMap#compute} over {@code map}. */
    static long compute(final LongLongMap map, final long key, final LongRemappingFunction function) {
        Objects.requireNonNull(function, "function must not be null");
        final long missing = map.missingValue();
        final long other = missing ^ 1;
        while (true) {
            long old = map.getOrDefault(key, missing);
            boolean present = true;
            if (old == missing) { // absent, or mapped to the missing value: ask with another default
                final long again = map.getOrDefault(key, other);
                present = again != other || map.containsKey(key);
                old = present ? again : missing;
            }
            final long value = function.apply(key, present, old);
            if (present ? map.replace(key, old, value) : map.putIfAbsent(key, value)) {
                return value;
            }
        }
    }

    /** {@link LongLongMap#merge} over {@code map}. */
    static long merge(final LongLongMap map, final long key, final long value, final LongBinaryOperator function) {
        Objects.requireNonNull(function, "function must not be null");
        final long other = map.missingValue() ^ 1;
        while (true) {
            if (map.putIfAbsent(key, value)) {
                return value;
            }
            final long old = map.getOrDefault(key, other);
            if (old == other && !map.containsKey(key)) {
                continue; // removed meanwhile: insert again
            }
            final long merged = function.applyAsLong(old, value);
            if (map.replace(key, old, merged)) {
                return merged;
            }
        }
    }
}
