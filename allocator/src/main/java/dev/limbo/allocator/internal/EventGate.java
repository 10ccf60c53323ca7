package dev.limbo.allocator.internal;

import jdk.jfr.Event;
import jdk.jfr.EventType;
import jdk.jfr.FlightRecorder;

/**
 * Whether a JFR event class is enabled, asked before an event object is made, so that code that
 * emits events allocates nothing on the heap while no recording enables them. An event made and
 * dropped is only free when the JIT's escape analysis removes it, and the paths that emit (an
 * epoch advance, a batch free, a cache flush) are too cold for C2 to compile with their callers:
 * they ran in C1 or the interpreter and allocated one event per call.
 *
 * <p>{@link #isEnabled()} reads {@link FlightRecorder#isInitialized()} (a static flag that does not
 * start JFR); once JFR is up it looks the event type up once and then asks it (a field read).
 * The answer may be stale by a moment; the event's own {@code shouldCommit()} still decides.
 *
 * <p>A runtime may lack JFR: a {@code jlink}ed image can leave {@code jdk.jfr} out, and on the class
 * path the libraries then run without it. Loading an event class there throws
 * {@link NoClassDefFoundError}, so every path that emits asks {@link #JFR} first and touches an
 * event class (its gate included) only when it is true.
 */
public final class EventGate {

    /** Whether the runtime has the {@code jdk.jfr} module; false, no event class may be loaded. */
    public static final boolean JFR = ModuleLayer.boot().findModule("jdk.jfr").isPresent();

    private final Class<? extends Event> eventClass;
    /** The event's type, looked up on the first check after JFR started; racy single-check. */
    private volatile EventType type;

    /**
     * A gate for {@code eventClass}.
     *
     * @param eventClass the event class
     */
    public EventGate(final Class<? extends Event> eventClass) {
        this.eventClass = eventClass;
    }

    /**
     * Whether a recording may enable the event now: false, without allocating, while JFR is not
     * initialized or the event is disabled.
     *
     * @return whether to make the event
     */
    public boolean isEnabled() {
        if (!FlightRecorder.isInitialized()) {
            return false;
        }
        EventType t = type;
        if (t == null) {
            t = EventType.getEventType(eventClass);
            type = t;
        }
        return t.isEnabled();
    }
}
