package dev.limbo.index;

/**
 * A position in a range scan of a {@link LongLongNavigableMap}, stepped with {@link #next()}: a cursor
 * allocates nothing per step and holds no reclamation guard between steps, so a cursor left open
 * delays no reclamation. It is weakly consistent (see {@link LongLongNavigableMap#scan}) and
 * confined to the thread that opened it.
 *
 * <pre>{@code
 * try (LongLongCursor c = map.cursor(100, 200, false)) {
 *     while (c.next()) {
 *         use(c.key(), c.value());
 *     }
 * }
 * }</pre>
 */
public interface LongLongCursor extends AutoCloseable {

    /**
     * Moves to the next entry of the range.
     *
     * @return {@code false} when the range has no further entry
     */
    boolean next();

    /**
     * The current entry's key.
     *
     * @return the key
     * @throws IllegalStateException before the first {@link #next()} or after one that returned
     *     {@code false}
     */
    long key();

    /**
     * The current entry's value, as the scan saw it.
     *
     * @return the value
     * @throws IllegalStateException before the first {@link #next()} or after one that returned
     *     {@code false}
     */
    long value();

    /** Ends the scan. Idempotent. */
    @Override
    void close();
}
