package dev.limbo.structures;

import dev.limbo.reclaim.Guard;
import dev.limbo.reclaim.ReclaimDomain;

import java.util.Locale;

/**
 * What every off-heap structure shares: its {@link ReclaimDomain}, the key and value rules, and the
 * closed state.
 *
 * <p>Keys and values are {@code long}s. {@link #RESERVED} ({@code Long.MIN_VALUE}) is not a valid
 * value: operations return it to say "absent" or "empty". {@code Long.MAX_VALUE} is not a valid
 * key: ordered structures use it for their sentinels. Both are rejected with an
 * {@link IllegalArgumentException}.
 *
 * <p>{@link #close()} frees every node and must run when no other thread uses the structure; any
 * later operation throws {@link IllegalStateException}. Closing the structure does not close its
 * domain, which may be shared.
 */
public abstract class OffHeapStructure implements AutoCloseable {

    /** The reserved value: returned for "absent" or "empty", rejected as a value. */
    public static final long RESERVED = Long.MIN_VALUE;
    /** The reserved key, used by sentinels. */
    public static final long RESERVED_KEY = Long.MAX_VALUE;

    final ReclaimDomain domain;
    private volatile boolean closed;

    /**
     * @param domain    the reclamation domain the nodes live in
     * @param slots     protection slots one operation needs
     * @param nodeBytes the node size; the domain's records must be at least this large
     */
    OffHeapStructure(final ReclaimDomain domain, final int slots, final long nodeBytes) {
        domain.requireSlots(slots);
        if (domain.recordBytes() < nodeBytes) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "%s needs records of at least %d bytes; the domain has %d (builder.recordBytes(%d))",
                    getClass().getSimpleName(), nodeBytes, domain.recordBytes(), nodeBytes));
        }
        this.domain = domain;
    }

    /** The domain the nodes live in. */
    public final ReclaimDomain domain() {
        return domain;
    }

    /** Pins the domain, after checking that the structure is open. */
    final Guard pin() {
        if (closed) {
            throw new IllegalStateException(getClass().getSimpleName() + " is closed");
        }
        return domain.pin();
    }

    /** Frees every node; call only when no other thread uses the structure. Idempotent. */
    @Override
    public final synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        freeNodes();
    }

    /** Whether {@link #close()} ran. */
    public final boolean isClosed() {
        return closed;
    }

    /** Frees every node still linked, with {@link ReclaimDomain#freeExclusive}. */
    abstract void freeNodes();

    static long checkKey(final long key) {
        if (key == RESERVED_KEY) {
            throw new IllegalArgumentException("key Long.MAX_VALUE is reserved for sentinels");
        }
        return key;
    }

    static long checkValue(final long value) {
        if (value == RESERVED) {
            throw new IllegalArgumentException("value Long.MIN_VALUE is reserved: it means absent or empty");
        }
        return value;
    }
}
