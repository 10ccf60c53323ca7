package dev.limbo.allocator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.core.Participants;
import dev.limbo.core.testing.ForkedJvm;

import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * More live platform threads than participant ids: the threads without one share the striped
 * caches, as virtual threads do, and the stats count their calls. (Before, their first allocate
 * threw IllegalStateException.)
 */
class LimboAllocatorParticipantOverflowTest {

    private static long value(final String output, final String prefix) {
        return Long.parseLong(output.lines().filter(l -> l.startsWith(prefix)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + prefix + " line in:\n" + output))
                .substring(prefix.length()).trim());
    }

    @Test
    void threadsWithoutAParticipantIdFallBackToTheStripes() throws Exception {
        final int capacity = 2;
        final ForkedJvm.Result r = ForkedJvm.run(null, List.of("-D" + Participants.CAPACITY_PROPERTY + "=" + capacity),
                ParticipantOverflowMain.class, 120);
        assertEquals(0, r.exitCode(), () -> "forked JVM failed:\n" + r.output());
        // All 3 * capacity + 2 workers are alive at the first barrier, so at least 2 * capacity + 2 of
        // them got no id, and each made at least BLOCKS calls before it.
        final long fallbacks = value(r.output(), "fallbacks:");
        assertTrue(fallbacks >= (2L * capacity + 2) * ParticipantOverflowMain.BLOCKS, r.output());
        assertEquals(0, value(r.output(), "inUse:"), r.output());
    }

    @Test
    void aThreadWithAnIdCountsNoFallback() {
        final LimboAllocator a = LimboAllocator.create();
        a.free(a.allocate(64));
        assertEquals(0, a.stats().participantFallbacks());
    }
}
