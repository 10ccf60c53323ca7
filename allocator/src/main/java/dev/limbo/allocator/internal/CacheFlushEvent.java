package dev.limbo.allocator.internal;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * JFR event {@code dev.limbo.CacheFlush}: a full thread cache of the Limbo allocator returned
 * blocks of one size class to their superblocks (LRMalloc's flush). Emitted once per flush, never
 * per block.
 */
@Name(CacheFlushEvent.NAME)
@Label("Allocator Cache Flush")
@Category({"Limbo", "Allocator"})
@Description("A thread cache returned blocks of one size class to their superblocks")
@StackTrace(false)
public final class CacheFlushEvent extends jdk.jfr.Event {

    /** Asked before an event is made: no event object while no recording enables it. */
    public static final EventGate GATE = new EventGate(CacheFlushEvent.class);

    /** The event's name in recordings. */
    public static final String NAME = "dev.limbo.CacheFlush";

    @Label("Size Class")
    public int sizeClass;

    @Label("Block Size")
    @DataAmount
    public long blockSize;

    @Label("Blocks")
    @Description("Blocks returned")
    public long blocks;
}
