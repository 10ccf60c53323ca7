package dev.limbo.reclaim.internal;

import dev.limbo.allocator.internal.EventGate;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * JFR event {@code dev.limbo.TokenPass}: the token of a Token-EBR domain ({@code token-naive},
 * {@code token-passfirst}, {@code token-periodic}, {@code token-af}) passed from one participant to
 * the next: at the holder's turn, or on its behalf when it was idle or left the ring. An instant
 * event, committed only when a recording enables it, so that passes cost nothing more otherwise.
 */
@Name(TokenPassEvent.NAME)
@Label("Token Pass")
@Category({"Limbo", "Reclamation"})
@Description("The token of a Token-EBR domain passed to the next thread of the ring")
@StackTrace(false)
public final class TokenPassEvent extends jdk.jfr.Event {

    /** Asked before an event is made: no event object while no recording enables it. */
    public static final EventGate GATE = new EventGate(TokenPassEvent.class);

    /** The event's name in recordings. */
    public static final String NAME = "dev.limbo.TokenPass";

    @Label("Scheme")
    @Description("The reclamation scheme's id")
    public String scheme;

    @Label("Passer")
    @Description("The participant id of the thread that held the token")
    public int passer;

    @Label("Successor")
    @Description("The participant id that received the token (2097151: none, the ring is empty)")
    public int successor;

    @Label("Records")
    @Description("Records of the passer's previous bag that this turn frees (or splices into the freeable list, token-af); 0 for a pass without a turn")
    public long records;

    @Label("On Behalf")
    @Description("Whether another thread passed the token for an idle holder, or the holder passed it as it left the ring")
    public boolean onBehalf;

    /** Commits a pass if a recording enables the event. */
    public static void emit(final String scheme, final int passer, final int successor, final long records,
                            final boolean onBehalf) {
        if (!GATE.isEnabled()) {
            return;
        }
        final TokenPassEvent e = new TokenPassEvent();
        if (e.shouldCommit()) {
            e.scheme = scheme;
            e.passer = passer;
            e.successor = successor;
            e.records = records;
            e.onBehalf = onBehalf;
            e.commit();
        }
    }
}
