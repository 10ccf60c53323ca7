/** Limbo's lock-free off-heap allocator. */
module dev.limbo.allocator {
    requires transitive dev.limbo.core;
    requires jdk.jfr; // JFR events (dev.limbo.*); JFR instruments event classes in named modules itself
    exports dev.limbo.allocator;
    exports dev.limbo.allocator.internal to dev.limbo.reclaim, dev.limbo.structures;
}
