package dev.limbo.core.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a {@code main} class of the calling test's class path in a fresh JVM, for what one JVM can
 * do only once: system properties read in static initializers, the start-up of the global region,
 * process limits. Shared by the tests of every module through core's test-jar.
 */
public final class ForkedJvm {

    private ForkedJvm() {
    }

    /** What a forked JVM printed (stdout and stderr together) and its exit status. */
    public record Result(int exitCode, String output) {
    }

    /**
     * Runs {@code main} with {@code args} in a JVM given {@code jvmOptions} (besides a small heap and
     * native access), waiting at most {@code timeoutSeconds}. A non-null {@code shellPrefix} runs
     * first in the same {@code bash} process, which then becomes the JVM: {@code "ulimit -v 4000000"}
     * starts the JVM under that limit.
     */
    public static Result run(final String shellPrefix, final List<String> jvmOptions, final Class<?> main,
                             final long timeoutSeconds, final String... args) throws IOException, InterruptedException {
        final List<String> cmd = new ArrayList<>();
        if (shellPrefix != null) {
            // bash -c 'PREFIX; exec "$0" "$@"' java ...: the arguments need no quoting.
            cmd.addAll(List.of("bash", "-c", shellPrefix + "; exec \"$0\" \"$@\""));
        }
        cmd.add(System.getProperty("java.home") + "/bin/java");
        cmd.add("-Xmx128m");
        cmd.addAll(jvmOptions);
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main.getName());
        cmd.addAll(List.of(args));
        final Process process = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        final String output;
        try (var in = process.getInputStream()) {
            output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        final boolean finished = process.waitFor(timeoutSeconds, TimeUnit.SECONDS);
        if (!finished) {
            process.destroyForcibly();
        }
        assertTrue(finished, () -> "forked JVM did not finish in " + timeoutSeconds + " s:\n" + output);
        return new Result(process.exitValue(), output);
    }
}
