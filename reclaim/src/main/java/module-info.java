/** Limbo's safe memory reclamation schemes. */
module dev.limbo.reclaim {
    requires transitive dev.limbo.allocator;
    requires jdk.jfr; // JFR events (dev.limbo.*); JFR instruments event classes in named modules itself
    exports dev.limbo.reclaim;
    exports dev.limbo.reclaim.rc;
    exports dev.limbo.reclaim.internal to dev.limbo.structures;
}
