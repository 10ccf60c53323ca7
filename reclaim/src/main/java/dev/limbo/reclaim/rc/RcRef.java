package dev.limbo.reclaim.rc;

import java.lang.ref.Cleaner;

/**
 * An owned counted reference (the paper's {@code rc_ptr}) as a handle: {@link #close()} drops it.
 * It may be passed between threads, but not used by two at once. A closed handle, or one of a closed
 * domain, throws {@link IllegalStateException} on use; in a debug domain a handle that becomes
 * unreachable while open is reported ({@link Cdrc#leakedHandles()}).
 *
 * <p>Hot paths use {@link Cdrc}'s {@code long} operations, which allocate nothing; a handle is one
 * small object.
 */
public final class RcRef implements AutoCloseable {

    private final Cdrc domain;
    private final Cdrc.HandleState state;
    private final Cleaner.Cleanable leak;

    RcRef(final Cdrc domain, final long word) {
        this.domain = domain;
        this.state = new Cdrc.HandleState("RcRef", word);
        this.leak = domain.watch(this, state);
    }

    /** Loads the counted field at {@code field} into a new handle (null inside if the field is null). */
    public static RcRef load(final Cdrc domain, final long field) {
        return new RcRef(domain, domain.load(field));
    }

    /** Wraps the reference {@code word} the caller owns: the handle now owns it. */
    public static RcRef adopt(final Cdrc domain, final long word) {
        return new RcRef(domain, word);
    }

    /** The counted word, marks included (0 for null). */
    public long get() {
        check();
        return state.word;
    }

    /** Whether it refers to nothing. */
    public boolean isNull() {
        return get() == 0;
    }

    /** A new handle to the same object (an increment). */
    public RcRef copy() {
        return new RcRef(domain, domain.retain(get()));
    }

    /** A new weak handle to the same object. */
    public WeakRcRef weak() {
        return new WeakRcRef(domain, domain.weakOf(get()));
    }

    /** Stores a copy of this reference in the counted field at {@code field}; this handle stays open. */
    public void storeTo(final long field) {
        domain.store(field, get());
    }

    /**
     * Moves this reference out: the caller now owns the count (to {@link Cdrc#storeMove} it, for
     * example) and the handle is closed.
     */
    public long moveOut() {
        final long w = get();
        end();
        return w;
    }

    /**
     * Drops the reference; closing again does nothing.
     *
     * @throws IllegalStateException if the domain was closed first (the handle is closed all the same)
     */
    @Override
    public void close() {
        if (state.open) {
            final long w = state.word;
            end();
            domain.checkOpen("RcRef");
            domain.release(w);
        }
    }

    /** Whether the handle is still open. */
    public boolean isOpen() {
        return state.open;
    }

    private void end() {
        state.open = false;
        state.word = 0;
        if (leak != null) {
            leak.clean();
        }
    }

    private void check() {
        if (!state.open) {
            throw new IllegalStateException("RcRef is closed");
        }
        domain.checkOpen("RcRef");
    }
}
