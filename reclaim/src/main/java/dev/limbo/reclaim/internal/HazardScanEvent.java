package dev.limbo.reclaim.internal;

import dev.limbo.allocator.internal.EventGate;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * JFR event {@code dev.limbo.HazardScan}: one scan of the hazard pointers scheme ({@code hp}) or of the
 * era family ({@code ibr}, {@code he}, {@code wfe}: the hazards are the reservations read): the
 * thread read every hazard slot and split its retired list into records still protected (kept)
 * and records freed. Emitted once per scan.
 */
@Name(HazardScanEvent.NAME)
@Label("Hazard Scan")
@Category({"Limbo", "Reclamation"})
@Description("A hazard-pointer scan: retired records checked against every thread's hazards")
@StackTrace(false)
public final class HazardScanEvent extends jdk.jfr.Event {

    /** Asked before an event is made: no event object while no recording enables it. */
    public static final EventGate GATE = new EventGate(HazardScanEvent.class);

    /** The event's name in recordings. */
    public static final String NAME = "dev.limbo.HazardScan";

    @Label("Scanned")
    @Description("Retired records checked")
    public long scanned;

    @Label("Kept")
    @Description("Records still protected by a hazard, kept for a later scan")
    public long kept;

    @Label("Hazards")
    @Description("Non-null hazard slots read")
    public long hazards;
}
