package dev.limbo.structures;

import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.rc.Cdrc;
import org.jetbrains.lincheck.datastructures.StressOptions;

import java.util.Queue;

/**
 * The Lincheck stress run shared by the structures' linearizability tests: 3 threads of 3
 * operations, with 2 before and 1 after, 30 scenarios (10 for the CDRC structures) of 2,000
 * invocations each.
 */
final class LincheckStress {

    private LincheckStress() {
    }

    /**
     * Checks {@code test} against {@code spec}; afterwards, pass or fail, closes every structure
     * in {@code created} (Lincheck makes one test instance per invocation), then {@code domain}. A
     * structure broken enough to fail the check may also fail to close (a node freed twice): that
     * error is then suppressed into Lincheck's report instead of replacing it.
     */
    static void check(final Class<?> test, final Class<?> spec, final Queue<? extends StructureLifecycle> created,
                      final ReclaimDomain domain) {
        check(test, spec, 30, created, (Runnable) domain::close);
    }

    /**
     * As above, for structures without a {@link ReclaimDomain}: {@code closeDomain} closes what
     * they live in, after every structure in {@code created} was closed.
     */
    static void check(final Class<?> test, final Class<?> spec, final Queue<? extends StructureLifecycle> created,
                      final Runnable closeDomain) {
        check(test, spec, 30, created, closeDomain);
    }

    /**
     * As above, for CDRC structures, with {@value #CDRC_ITERATIONS} scenarios (their tests
     * alternate both modes over Lincheck's instances, and the three of them must stay fast):
     * closes them, then their {@link Cdrc} domain.
     */
    static void check(final Class<?> test, final Class<?> spec, final Queue<? extends StructureLifecycle> created,
                      final Cdrc domain) {
        check(test, spec, CDRC_ITERATIONS, created, (Runnable) domain::close);
    }

    /** Scenarios of a CDRC structure's check. */
    static final int CDRC_ITERATIONS = 10;

    private static void check(final Class<?> test, final Class<?> spec, final int iterations,
                              final Queue<? extends StructureLifecycle> created, final Runnable closeDomain) {
        try {
            new StressOptions()
                    .iterations(iterations)
                    .invocationsPerIteration(2_000)
                    .threads(3)
                    .actorsPerThread(3)
                    .actorsBefore(2)
                    .actorsAfter(1)
                    .sequentialSpecification(spec)
                    .check(test);
        } catch (final Throwable failure) {
            try {
                close(created, closeDomain);
            } catch (final RuntimeException | Error e) {
                failure.addSuppressed(e);
            }
            throw failure;
        }
        close(created, closeDomain);
    }

    private static void close(final Queue<? extends StructureLifecycle> created, final Runnable closeDomain) {
        for (StructureLifecycle s; (s = created.poll()) != null; ) {
            s.close();
        }
        closeDomain.run();
    }
}
