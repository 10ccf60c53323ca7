package dev.limbo.index;

import java.util.Map;
import java.util.Objects;

/**
 * An entry that an entry-set iterator returns: a snapshot of the key and the value the scan saw.
 * {@link #setValue} writes through to the view ({@code put}), as {@code ConcurrentHashMap}'s entries
 * do, and returns the value this entry held.
 */
final class ViewEntry implements Map.Entry<Long, Long> {

    private final AbstractLongLongView owner;
    private final long key;
    private long value;

    ViewEntry(AbstractLongLongView owner, long key, long value) {
        this.owner = owner;
        this.key = key;
        this.value = value;
    }

    @Override
    public Long getKey() {
        return key;
    }

    @Override
    public Long getValue() {
        return value;
    }

    @Override
    public Long setValue(Long newValue) {
        Objects.requireNonNull(newValue, "null value");
        final long old = value;
        owner.put(key, newValue);
        value = newValue;
        return old;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Map.Entry<?, ?> e
                && e.getKey() instanceof Long k && k == key
                && e.getValue() instanceof Long v && v == value;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(key) ^ Long.hashCode(value);
    }

    @Override
    public String toString() {
        return key + "=" + value;
    }
}
