/**
 * Limbo core: the off-heap region, access-mode helpers, layouts, participant ids and counters.
 */
module dev.limbo.core {
    exports dev.limbo.core;
    exports dev.limbo.core.internal to dev.limbo.allocator, dev.limbo.reclaim, dev.limbo.structures;
}
