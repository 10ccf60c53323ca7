package dev.limbo.index;

/**
 * Turns an entry that an iterator found into what the iterator returns: a {@link ViewEntry}, the
 * boxed key or the boxed value.
 *
 * @param <T> what the iterator returns
 */
@FunctionalInterface
interface EntryMaker<T> {

    /**
     * Makes one element.
     *
     * @param owner the view that iterates
     * @param key the entry's key
     * @param value the entry's value, as the scan saw it
     * @return the element
     */
    T make(AbstractLongLongView owner, long key, long value);
}
