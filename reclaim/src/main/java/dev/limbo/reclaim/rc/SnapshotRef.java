package dev.limbo.reclaim.rc;

import java.lang.ref.Cleaner;

/**
 * A snapshot (the paper's {@code snapshot_ptr}, §4.5) as a handle: it protects the object through
 * one of its thread's announcement slots instead of a count, so taking and closing it costs no
 * contended write. It is confined to the thread that took it: use from another thread throws
 * {@link IllegalStateException}, as does use after close or of a closed domain; in a debug domain
 * one that becomes unreachable while open is reported. Close it before the thread ends.
 */
public final class SnapshotRef implements AutoCloseable {

    private final Cdrc domain;
    private final Thread owner;
    private final Cdrc.HandleState state;
    private final Cleaner.Cleanable leak;

    private SnapshotRef(final Cdrc domain, final long word) {
        this.domain = domain;
        this.owner = Thread.currentThread();
        this.state = new Cdrc.HandleState("SnapshotRef", word);
        this.leak = domain.watch(this, state);
    }

    /** Takes a snapshot of the counted field at {@code field} on the calling thread. */
    public static SnapshotRef take(final Cdrc domain, final long field) {
        return new SnapshotRef(domain, domain.snapshot(field));
    }

    /** The protected word, marks included (0 for null). */
    public long get() {
        check();
        return state.word;
    }

    /** A counted handle to the same object, which outlives this snapshot. */
    public RcRef toRc() {
        return RcRef.adopt(domain, domain.retain(get()));
    }

    /**
     * Ends the snapshot; closing again does nothing.
     *
     * @throws IllegalStateException if called from another thread (the snapshot stays open), or if
     *         the domain was closed first (the handle is closed all the same)
     */
    @Override
    public void close() {
        if (state.open) {
            checkOwner();
            final long w = state.word;
            state.open = false;
            state.word = 0;
            if (leak != null) {
                leak.clean();
            }
            domain.checkOpen("SnapshotRef");
            domain.releaseSnapshot(w);
        }
    }

    private void check() {
        if (!state.open) {
            throw new IllegalStateException("SnapshotRef is closed");
        }
        checkOwner();
        domain.checkOpen("SnapshotRef");
    }

    private void checkOwner() {
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("SnapshotRef of " + owner + " used from " + Thread.currentThread()
                    + ": snapshots are confined to the thread that took them");
        }
    }
}
