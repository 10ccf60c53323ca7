package dev.limbo.allocator;

import dev.limbo.allocator.internal.Anchor;
import dev.limbo.allocator.internal.BestFitPageAllocator;
import dev.limbo.allocator.internal.DescriptorLayout;
import dev.limbo.allocator.internal.Descriptors;
import dev.limbo.allocator.internal.PageMap;
import dev.limbo.core.Region;
import dev.limbo.core.Words;

import java.lang.ref.Cleaner;
import java.util.BitSet;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a {@link LimboAllocator} holds beyond its own heap objects, and gives back when it closes:
 * its id (one of 65,535, recorded in the page map's owner words), its small superblocks and large
 * runs, its descriptor table, and its {@link dev.limbo.core.Participants} release hook. It
 * references no allocator, so it is also the {@link Cleaner} action that frees all this once an
 * allocator that nobody closed becomes unreachable.
 *
 * <p>Synchronization: {@link #run()} and the allocator's release hook (which adopts a departed
 * thread's cache, and so returns blocks to superblocks) hold this object's monitor, so a hook that
 * runs on a reaping or cleaner thread never works on superblocks that {@code run()} is giving back.
 * Both are rare (a close, a thread's death), so a monitor costs nothing on the allocation paths,
 * which never take it. Allocation and free calls must not race with {@code run()}; the allocator
 * documents that contract on {@link LimboAllocator#close()}.
 */
final class Lifecycle implements Runnable {

    /** Closes allocators that became unreachable; one daemon thread for all of them. */
    static final Cleaner CLEANER = Cleaner.create();
    /** The most allocators open at once: ids are 16 bits in the page map's owner words, and 0 is none. */
    static final int MAX_OPEN = 0xFFFF;
    /** Ids of open allocators (bit i: id i); guarded by itself. */
    private static final BitSet IDS = new BitSet();

    final int id;
    private final Descriptors descriptors;
    private final AtomicLong largeBytes;
    private final BestFitPageAllocator pages;
    /** The release hook's handle; guarded by this. */
    private AutoCloseable hook;
    /** Set once by {@link #run()}; guarded by this. */
    private boolean released;

    /**
     * Takes the lowest free id.
     *
     * @throws IllegalStateException if {@value #MAX_OPEN} allocators are open
     */
    Lifecycle(final Descriptors descriptors, final AtomicLong largeBytes, final BestFitPageAllocator pages) {
        synchronized (IDS) {
            final int free = IDS.nextClearBit(1);
            if (free > MAX_OPEN) {
                throw new IllegalStateException(MAX_OPEN + " allocators are open in this JVM, the most there can "
                        + "be at once: close() the allocators you no longer use (or let them become unreachable)");
            }
            IDS.set(free);
            this.id = free;
        }
        this.descriptors = descriptors;
        this.largeBytes = largeBytes;
        this.pages = pages;
    }

    /** Records the handle of the allocator's release hook, which {@link #run()} unregisters. */
    synchronized void hook(final AutoCloseable handle) {
        this.hook = handle;
    }

    /** Whether {@link #run()} has given everything back. */
    synchronized boolean released() {
        return released;
    }

    /**
     * Gives everything back, once: unregisters the hook, returns every superblock and large run of
     * the allocator and its descriptor table to the page allocator, and frees the id.
     */
    @Override
    public synchronized void run() {
        if (released) {
            return;
        }
        released = true;
        try {
            hook.close(); // removes the hook from a list: it declares Exception, and throws none
        } catch (final Exception e) {
            throw new IllegalStateException("unregistering an allocator's release hook failed", e);
        }
        releaseSuperblocks();
        if (largeBytes.get() != 0) {
            releaseLargeRuns();
        }
        descriptors.release();
        synchronized (IDS) {
            IDS.clear(id);
        }
    }

    /**
     * Returns every superblock that a descriptor holds: those not EMPTY (an EMPTY one went back when
     * it emptied) whose page's owner word still names the descriptor. Their blocks, allocated,
     * cached or free, go with them.
     */
    private void releaseSuperblocks() {
        final int carved = descriptors.carved();
        for (int d = 1; d < carved; d++) {
            final long desc = descriptors.offset(d);
            final int sc = (int) Words.lp(desc + DescriptorLayout.SIZE_CLASS);
            if (sc == 0 || Anchor.state(Words.lp(desc + DescriptorLayout.ANCHOR)) == Anchor.EMPTY) {
                continue; // retired, or released already
            }
            final long page = Words.lp(desc + DescriptorLayout.SUPERBLOCK) >>> PageMap.PAGE_SHIFT;
            if (PageMap.withCache(PageMap.owner(page), 0) == PageMap.encode(PageMap.SMALL, id, sc, d)) {
                PageMap.setOwner(page, 0L); // unregister before the page can be reused
                pages.free(page, 1);
            }
        }
    }

    /** Returns every large run of the allocator, found by the page map's owner words. */
    private void releaseLargeRuns() {
        final long end = Math.min(PageMap.PAGES, Region.global().claimedBytes() >>> PageMap.PAGE_SHIFT);
        for (long page = 1; page < end; page++) {
            final long owner = PageMap.owner(page);
            if (PageMap.kind(owner) == PageMap.LARGE && PageMap.allocator(owner) == id) {
                final long n = PageMap.header(page);
                for (long p = page; p < page + n; p++) {
                    PageMap.setOwner(p, 0L);
                }
                largeBytes.addAndGet(-(n << PageMap.PAGE_SHIFT));
                pages.free(page, n);
                page += n - 1;
            }
        }
    }
}
