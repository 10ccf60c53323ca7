package dev.limbo.core.internal;

/** A native call returned an error; the message names the call, its arguments and errno. */
public final class NativeCallException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int errno;

    NativeCallException(final String call, final int errno, final String description) {
        super(call + " failed: " + description);
        this.errno = errno;
    }

    /** The {@code errno} value the call left. */
    public int errno() {
        return errno;
    }
}
