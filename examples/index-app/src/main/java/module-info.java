/** An application of Limbo's off-heap index, on the module path. */
module dev.limbo.example.index {
    requires dev.limbo.index;
}
