package dev.limbo.bench.alloc;

import dev.limbo.allocator.FlushPolicy;
import dev.limbo.allocator.LimboAllocator;
import dev.limbo.allocator.OffHeapAllocator;

import java.lang.foreign.MemorySegment;

/**
 * The allocators a benchmark can name in its {@code allocator} parameter.
 *
 * <ul>
 *   <li>{@code limbo}: {@link LimboAllocator} with its defaults (unchecked, OWNED);</li>
 *   <li>{@code limbo-v1}: the allocator before owned superblocks (allocator v2, item 10): capped
 *       caches flushed to their superblocks, one owned superblock per class with a remote list
 *       (OWNER_RETURN, the default until then); the baseline of the allocator v2 bars;</li>
 *   <li>{@code limbo-checked}, {@code limbo-flush-all}, {@code limbo-partial-flush},
 *       {@code limbo-owner-return}: variants for measuring the cost of checks and the policies;</li>
 *   <li>{@code limbo-checked-no-quarantine}: checked mode with a quarantine of 0 bytes, which
 *       splits checked mode's cost into the block states' and the quarantine's;</li>
 *   <li>{@code malloc}: glibc malloc/free through a downcall;</li>
 *   <li>{@code arena}: one {@code Arena.ofShared()} per allocation, closed by free;</li>
 *   <li>{@code bump}: per-thread bump allocation that never frees;</li>
 *   <li>{@code netty}: Netty's pooled direct buffers.</li>
 * </ul>
 */
public final class Allocators {

    /** The whole address space, for baselines whose pointers are native addresses. */
    static final MemorySegment EVERYTHING = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private Allocators() {
    }

    /** Whether {@code name} is one of Limbo's allocators ({@code limbo} or a {@code limbo-} variant). */
    public static boolean isLimbo(final String name) {
        return name.equals("limbo") || name.startsWith("limbo-");
    }

    public static OffHeapAllocator create(final String name) {
        return switch (name) {
            case "limbo" -> LimboAllocator.create();
            case "limbo-checked" -> LimboAllocator.builder().checked(true).build();
            case "limbo-checked-no-quarantine" -> LimboAllocator.builder().checked(true).quarantineBytes(0).build();
            case "limbo-flush-all" -> LimboAllocator.builder().flushPolicy(FlushPolicy.FLUSH_ALL).build();
            case "limbo-partial-flush" -> LimboAllocator.builder().flushPolicy(FlushPolicy.PARTIAL_FLUSH).build();
            case "limbo-owner-return", "limbo-v1" -> LimboAllocator.builder().flushPolicy(FlushPolicy.OWNER_RETURN).build();
            case "malloc" -> new MallocAllocator();
            case "arena" -> new ArenaPerAllocation();
            case "bump" -> new BumpAllocator();
            case "netty" -> new NettyPooledAllocator();
            default -> throw new IllegalArgumentException("unknown allocator '" + name
                    + "'; known: limbo, limbo-checked, limbo-checked-no-quarantine, limbo-flush-all, limbo-partial-flush, "
                    + "limbo-owner-return, limbo-v1, malloc, arena, bump, netty");
        };
    }
}
