package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.ReclaimStats;
import dev.limbo.reclaim.Scheme;

import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A structure of one {@link Kind} over one scheme, on an allocator and a domain of its own, with
 * the allocator's bytes in use from before either existed: the baseline that closing must restore.
 */
final class Fixture {

    final Kind kind;
    final Scheme scheme;
    final LimboAllocator allocator;
    final long baseline;
    final ReclaimDomain domain;
    final OffHeapStructure structure;

    /**
     * @param debug a debug allocator (poisoned, quarantined frees) and a debug domain (a node
     *              retired twice throws); otherwise a checked allocator (a block freed twice
     *              throws) and a plain domain, with its record pool
     */
    Fixture(final Kind kind, final Scheme scheme, final boolean debug) {
        this(kind, scheme, debug, 0);
    }

    /** As above; {@code restartOneIn} &gt; 0 makes about one poll in that many restart the read phase. */
    Fixture(final Kind kind, final Scheme scheme, final boolean debug, final int restartOneIn) {
        this(kind, scheme, debug, b -> b.restartInjection(restartOneIn));
    }

    /** As above, with the domain's builder adjusted by {@code settings}. */
    Fixture(final Kind kind, final Scheme scheme, final boolean debug,
            final UnaryOperator<ReclaimDomain.Builder> settings) {
        this.kind = kind;
        this.scheme = scheme;
        this.allocator = LimboAllocator.builder().checked(true).debug(debug).build();
        this.baseline = allocator.stats().bytesInUse();
        this.domain = settings.apply(kind.builder(scheme, allocator, debug)).build();
        this.structure = kind.create(domain);
    }

    /** The keyed view of the structure. */
    LongMapChecks.Subject keyed() {
        return kind.keyed(structure);
    }

    /** The stack or queue view of the structure. */
    Kind.Linear linear() {
        return kind.linear(structure);
    }

    /**
     * Closes the structure (again, if it is closed), flushes and closes the domain, and checks that
     * every retired node was freed and that the allocator's bytes in use are back at the baseline,
     * except the nodes that scheme none leaks by design. Call it once every other thread is done.
     */
    void closeAndCheckMemory() {
        structure.close();
        domain.flush();
        final ReclaimStats stats = domain.stats();
        if (scheme != Scheme.NONE) {
            assertEquals(stats.retired(), stats.freed(), () -> "retired nodes left after a flush: " + stats);
        }
        final long leaked = leakedByNone();
        domain.close();
        assertBytesBack(leaked);
    }

    /** The bytes scheme none leaks by design (every node retired so far); 0 for the other schemes. */
    long leakedByNone() {
        if (scheme != Scheme.NONE) {
            return 0;
        }
        final long probe = domain.allocateExclusive(); // a record's block: its size class, trailer included
        final long block = allocator.usableSize(probe);
        domain.freeExclusive(probe);
        return domain.stats().retired() * block;
    }

    /** After both are closed: the allocator's bytes in use are the baseline plus {@code leaked}. */
    void assertBytesBack(final long leaked) {
        allocator.trim();
        assertEquals(baseline + leaked, allocator.stats().bytesInUse(),
                () -> kind + " over " + scheme + ": bytes in use after close");
    }
}
