package dev.limbo.index;

/** Computes a key's new value from its current mapping, for {@link LongLongMap#compute}. */
@FunctionalInterface
public interface LongRemappingFunction {

    /**
     * Computes the new value.
     *
     * @param key the key
     * @param present whether the key has a mapping now
     * @param oldValue its value when {@code present}, otherwise the map's
     *     {@link LongLongMap#missingValue()}
     * @return the value to map the key to
     */
    long apply(long key, boolean present, long oldValue);
}
