package dev.limbo.reclaim.rc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Words;

import dev.limbo.core.Participants;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A {@link Cdrc} domain over a fresh debug allocator (poisoned frees), with root counted fields and
 * tagged objects; {@link #close()} closes the domain, frees the roots and checks that live bytes
 * returned to the baseline taken before the domain existed: nothing leaked.
 */
final class RcFixture implements AutoCloseable {

    /** The tag every test object carries in its first payload word. */
    static final long TAG = 0x7A67_5EED_0000_0001L;
    /** What a freed block of the debug allocator reads past its first word. */
    static final long POISON = 0xDBDB_DBDB_DBDB_DBDBL;
    /** An object with no counted field: header, tag. */
    static final RcType LEAF = new RcType("leaf", 24);
    /** Offset of {@link #NODE}'s strong field. */
    static final long NEXT = 16;
    /** An object with one strong counted field: header, next, tag. */
    static final RcType NODE = new RcType("node", 32, NEXT);

    final LimboAllocator allocator;
    final Cdrc rc;
    final long baseline;
    final int leaf;
    final int node;
    private final List<Long> roots = new ArrayList<>();
    private long rootBytes;

    private RcFixture(final boolean debugHandles) {
        allocator = LimboAllocator.builder().debug(true).build();
        baseline = allocator.stats().bytesInUse();
        rc = new Cdrc(allocator, debugHandles);
        leaf = rc.register(LEAF);
        node = rc.register(NODE);
    }

    /** A fixture whose domain does not track handles. */
    static RcFixture open() {
        return new RcFixture(false);
    }

    /** A fixture whose domain reports leaked handles. */
    static RcFixture openDebug() {
        return new RcFixture(true);
    }

    /** A zeroed root word (a counted field outside any object), freed by {@link #close()}. */
    long root() {
        final long before = allocator.stats().bytesInUse();
        final long r = allocator.allocateZeroed(Long.BYTES);
        rootBytes += allocator.stats().bytesInUse() - before;
        roots.add(r);
        return r;
    }

    /** A new tagged leaf, count 1, owned by the caller. */
    long leaf() {
        final long p = rc.allocate(leaf);
        Words.sv(p + Cdrc.HEADER, TAG);
        return p;
    }

    /** A new tagged node, count 1, owned by the caller, whose next field is null. */
    long node() {
        final long p = rc.allocate(node);
        Words.sv(p + NEXT + Long.BYTES, TAG);
        return p;
    }

    /** The tag word of a leaf ({@link #TAG} while it lives, {@link #POISON} once freed). */
    static long leafTag(final long p) {
        return Words.la((p & ~7L) + Cdrc.HEADER);
    }

    /** The tag word of a node ({@link #TAG} while it lives, {@link #POISON} once freed). */
    static long nodeTag(final long p) {
        return Words.la((p & ~7L) + NEXT + Long.BYTES);
    }

    /** A test step that may throw. */
    interface Step {
        void run() throws Exception;
    }

    /**
     * Runs {@code step} on a new thread that then gives its participant id back (so its delayed
     * decrements become orphans), waits for it and rethrows what it threw.
     */
    static void onAnotherThread(final Step step) throws InterruptedException {
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread t = new Thread(() -> {
            try {
                step.run();
            } catch (final Throwable e) {
                failure.set(e);
            } finally {
                Participants.close();
            }
        });
        t.start();
        t.join();
        if (failure.get() != null) {
            throw new AssertionError("the other thread failed", failure.get());
        }
    }

    /** Live bytes above the baseline, not counting the roots: the bytes of live counted objects. */
    long live() {
        return allocator.stats().bytesInUse() - baseline - rootBytes;
    }

    /** Closes the domain (applying every delayed decrement), frees the roots and checks the baseline. */
    @Override
    public void close() {
        rc.close();
        roots.forEach(allocator::free);
        rootBytes = 0;
        roots.clear();
        assertEquals(0, live(), "live bytes above the baseline after close: a leak");
        allocator.close();
    }
}
