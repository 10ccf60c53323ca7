/** Limbo's lock-free off-heap allocator. */
module dev.limbo.allocator {
    requires transitive dev.limbo.core;
}
