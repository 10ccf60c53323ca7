package dev.limbo.reclaim;

import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * The reclamation schemes, by the ids that benchmarks, tests and reports use. Tests and benchmarks
 * iterate over {@link #values()}, so a scheme added here joins them without other edits.
 */
public enum Scheme {
    /** No reclamation: retired nodes leak. The baseline. */
    NONE("none"),
    /** Fraser's epoch-based reclamation: three limbo bags, a scan of all threads. */
    EBR("ebr"),
    /** Brown's distributed EBR: one announcement checked per operation. */
    DEBRA("debra"),
    /** Michael's hazard pointers. */
    HP("hp", Capability.PROTECTION_NEEDS_VALIDATION),
    /** EBR with amortized free. */
    EBR_AF("ebr-af"),
    /** DEBRA with amortized free. */
    DEBRA_AF("debra-af"),
    /** Quiescent-state-based reclamation: threads announce quiescent states; no fence per operation. */
    QSBR("qsbr"),
    /** Hart et al.'s "new" EBR: a thread's critical region spans many operations. */
    NEBR("nebr"),
    /** The RCU-style epoch reservations of the Token-EBR artifact: the epoch is a clock of allocations. */
    RCU("rcu"),
    /** QSBR with amortized free. */
    QSBR_AF("qsbr-af"),
    /** NEBR with amortized free. */
    NEBR_AF("nebr-af"),
    /** RCU with amortized free. */
    RCU_AF("rcu-af"),
    /** DEBRA+: DEBRA that neutralizes the threads that hold the epoch back (cooperatively). */
    DEBRA_PLUS("debra+", Capability.NEUTRALIZATION),
    /** DEBRA+ with amortized free. */
    DEBRA_PLUS_AF("debra+-af", Capability.NEUTRALIZATION),
    /** Token-EBR, naive: the token holder frees its previous bag, then passes the token (PPoPP 2024 §4.1). */
    TOKEN_NAIVE("token-naive"),
    /** Token-EBR, pass first: the holder passes the token, then frees its previous bag (§4, "Pass-first"). */
    TOKEN_PASSFIRST("token-passfirst"),
    /** Token-EBR, periodic: pass first, and pass again every 100 frees if the token came back (§4, "Periodic"). */
    TOKEN_PERIODIC("token-periodic"),
    /** Token-EBR with amortized free: pass first, splice the previous bag into the freeable list (§4, "Amortized-Free"). */
    TOKEN_AF("token-af"),
    /**
     * Stamp-it (Pöter and Träff): regions join a lock-free queue ordered by stamps; a node is freed
     * once its retire stamp is at most the lowest member's. No garbage bound: a thread stalled in
     * its region holds back everything retired after it entered ({@code garbageBound} is
     * {@code Long.MAX_VALUE}; StampIt's notes).
     */
    STAMPIT("stampit");

    private final String id;
    private final Set<Capability> capabilities;

    Scheme(final String id, final Capability... capabilities) {
        this.id = id;
        final EnumSet<Capability> set = EnumSet.noneOf(Capability.class);
        set.addAll(Arrays.asList(capabilities));
        this.capabilities = Collections.unmodifiableSet(set);
    }

    /** The id used in parameters and reports. */
    public String id() {
        return id;
    }

    /** What the scheme asks of the structures that use it (see {@link Capability}); every scheme declares its own. */
    public Set<Capability> capabilities() {
        return capabilities;
    }

    /** Whether safe records are freed a few per operation (Token-EBR paper §3.3). */
    public boolean amortized() {
        return this == EBR_AF || this == DEBRA_AF || this == QSBR_AF || this == NEBR_AF || this == RCU_AF
                || this == DEBRA_PLUS_AF || this == TOKEN_AF;
    }

    /** The scheme with id {@code id}. */
    public static Scheme of(final String id) {
        for (final Scheme s : values()) {
            if (s.id.equals(id)) {
                return s;
            }
        }
        throw new IllegalArgumentException(String.format(Locale.ROOT, "unknown reclamation scheme '%s'; known: %s",
                id, Arrays.stream(values()).map(Scheme::id).toList()));
    }

    ReclaimDomain create(final ReclaimDomain.Builder b) {
        return switch (this) {
            case NONE -> new NoReclamation(b);
            case EBR, EBR_AF -> new FraserEbr(b);
            case DEBRA, DEBRA_AF -> new Debra(b);
            case DEBRA_PLUS, DEBRA_PLUS_AF -> new DebraPlus(b);
            case HP -> new HazardPointers(b);
            case QSBR, QSBR_AF -> new QuiescentStateReclamation(b);
            case NEBR, NEBR_AF -> new HartNewEbr(b);
            case RCU, RCU_AF -> new RcuEpochReservation(b);
            case TOKEN_NAIVE -> new TokenEbr(b, TokenEbr.Handoff.FREE_THEN_PASS);
            case TOKEN_PASSFIRST -> new TokenEbr(b, TokenEbr.Handoff.PASS_THEN_FREE);
            case TOKEN_PERIODIC -> new TokenEbr(b, TokenEbr.Handoff.PASS_THEN_FREE_IN_STEPS);
            case TOKEN_AF -> new TokenEbr(b, TokenEbr.Handoff.PASS_THEN_SPLICE);
            case STAMPIT -> new StampIt(b);
        };
    }

    @Override
    public String toString() {
        return id;
    }
}
