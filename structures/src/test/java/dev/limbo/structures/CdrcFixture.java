package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.rc.Cdrc;
import dev.limbo.reclaim.rc.RcType;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A CDRC structure of one {@link CdrcKind} in one mode, on a debug allocator (freed blocks are
 * poisoned, so a node freed while still in use shows up in the results) and a {@link Cdrc} domain
 * of its own, with the allocator's bytes in use from before either existed: the baseline that
 * closing the structure, then the domain, must restore.
 */
final class CdrcFixture {

    final CdrcKind kind;
    final boolean snapshots;
    final LimboAllocator allocator;
    final long baseline;
    final Cdrc rc;
    final StructureLifecycle structure;

    CdrcFixture(final CdrcKind kind, final boolean snapshots) {
        this.kind = kind;
        this.snapshots = snapshots;
        this.allocator = LimboAllocator.builder().checked(true).debug(true).build();
        this.baseline = allocator.stats().bytesInUse();
        this.rc = new Cdrc(allocator);
        this.structure = kind.create(rc, snapshots);
    }

    /** The keyed view of the structure. */
    LongMapChecks.Subject keyed() {
        return kind.keyed(structure);
    }

    /** The stack view of the structure. */
    Kind.Linear linear() {
        return kind.linear(structure);
    }

    /**
     * Takes, on the calling thread, every snapshot slot that an operation of this kind must leave
     * free ({@link Cdrc#SNAPSHOT_SLOTS} minus the kind's SNAPSHOTS), all of one object of its own:
     * an operation that held more snapshots than it declares would evict one, which
     * {@link Cdrc#evictions()} counts. {@link Held#close()} releases them and the object.
     */
    static Held holdSpareSnapshots(final Cdrc rc, final CdrcKind kind) {
        return new Held(rc, Cdrc.SNAPSHOT_SLOTS - kind.maxSnapshots);
    }

    /** Snapshots held by a test thread, of a holder object's one counted field. */
    static final class Held implements AutoCloseable {
        private static final RcType HOLDER = new RcType("test holder", Cdrc.HEADER + Long.BYTES, Cdrc.HEADER);
        private final Cdrc rc;
        private final long holder;
        private final long[] held;
        private final long evictionsBefore;

        Held(final Cdrc rc, final int n) {
            this.rc = rc;
            final int type = CdrcTypes.id(rc, HOLDER);
            this.holder = rc.allocate(type);
            rc.storeMove(holder + Cdrc.HEADER, rc.allocate(type));
            this.evictionsBefore = rc.evictions();
            this.held = new long[n];
            for (int i = 0; i < n; i++) {
                held[i] = rc.snapshot(holder + Cdrc.HEADER);
            }
        }

        /** Snapshots evicted on this thread since these were taken: 0 unless an operation held too many. */
        long evictions() {
            return rc.evictions() - evictionsBefore;
        }

        @Override
        public void close() {
            for (final long p : held) {
                rc.releaseSnapshot(p);
            }
            rc.release(holder);
        }
    }

    /**
     * Closes the structure, then the domain (which applies every thread's delayed decrements), and
     * checks that the allocator's bytes in use are back at the baseline: every node was freed.
     * Call it once every other thread is done.
     */
    void closeAndCheckMemory() {
        structure.close();
        rc.close();
        allocator.trim();
        assertEquals(baseline, allocator.stats().bytesInUse(),
                () -> kind + (snapshots ? " with snapshots" : " with counted loads") + ": bytes in use after close");
    }
}
