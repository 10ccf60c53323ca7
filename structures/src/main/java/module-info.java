/** Limbo's lock-free off-heap structures. */
module dev.limbo.structures {
    requires transitive dev.limbo.reclaim;
    exports dev.limbo.structures;
}
