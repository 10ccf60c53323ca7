package dev.limbo.core;

/**
 * Off-heap memory ran out: the region's reserved address space is used up, or committing more
 * would pass the commit limit. The message names the limit and the system property that raises it.
 */
public final class OffHeapOutOfMemoryError extends OutOfMemoryError {
    private static final long serialVersionUID = 1L;

    public OffHeapOutOfMemoryError(final String message) {
        super(message);
    }
}
