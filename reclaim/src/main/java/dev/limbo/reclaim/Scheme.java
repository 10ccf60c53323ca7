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
     * Interval-based reclamation, 2GE (Wen et al., PPoPP 2018): a thread reserves the eras of its
     * section; records are freed when no reservation overlaps their lifetime. Garbage bound
     * R + n * 150 * n per thread beyond the records alive when a stall began (see
     * IntervalBasedReclamation).
     */
    IBR("ibr", Capability.PROTECTION_NEEDS_VALIDATION),
    /** Hazard eras (Ramalhete and Correia, SPAA 2017): hazard slots hold eras, not pointers. Bound as ibr's. */
    HE("he", Capability.PROTECTION_NEEDS_VALIDATION),
    /** Wait-free eras (Nikolaev and Ravindran, PPoPP 2020): hazard eras with a wait-free protect. Bound as ibr's. */
    WFE("wfe", Capability.PROTECTION_NEEDS_VALIDATION),
    /** IBR with amortized free (bound: ibr's + backlogLimit). */
    IBR_AF("ibr-af", Capability.PROTECTION_NEEDS_VALIDATION),
    /** Hazard eras with amortized free (bound: he's + backlogLimit). */
    HE_AF("he-af", Capability.PROTECTION_NEEDS_VALIDATION),
    /** Wait-free eras with amortized free (bound: wfe's + backlogLimit). */
    WFE_AF("wfe-af", Capability.PROTECTION_NEEDS_VALIDATION),
    /** NBR: a thread whose retired bag reaches its threshold neutralizes every thread, then frees what no reservation names (PPoPP 2021). */
    NBR("nbr", Capability.NEUTRALIZATION),
    /** NBR+: NBR whose threads past a low watermark free on the strength of another thread's round, without signalling. */
    NBR_PLUS("nbr+", Capability.NEUTRALIZATION),
    /** NBR with amortized free. */
    NBR_AF("nbr-af", Capability.NEUTRALIZATION),
    /** NBR+ with amortized free. */
    NBR_PLUS_AF("nbr+-af", Capability.NEUTRALIZATION),
    /** Hazard pointers with amortized free: what a scan finds safe is freed a few per pin. */
    HP_AF("hp-af", Capability.PROTECTION_NEEDS_VALIDATION),
    /**
     * Stamp-it (Pöter and Träff): regions join a lock-free queue ordered by stamps; a node is freed
     * once its retire stamp is at most the lowest member's. No garbage bound: a thread stalled in
     * its region holds back everything retired after it entered ({@code garbageBound} is
     * {@code Long.MAX_VALUE}; StampIt's notes).
     */
    STAMPIT("stampit"),
    /**
     * Lock-free reference counting (Valois 1995, corrected by Michael and Scott 1995): every link
     * and every guard slot counts; a record is freed when its count reaches zero after its retire.
     * Type-stable memory; refuses structures without declared links; cycles leak.
     */
    LFRC("lfrc", Capability.COUNTED_LINKS);

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
                || this == DEBRA_PLUS_AF || this == TOKEN_AF
                || this == IBR_AF || this == HE_AF || this == WFE_AF
                || this == NBR_AF || this == NBR_PLUS_AF || this == HP_AF;
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
            case HP, HP_AF -> new HazardPointers(b);
            case QSBR, QSBR_AF -> new QuiescentStateReclamation(b);
            case NEBR, NEBR_AF -> new HartNewEbr(b);
            case RCU, RCU_AF -> new RcuEpochReservation(b);
            case TOKEN_NAIVE -> new TokenEbr(b, TokenEbr.Handoff.FREE_THEN_PASS);
            case TOKEN_PASSFIRST -> new TokenEbr(b, TokenEbr.Handoff.PASS_THEN_FREE);
            case TOKEN_PERIODIC -> new TokenEbr(b, TokenEbr.Handoff.PASS_THEN_FREE_IN_STEPS);
            case TOKEN_AF -> new TokenEbr(b, TokenEbr.Handoff.PASS_THEN_SPLICE);
            case IBR, IBR_AF -> new IntervalBasedReclamation(b);
            case HE, HE_AF -> new HazardEras(b);
            case WFE, WFE_AF -> new WaitFreeEras(b);
            case NBR, NBR_AF -> new NeutralizationBasedReclamation(b, false);
            case NBR_PLUS, NBR_PLUS_AF -> new NeutralizationBasedReclamation(b, true);
            case STAMPIT -> new StampIt(b);
            case LFRC -> new LockFreeRefCounting(b);
        };
    }

    @Override
    public String toString() {
        return id;
    }
}
