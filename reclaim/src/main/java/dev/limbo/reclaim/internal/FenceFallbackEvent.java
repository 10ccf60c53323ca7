package dev.limbo.reclaim.internal;

import dev.limbo.allocator.internal.EventGate;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * JFR event {@code dev.limbo.FenceFallback}: a heavy barrier ({@code membarrier}) failed at run
 * time, and an epoch domain in asymmetric mode fell back to a fence per pin. An instant event,
 * committed only when a recording enables it; see the README's "Recording JFR events".
 */
@Name(FenceFallbackEvent.NAME)
@Label("Fence Fallback")
@Category({"Limbo", "Reclamation"})
@Description("A heavy barrier failed; the epoch domain now fences every pin")
@StackTrace(false)
public final class FenceFallbackEvent extends jdk.jfr.Event {

    /** Asked before an event is made: no event object while no recording enables it. */
    public static final EventGate GATE = new EventGate(FenceFallbackEvent.class);

    /** The event's name in recordings. */
    public static final String NAME = "dev.limbo.FenceFallback";

    @Label("Scheme")
    @Description("The reclamation scheme's id")
    public String scheme;

    @Label("Failure")
    @Description("Why the heavy barrier failed")
    public String failure;

    /** Commits a fallback if a recording enables the event. */
    public static void emit(final String scheme, final String failure) {
        if (!GATE.isEnabled()) {
            return;
        }
        final FenceFallbackEvent e = new FenceFallbackEvent();
        if (e.shouldCommit()) {
            e.scheme = scheme;
            e.failure = failure;
            e.commit();
        }
    }
}
