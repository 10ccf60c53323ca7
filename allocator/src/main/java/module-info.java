/** Limbo's lock-free off-heap allocator. */
module dev.limbo.allocator {
    requires transitive dev.limbo.core;
    exports dev.limbo.allocator;
    exports dev.limbo.allocator.internal to dev.limbo.reclaim, dev.limbo.structures;
}
