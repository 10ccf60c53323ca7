package dev.limbo.reclaim;

/**
 * Thrown by {@link Guard#protect}, {@link Guard#protectIfEqual}, {@link Guard#poll} and
 * {@link Guard#beginWrite} when the calling thread was neutralized: a reclaimer may have freed
 * records that its current read phase reached, so nothing that phase read may be used. The
 * structure's operation catches it and starts its read phase over, from a root of the structure,
 * in the same pinned section (see {@link Guard}, "Neutralization").
 *
 * <p>Cooperative neutralization (DEBRA+, NBR): the JVM cannot interrupt a thread and jump it back
 * to a checkpoint, as the papers do with a signal and {@code siglongjmp}, so the victim polls at
 * every protect and at the end of its read phase. The exception is preallocated and stackless
 * (no stack trace, no suppression): throwing it allocates nothing and costs about as much as a
 * jump, so a restart stays cheap on the JVM as it is in C++.
 */
public final class Restart extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The only instance. */
    static final Restart INSTANCE = new Restart();

    private Restart() {
        super("read phase neutralized: restart it", null, false, false);
    }
}
