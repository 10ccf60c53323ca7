package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.rc.Cdrc;

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
