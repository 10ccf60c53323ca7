package dev.limbo.index;

/** Receives one {@code long -> long} entry, without boxing. */
@FunctionalInterface
public interface LongLongConsumer {

    /**
     * Accepts one entry.
     *
     * @param key the entry's key
     * @param value the entry's value
     */
    void accept(long key, long value);
}
