package dev.limbo.bench.suite;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The bench command's options turn into a plan ({@code --dry-run}: nothing runs). Exit status 0 for
 * a plan, 2 for bad options, as the command's help says.
 */
class BenchCommandTest {

    private static int dryRun(final String... args) {
        final String[] all = new String[args.length + 1];
        System.arraycopy(args, 0, all, 0, args.length);
        all[args.length] = "--dry-run";
        return new CommandLine(new BenchCommand()).execute(all);
    }

    /** Every suite with its default options (a null --timeline-threads once threw a NullPointerException). */
    @ParameterizedTest
    @ValueSource(strings = {"quick", "full"})
    void eachSuitePlansWithItsDefaults(final String suite) {
        assertEquals(0, dryRun(suite, "-f", "reclaim,timeline,stamp-it", "-s", "debra,stampit"));
    }

    @Test
    void indexFamilyPlans() {
        assertEquals(0, dryRun("quick", "-f", "index"));
        assertEquals(0, dryRun("full", "-f", "index", "-p", "keys=1000000"));
    }

    @Test
    void cdrcFamilyPlans() {
        assertEquals(0, dryRun("quick", "-f", "cdrc"));
        assertEquals(0, dryRun("full", "-f", "cdrc,structures", "-s", "cdrc,cdrc-rc,heap,hp"));
    }

    @Test
    void timelineOptionsPlan() {
        assertEquals(0, dryRun("quick", "-f", "timeline", "-s", "debra", "--timeline-stress", "--timeline-stall",
                "--timeline-rounds", "3", "--timeline-seconds", "1"));
        assertEquals(0, dryRun("quick", "-f", "timeline", "-s", "hp", "--timeline-threads", "3"));
    }

    @Test
    void badOptionsExitWithTwo() {
        assertEquals(2, dryRun("quick", "-f", "timeline", "--timeline-rounds", "0"));
        assertEquals(2, dryRun("quick", "-s", "no-such-scheme"));
        assertEquals(2, dryRun("quick", "-f", "no-such-family"));
    }
}
