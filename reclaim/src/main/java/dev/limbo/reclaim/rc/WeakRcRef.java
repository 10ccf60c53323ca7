package dev.limbo.reclaim.rc;

import dev.limbo.reclaim.Guard;

import java.lang.ref.Cleaner;

/**
 * A weak counted reference as a handle (PLDI'22's {@code weak_ptr}, digest §4.6): it keeps the
 * object's block but not the object alive, and {@link #upgrade()} returns a strong handle while the
 * object lives. {@link #close()} drops it. Checks as for {@link RcRef}.
 */
public final class WeakRcRef implements AutoCloseable {

    private final Cdrc domain;
    private final Cdrc.HandleState state;
    private final Cleaner.Cleanable leak;

    WeakRcRef(final Cdrc domain, final long word) {
        this.domain = domain;
        this.state = new Cdrc.HandleState("WeakRcRef", word);
        this.leak = domain.watch(this, state);
    }

    /** Loads the weak field at {@code field} into a new handle. */
    public static WeakRcRef load(final Cdrc domain, final long field) {
        return new WeakRcRef(domain, domain.loadWeak(field));
    }

    /** The weak word, marks included (0 for null). */
    public long get() {
        check();
        return state.word;
    }

    /** A strong handle to the object, or {@code null} if it died (or this refers to nothing). */
    public RcRef upgrade() {
        final long s = domain.upgrade(get());
        return s == 0 ? null : new RcRef(domain, s);
    }

    /** Whether the object died (or this refers to nothing). */
    public boolean expired() {
        final long w = get();
        return (w & ~Guard.MARK_BITS) == 0 || domain.count(w) == 0;
    }

    /**
     * Drops the weak reference; closing again does nothing.
     *
     * @throws IllegalStateException if the domain was closed first (the handle is closed all the same)
     */
    @Override
    public void close() {
        if (state.open) {
            final long w = state.word;
            state.open = false;
            state.word = 0;
            if (leak != null) {
                leak.clean();
            }
            domain.checkOpen("WeakRcRef");
            domain.releaseWeak(w);
        }
    }

    private void check() {
        if (!state.open) {
            throw new IllegalStateException("WeakRcRef is closed");
        }
        domain.checkOpen("WeakRcRef");
    }
}
