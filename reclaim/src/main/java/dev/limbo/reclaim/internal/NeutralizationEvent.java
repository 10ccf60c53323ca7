package dev.limbo.reclaim.internal;

import dev.limbo.allocator.internal.EventGate;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * JFR event {@code dev.limbo.Neutralization}: a reclaimer of a neutralizing scheme neutralized a
 * thread: a {@code debra+} or {@code debra+-af} scanner, one that held the epoch back while the
 * scanner's current limbo bag was over the suspect threshold (DEBRA §5.5); an {@code nbr} or
 * {@code nbr+} reclaimer (and their {@code -af} forms), each thread in the round it runs when its
 * retired bag reaches its capacity (victim epoch 0). An instant event,
 * committed only when a recording enables it; see the README's "Recording JFR events".
 */
@Name(NeutralizationEvent.NAME)
@Label("Neutralization")
@Category({"Limbo", "Reclamation"})
@Description("A reclaimer neutralized a thread (debra+: one that held the epoch back; nbr: every thread, in a round)")
@StackTrace(false)
public final class NeutralizationEvent extends jdk.jfr.Event {

    /** Asked before an event is made: no event object while no recording enables it. */
    public static final EventGate GATE = new EventGate(NeutralizationEvent.class);

    /** The event's name in recordings. */
    public static final String NAME = "dev.limbo.Neutralization";

    @Label("Scheme")
    @Description("The reclamation scheme's id")
    public String scheme;

    @Label("Neutralizer")
    @Description("The participant id of the scanning thread")
    public int neutralizer;

    @Label("Victim")
    @Description("The participant id of the neutralized thread")
    public int victim;

    @Label("Victim Epoch")
    @Description("The epoch in the victim's announcement when it was found holding the epoch back (0 for nbr)")
    public long victimEpoch;

    @Label("Bag Size")
    @Description("Records in the scanner's current limbo bag, over the suspect threshold (nbr: its retired bag)")
    public long bagSize;

    /** Commits a neutralization if a recording enables the event. */
    public static void emit(final String scheme, final int neutralizer, final int victim, final long victimEpoch,
                            final long bagSize) {
        if (!GATE.isEnabled()) {
            return;
        }
        final NeutralizationEvent e = new NeutralizationEvent();
        if (e.shouldCommit()) {
            e.scheme = scheme;
            e.neutralizer = neutralizer;
            e.victim = victim;
            e.victimEpoch = victimEpoch;
            e.bagSize = bagSize;
            e.commit();
        }
    }
}
