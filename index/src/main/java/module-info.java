/** Limbo's off-heap index API: ordered and hashed {@code long -> long} maps. */
module dev.limbo.index {
    requires transitive dev.limbo.structures;
    exports dev.limbo.index;
}
