package dev.limbo.bench.alloc;

import dev.limbo.allocator.OffHeapAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Baseline: Netty's pooled direct buffers ({@code PooledByteBufAllocator.DEFAULT}: jemalloc-like
 * arenas with thread caches). A pointer is the buffer's memory address; the address-to-buffer map
 * is the price of fitting Netty's object API to a pointer API.
 */
public final class NettyPooledAllocator implements OffHeapAllocator {

    private final PooledByteBufAllocator pool = PooledByteBufAllocator.DEFAULT;
    private final ConcurrentHashMap<Long, ByteBuf> buffers = new ConcurrentHashMap<>();

    @Override
    public String name() {
        return "netty";
    }

    @Override
    public long allocate(final long bytes) {
        final ByteBuf buffer = pool.directBuffer((int) bytes, (int) bytes);
        final long address = buffer.memoryAddress();
        buffers.put(address, buffer);
        return address;
    }

    @Override
    public void free(final long ptr) {
        final ByteBuf buffer = buffers.remove(ptr);
        if (buffer == null) {
            throw new IllegalArgumentException("not allocated: 0x" + Long.toHexString(ptr));
        }
        buffer.release();
    }

    @Override
    public MemorySegment memory() {
        return Allocators.EVERYTHING;
    }
}
