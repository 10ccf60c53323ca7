/** Limbo's safe memory reclamation schemes. */
module dev.limbo.reclaim {
    requires transitive dev.limbo.allocator;
}
