package dev.limbo.reclaim;

/**
 * What a scheme asks of the structures that use it. A structure tests a domain's capabilities
 * ({@link ReclaimDomain#has}) once, when it is built, and never the scheme's identity, so that a
 * scheme added later needs no change to any structure.
 */
public enum Capability {

    /**
     * Protection needs reachability validation. {@link Guard#protect} keeps a node safe only if the
     * node was still reachable from the structure when the protection was published: the scheme
     * protects individual pointers (hazard pointers, and the era and pointer schemes to come), not
     * whole sections. A structure that reads through links that may belong to an unlinked node
     * (Harris-style marked edges, which never change once marked, so re-reading them validates
     * nothing) must therefore prove, after protecting, that the node it came from is still
     * reachable (for example by re-reading an unmarked anchor edge above it), and restart its
     * traversal if not. Schemes without it (the epoch family, {@code none}) protect everything
     * the section reaches, and such validation would be wasted work.
     */
    PROTECTION_NEEDS_VALIDATION,

    /**
     * The scheme neutralizes threads that hold reclamation back ({@code debra+}, {@code nbr},
     * {@code nbr+} and their {@code -af} forms): a read phase may
     * be told to start over at any poll ({@link Restart}), and a reclaimer frees a record that a
     * neutralized thread may still touch only if no reservation ({@link Guard#reserve}) names it.
     * A domain with it polls (see {@link Guard}, "Neutralization"); structures follow the
     * neutralization protocol whatever the scheme, so they need not test it. Added to another
     * scheme through the builder, it only turns polling on.
     */
    NEUTRALIZATION,

    /**
     * The scheme counts references, the links between records included ({@code lfrc}): a record
     * lives while a link, a guard's slot or its owner (from allocation to {@link Guard#retire} or
     * {@link ReclaimDomain#freeExclusive}) holds it, and when the last reference goes, the scheme
     * releases what the record's links hold. A structure therefore writes every link through
     * {@link Guard#store}, {@link Guard#cas} and {@link Guard#initLink}, whose new target it holds,
     * and declares its records' links ({@link ReclaimDomain#declareLinks}); a structure whose
     * records have more than one layout cannot, and such a domain refuses it. Cycles of retired
     * records are never freed.
     */
    COUNTED_LINKS
}
