package dev.limbo.index;

import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * The iterators of the map views: they copy entries from the map in batches ({@link #refill}) and
 * hand them out one by one, so that no reclamation guard is held between two calls and the caller's
 * code never runs inside a scan.
 *
 * <p>Weakly consistent, as {@code ConcurrentSkipListMap} documents it: each batch comes from a
 * weakly consistent scan that runs while the iteration runs, so a key present for the whole
 * iteration is returned, a key absent for the whole iteration is not, no key is returned twice (the
 * subclass resumes after the last key it copied, or copies once), and a concurrent update never
 * makes the iterator throw {@link java.util.ConcurrentModificationException}. The values are those
 * the scan saw. {@link #remove()} removes the last returned key from the view, whatever its value is
 * by then, as {@code ConcurrentSkipListMap}'s iterators do.
 *
 * @param <T> what the iterator returns
 */
abstract class BatchIterator<T> implements Iterator<T> {

    private final AbstractLongLongView owner;
    private final EntryMaker<T> maker;
    /** The current batch's keys; a subclass's {@link #refill} fills (and may replace) it. */
    long[] keys;
    /** The current batch's values, parallel to {@link #keys}. */
    long[] values;
    /** Set by {@link #refill} when the batch it loaded is the last one. */
    boolean exhausted;
    private int count;
    private int next;
    private boolean canRemove;
    private long lastKey;

    BatchIterator(AbstractLongLongView owner, EntryMaker<T> maker, int capacity) {
        this.owner = owner;
        this.maker = maker;
        this.keys = new long[capacity];
        this.values = new long[capacity];
    }

    /**
     * Loads the next batch into {@link #keys} and {@link #values}; sets {@link #exhausted} when no
     * batch follows it.
     *
     * @return the number of entries loaded (0 only when it is the last batch)
     */
    abstract int refill();

    @Override
    public final boolean hasNext() {
        while (next == count) {
            if (exhausted) {
                return false;
            }
            count = refill();
            next = 0;
        }
        return true;
    }

    @Override
    public final T next() {
        if (!hasNext()) {
            throw new NoSuchElementException("the iteration has no further entry");
        }
        final long key = keys[next];
        final long value = values[next];
        next++;
        lastKey = key;
        canRemove = true;
        return maker.make(owner, key, value);
    }

    @Override
    public final void remove() {
        if (!canRemove) {
            throw new IllegalStateException("remove() needs a next() since the last remove()");
        }
        canRemove = false;
        owner.remove(lastKey);
    }
}
