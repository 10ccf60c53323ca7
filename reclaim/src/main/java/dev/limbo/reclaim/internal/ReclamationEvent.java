package dev.limbo.reclaim.internal;

import dev.limbo.allocator.internal.EventGate;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * JFR event {@code dev.limbo.Reclamation}: a batch of retired records became safe and was freed
 * into the record pool (its duration is the time the free took), or, for the amortized schemes,
 * handed to the thread's freeable list ({@code deferred}), from which a few are freed per pin.
 * Emitted once per batch, never per record.
 */
@Name(ReclamationEvent.NAME)
@Label("Reclamation Batch")
@Category({"Limbo", "Reclamation"})
@Description("A batch of retired records was freed (or queued for amortized free)")
@StackTrace(false)
public final class ReclamationEvent extends jdk.jfr.Event {

    /** Asked before an event is made: no event object while no recording enables it. */
    public static final EventGate GATE = new EventGate(ReclamationEvent.class);

    /** The event's name in recordings. */
    public static final String NAME = "dev.limbo.Reclamation";

    @Label("Scheme")
    @Description("The reclamation scheme's id")
    public String scheme;

    @Label("Records")
    @Description("Records in the batch")
    public long records;

    @Label("Deferred")
    @Description("Whether the batch was queued for amortized free instead of freed at once")
    public boolean deferred;
}
