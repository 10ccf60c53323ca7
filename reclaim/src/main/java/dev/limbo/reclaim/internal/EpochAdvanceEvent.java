package dev.limbo.reclaim.internal;

import dev.limbo.allocator.internal.EventGate;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * JFR event {@code dev.limbo.EpochAdvance}: a thread advanced the global epoch of an epoch scheme
 * ({@code ebr}, {@code debra} and their amortized variants). An instant event, committed only when
 * a recording enables it; see the README's "Recording JFR events".
 */
@Name(EpochAdvanceEvent.NAME)
@Label("Epoch Advance")
@Category({"Limbo", "Reclamation"})
@Description("The global epoch of an epoch-based reclamation domain advanced")
@StackTrace(false)
public final class EpochAdvanceEvent extends jdk.jfr.Event {

    /** Asked before an event is made: no event object while no recording enables it. */
    public static final EventGate GATE = new EventGate(EpochAdvanceEvent.class);

    /** The event's name in recordings. */
    public static final String NAME = "dev.limbo.EpochAdvance";

    @Label("Scheme")
    @Description("The reclamation scheme's id")
    public String scheme;

    @Label("Epoch")
    @Description("The new global epoch")
    public long epoch;

    /** Commits an advance to {@code epoch} if a recording enables the event. */
    public static void emit(final String scheme, final long epoch) {
        if (!GATE.isEnabled()) {
            return;
        }
        final EpochAdvanceEvent e = new EpochAdvanceEvent();
        if (e.shouldCommit()) {
            e.scheme = scheme;
            e.epoch = epoch;
            e.commit();
        }
    }
}
