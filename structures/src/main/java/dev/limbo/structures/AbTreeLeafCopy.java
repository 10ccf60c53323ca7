package dev.limbo.structures;

import java.util.Objects;

/**
 * A copy of one leaf's entries and of the bounds of its key range, filled by
 * {@link BrownAbTree#copyLeaf}: the building block of scans, navigation and cursors. Confined to the
 * thread that fills it; its buffers are allocated once.
 */
public final class AbTreeLeafCopy {
    final long[] keys;
    final long[] values;
    int size;
    long lo;
    long hi;
    boolean hasLo;
    boolean hasHi;

    /** A copy with room for a leaf of a tree of degree {@code degree}. */
    public AbTreeLeafCopy(final int degree) {
        BrownAbTree.recordBytes(degree);
        keys = new long[degree];
        values = new long[degree];
    }

    /** The number of entries copied. */
    public int size() {
        return size;
    }

    /** Key {@code i}, ascending in {@code i}. */
    public long key(final int i) {
        return keys[Objects.checkIndex(i, size)];
    }

    /** Value {@code i}. */
    public long value(final int i) {
        return values[Objects.checkIndex(i, size)];
    }

    /**
     * Whether keys above the leaf's range may exist: then every key of the map at or above
     * {@link #above()} lies to the right, and no key between the leaf's last and it.
     */
    public boolean hasAbove() {
        return hasHi;
    }

    /** The least key above the leaf's range; valid if {@link #hasAbove()}. */
    public long above() {
        return hi;
    }

    /**
     * Whether keys below the leaf's range may exist: then they are all below {@link #below()},
     * the least key of the leaf's range ({@code > Long.MIN_VALUE}).
     */
    public boolean hasBelow() {
        return hasLo;
    }

    /** The least key of the leaf's range; valid if {@link #hasBelow()}. */
    public long below() {
        return lo;
    }

    /** The index of the first key {@code >= key}, or {@link #size()} if none. */
    public int ceilingIndex(final long key) {
        int i = 0;
        while (i < size && keys[i] < key) {
            i++;
        }
        return i;
    }

    /** The index of the last key {@code <= key}, or -1 if none. */
    public int floorIndex(final long key) {
        int i = size - 1;
        while (i >= 0 && keys[i] > key) {
            i--;
        }
        return i;
    }
}
