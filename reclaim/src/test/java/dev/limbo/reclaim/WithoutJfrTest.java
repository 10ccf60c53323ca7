package dev.limbo.reclaim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.core.testing.ForkedJvm;

import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The libraries run on the class path of a runtime without {@code jdk.jfr} (a {@code jlink}ed
 * image may leave it out): their JFR events are off there, and no path loads an event class.
 */
class WithoutJfrTest {

    @Test
    void theAllocatorAndEverySchemeRunWithoutJfr() throws Exception {
        final ForkedJvm.Result r = ForkedJvm.run(null,
                List.of("--limit-modules", "java.base,jdk.unsupported,java.management"), WithoutJfrMain.class, 300);
        assertEquals(0, r.exitCode(), () -> "the forked JVM failed:\n" + r.output());
        assertTrue(r.output().lines().anyMatch("ok"::equals), () -> "no ok line:\n" + r.output());
    }
}
