package dev.limbo.structures;

import dev.limbo.reclaim.ReclaimDomain;

import java.util.Locale;
import java.util.Objects;

/**
 * A structure whose nodes live in a {@link ReclaimDomain}: unlinked nodes are retired through the
 * domain's scheme, and {@link #close()} frees the nodes still linked through it. Closing the
 * structure does not close its domain, which may be shared; close the structure first. A structure
 * closed after its domain still frees its nodes. The closing protocol is {@link StructureLifecycle}'s.
 */
public abstract class OffHeapStructure extends StructureLifecycle {

    final ReclaimDomain domain;

    /**
     * @param domain    the reclamation domain the nodes live in
     * @param slots     protection slots one operation needs
     * @param nodeBytes the node size; the domain's records must be at least this large
     */
    OffHeapStructure(final ReclaimDomain domain, final int slots, final long nodeBytes) {
        Objects.requireNonNull(domain, "domain must not be null");
        if (domain.isClosed()) {
            throw new IllegalStateException(getClass().getSimpleName() + " cannot be built over a closed domain");
        }
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

    /**
     * Teardown: frees a node that no operation can reach any more. Through the domain while it is
     * open; once the domain is closed it tracks nothing, so straight to its allocator.
     */
    final void freeNode(final long node) {
        if (domain.isClosed()) {
            domain.allocator().free(node);
        } else {
            domain.freeExclusive(node);
        }
    }
}
