package dev.limbo.reclaim.rc;

import dev.limbo.core.Words;

/**
 * A counted field (the paper's {@code atomic_rc_ptr}, digest §7.5) as a handle: an aligned
 * off-heap word at {@link #field()} in a {@link Cdrc} domain, with the field operations that take
 * and return {@link RcRef} and {@link SnapshotRef} handles. Each call is one {@link Cdrc} operation
 * on the word (see there for copy and move semantics); structures use those {@code long} forms
 * directly, which allocate nothing.
 */
public final class AtomicRcRef {

    private final Cdrc domain;
    private final long field;

    /**
     * The counted field at {@code field} of {@code domain}.
     *
     * @throws IllegalArgumentException if {@code field} is 0 or not 8-byte aligned
     */
    public AtomicRcRef(final Cdrc domain, final long field) {
        if (field == 0 || (field & (Long.BYTES - 1)) != 0) {
            throw new IllegalArgumentException("a counted field is a non-null aligned word: 0x" + Long.toHexString(field));
        }
        this.domain = domain;
        this.field = field;
    }

    /** The field's address. */
    public long field() {
        return field;
    }

    /** A counted reference to the field's object ({@link Cdrc#load}). */
    public RcRef load() {
        return RcRef.load(domain, field);
    }

    /** A snapshot of the field's object on the calling thread ({@link Cdrc#snapshot}). */
    public SnapshotRef snapshot() {
        return SnapshotRef.take(domain, field);
    }

    /** The field's word, marks included, without protection: compare it, never dereference it. */
    public long peek() {
        return Words.la(field);
    }

    /** Stores a copy of {@code desired} (null for null); the handle stays open ({@link Cdrc#store}). */
    public void store(final RcRef desired) {
        domain.store(field, desired == null ? 0 : desired.get());
    }

    /** Moves {@code desired}'s reference into the field and closes the handle ({@link Cdrc#storeMove}). */
    public void storeMove(final RcRef desired) {
        domain.storeMove(field, desired.moveOut());
    }

    /**
     * Sets the field to a copy of {@code desired} (null for null) if it holds {@code expected}
     * (a full word, marks included); the handle stays open ({@link Cdrc#cas}).
     *
     * @return whether it did
     */
    public boolean compareAndSet(final long expected, final RcRef desired) {
        return domain.cas(field, expected, desired == null ? 0 : desired.get());
    }

    /**
     * Like {@link #compareAndSet}, but on success {@code desired}'s reference moves into the field
     * and the handle is closed; on failure it stays open ({@link Cdrc#casMove}).
     *
     * @return whether it did
     */
    public boolean compareAndSetMove(final long expected, final RcRef desired) {
        if (!domain.casMove(field, expected, desired.get())) {
            return false;
        }
        desired.moveOut();
        return true;
    }
}
