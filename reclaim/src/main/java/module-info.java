/** Limbo's safe memory reclamation schemes. */
module dev.limbo.reclaim {
    requires transitive dev.limbo.allocator;
    exports dev.limbo.reclaim;
    exports dev.limbo.reclaim.internal to dev.limbo.structures;
}
