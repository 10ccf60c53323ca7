package dev.limbo.index;

/** Visits one {@code long -> long} entry of a scan, without boxing, and says whether to go on. */
@FunctionalInterface
public interface LongLongPredicate {

    /**
     * Visits one entry.
     *
     * @param key the entry's key
     * @param value the entry's value
     * @return {@code true} to go on with the scan, {@code false} to stop it
     */
    boolean test(long key, long value);
}
