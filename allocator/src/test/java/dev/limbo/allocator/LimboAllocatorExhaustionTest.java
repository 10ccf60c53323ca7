package dev.limbo.allocator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.core.Region;
import dev.limbo.core.testing.ForkedJvm;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** Exhausting the region ends in an OffHeapOutOfMemoryError that names the limit and the property to raise. */
class LimboAllocatorExhaustionTest {

    private static String runForked(final List<String> properties, final String... args)
            throws IOException, InterruptedException {
        final List<String> options = new ArrayList<>(properties);
        options.add("-Xmx256m");
        final ForkedJvm.Result r = ForkedJvm.run(null, options, ExhaustRegionMain.class, 60, args);
        assertEquals(0, r.exitCode(), () -> "forked JVM failed:\n" + r.output());
        return r.output();
    }

    private static String line(final String output, final String prefix) {
        return output.lines().filter(l -> l.startsWith(prefix)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + prefix + "line in:\n" + output));
    }

    @Test
    void exhaustingTheRegionNamesTheRegionSizeProperty() throws Exception {
        final String output = runForked(List.of("-D" + Region.SIZE_PROPERTY + "=64m"));
        final String line = line(output, "OOM: ");
        assertTrue(line.contains(Region.SIZE_PROPERTY), output);
        assertTrue(line.contains("64.0 MiB"), () -> "the region size is not in the message:\n" + output);
    }

    @Test
    void exhaustingTheCommitLimitNamesTheCommitLimitProperty() throws Exception {
        final String output = runForked(List.of("-D" + Region.COMMIT_LIMIT_PROPERTY + "=48m"));
        final String line = line(output, "OOM: ");
        assertTrue(line.contains(Region.COMMIT_LIMIT_PROPERTY), output);
        assertTrue(line.contains("48.0 MiB limit"), () -> "the commit limit is not in the message:\n" + output);
    }

    @Test
    void aCommitLimitSmallerThanTheWholePageMapWorksBecauseThePageMapIsChargedLazily() throws Exception {
        // The page map of the default 64 GiB region is 32 MiB; charged up front it left nothing of an
        // 8 MiB limit, and the allocator could not even start.
        final String output = runForked(List.of("-D" + Region.COMMIT_LIMIT_PROPERTY + "=8m"));
        final long allocations = Long.parseLong(line(output, "allocations: ").substring("allocations: ".length()));
        assertTrue(allocations >= 4, () -> "only " + allocations + " MiB fit under an 8 MiB limit:\n" + output);
        assertTrue(line(output, "OOM: ").contains("8.0 MiB limit"), output);
    }

    @Test
    void repeatedlyHittingTheCommitLimitDoesNotUseUpTheRegionsAddressSpace() throws Exception {
        // Each failed commit must put its page run back: 200 failed 1 MiB attempts would otherwise
        // lose 200 MiB of a 128 MiB region, and the error would turn into "region exhausted".
        final String output = runForked(List.of("-D" + Region.SIZE_PROPERTY + "=128m",
                "-D" + Region.COMMIT_LIMIT_PROPERTY + "=24m"), String.valueOf(1 << 20), "200");
        assertTrue(line(output, "OOM: ").contains(Region.COMMIT_LIMIT_PROPERTY), output);
        assertTrue(line(output, "RETRY: ").contains(Region.COMMIT_LIMIT_PROPERTY), output);
        assertTrue(line(output, "RETRY: ").contains("24.0 MiB limit"), output);
    }
}
