package dev.limbo.bench.suite;

import dev.limbo.bench.timeline.JfrTimeline;
import dev.limbo.bench.timeline.TimedTrial;
import dev.limbo.bench.timeline.Timelines;
import dev.limbo.reclaim.Scheme;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatFactory;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.format.OutputFormat;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * {@code ./limbo bench}: builds nothing itself (the launcher does), runs a suite of JMH benchmarks
 * in-process through JMH's {@link Runner} and the timed trials, shows one progress line per fork
 * or trial, prints the summary tables and writes {@code results/<timestamp>/}: the raw JMH JSON,
 * JMH's full log, CSVs, PNG plots and {@code report.md}.
 */
@Command(name = "bench", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
        version = "limbo bench 0.1.0",
        description = {
            "Runs Limbo's benchmark suite and writes results/<timestamp>/ (report.md, PNG plots, raw JMH JSON, CSVs, "
                    + "JMH's log, a JFR recording of the timed trials).",
            "Suites: quick (default; 3-5 minutes on 2 cores) and full (every benchmark and parameter, threads "
                    + "swept up to 2 x cores, 3 forks x 8 one-second iterations; hours on large machines).",
            "Families: alloc (allocators vs malloc), reclaim (guard cost per scheme), structures (lock-free "
                    + "structures per scheme and the JDK), index (the off-heap index against the Java maps people "
                    + "use), timeline (unreclaimed nodes over time per scheme), stamp-it "
                    + "(Stamp-it's four benchmarks at one thread: its base-cost figure)."},
        subcommands = {BenchCommand.JfrTimelineCommand.class, CommandLine.HelpCommand.class})
public final class BenchCommand implements Callable<Integer> {

    @Parameters(index = "0", arity = "0..1", defaultValue = "quick", paramLabel = "SUITE",
            description = "quick (default) or full")
    String suite;

    @Option(names = {"-f", "--families"}, split = ",", paramLabel = "FAMILY",
            description = "Families to run, comma-separated: alloc, reclaim, structures, index, timeline, stamp-it, "
                    + "cdrc (default: all; the quick suite leaves stamp-it and cdrc out)")
    List<String> families;

    @Option(names = {"-t", "--threads"}, split = ",", paramLabel = "N",
            description = "Thread counts (default: quick 1,2; full 1,2,4,... up to 2 x cores)")
    List<Integer> threads;

    @Option(names = {"-s", "--schemes"}, split = ",", paramLabel = "ID",
            description = "Reclamation schemes (default: every Scheme: ${sys:limbo.bench.schemes}); jdk is the "
                    + "on-heap baseline of the structure benchmarks; cdrc, cdrc-rc and heap are the cdrc "
                    + "family's own (which otherwise runs its declared schemes)")
    List<String> schemes;

    @Option(names = {"-a", "--allocators"}, split = ",", paramLabel = "ID",
            description = "Allocators (default: quick limbo,malloc,netty,bump; full as the benchmarks declare)")
    List<String> allocators;

    @Option(names = {"-i", "--include"}, paramLabel = "REGEX",
            description = "Only JMH benchmarks whose name (package.Class.method) matches; lifts the quick subset")
    String include;

    @Option(names = {"-p", "--param"}, paramLabel = "NAME=V1,V2",
            description = "JMH parameter values, e.g. -p keyRange=10000 (replaces the suite's choice)")
    Map<String, String> params;

    @Option(names = "--forks", paramLabel = "N", description = "JMH forks (default: quick 2, full 3)")
    Integer forks;

    @Option(names = "--warmup", paramLabel = "N", description = "Warmup iterations per fork")
    Integer warmup;

    @Option(names = "--warmup-time", paramLabel = "MS", description = "Warmup iteration length in ms")
    Integer warmupMillis;

    @Option(names = "--iterations", paramLabel = "N", description = "Measured iterations per fork")
    Integer iterations;

    @Option(names = "--time", paramLabel = "MS", description = "Measured iteration length in ms")
    Integer iterationMillis;

    @Option(names = "--timeline-seconds", paramLabel = "S",
            description = "Sampled run time of each timed trial (default: quick 2, full 10)")
    Double timelineSeconds;

    @Option(names = "--timeline-warmup", paramLabel = "S",
            description = "Unsampled run time before each trial's samples, for the JIT (default: quick 0.5, full 2)")
    Double timelineWarmup;

    @Option(names = "--timeline-threads", paramLabel = "N", description = "Threads of the timed trials")
    Integer timelineThreads;

    @Option(names = "--timeline-structure", paramLabel = "NAME", defaultValue = "tree",
            description = "Structure of the timed trials: ${sys:limbo.bench.structures} (default: ${DEFAULT-VALUE})")
    String timelineStructure;

    @Option(names = "--timeline-keys", paramLabel = "N", description = "Key range of the timed trials")
    Integer timelineKeys;

    @Option(names = "--timeline-stress",
            description = "Stress the timed trials' allocator as the Token-EBR paper's 192 threads do: a thread cache of "
                    + "the fewest blocks per size class (" + STRESS_CACHE_BYTES + " bytes: 8 blocks), so batch frees "
                    + "overflow it, and 4 threads per core unless --timeline-threads is given")
    boolean timelineStress;

    @Option(names = "--timeline-rounds", paramLabel = "N",
            description = "Worker generations per timed trial: the sampled run is cut into N rounds, each run by "
                    + "fresh threads (Stamp-it's thread churn; default: quick 2, full 5)")
    Integer timelineRounds;

    @Option(names = "--timeline-stall",
            description = "One more thread pins each trial's domain before the workers start and stays pinned, "
                    + "idle, to the end: robust schemes keep reclaiming, the others' garbage grows")
    boolean timelineStall;

    /** {@code --timeline-stress}: the thread cache per size class (the allocator keeps at least 8 blocks). */
    static final long STRESS_CACHE_BYTES = 64;

    @Option(names = "--jfr", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Record the timed trials with JFR and draw the JFR timelines (default: on; --no-jfr: off)")
    boolean jfr;

    @Option(names = {"-o", "--output"}, paramLabel = "DIR", defaultValue = "results",
            description = "Where the timestamped results directory goes (default: results)")
    Path output;

    @Option(names = "--dry-run", description = "Print the plan and its estimated time; run nothing")
    boolean dryRun;

    @Option(names = "--ignore-lock",
            description = "Run even if another JMH holds its lock (results may be disturbed)")
    boolean ignoreLock;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** The console: System.out while JMH runs is the log. */
    private final PrintStream console = System.out;

    public static void main(final String[] args) {
        System.setProperty("java.awt.headless", "true");
        System.setProperty("limbo.bench.schemes",
                java.util.Arrays.stream(Scheme.values()).map(Scheme::id).collect(Collectors.joining(",")));
        System.setProperty("limbo.bench.structures", TimedTrial.Structure.ids());
        final CommandLine cl = new CommandLine(new BenchCommand());
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setParameterExceptionHandler((e, args2) -> {
            final CommandLine cmd = e.getCommandLine();
            cmd.getErr().println("bench: " + e.getMessage());
            cmd.getErr().println("Try './limbo bench " + (cmd.getParent() != null ? cmd.getCommandName() + " " : "")
                    + "--help'.");
            return 2;
        });
        cl.setExecutionExceptionHandler((e, cmd, parsed) -> {
            cmd.getErr().println("bench: " + (e.getMessage() != null ? e.getMessage() : e.toString()));
            if (!(e instanceof IllegalArgumentException) && !(e instanceof IOException)) {
                e.printStackTrace(cmd.getErr());
            }
            return 1;
        });
        System.exit(cl.execute(args));
    }

    private SuiteSpec suiteSpec() {
        final int cores = Runtime.getRuntime().availableProcessors();
        SuiteSpec s;
        try {
            s = SuiteSpec.of(suite, cores);
        } catch (final IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        if (threads != null) {
            if (threads.stream().anyMatch(t -> t < 1)) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--threads: counts must be >= 1");
            }
            s = s.withThreads(threads.stream().distinct().sorted().toList());
        }
        if (forks != null) {
            if (forks < 1) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--forks must be >= 1");
            }
            s = s.withForks(forks);
        }
        if (warmup != null || warmupMillis != null || iterations != null || iterationMillis != null) {
            s = s.withIterations(warmup != null ? warmup : s.warmupIterations(),
                    warmupMillis != null ? Duration.ofMillis(warmupMillis) : s.warmupTime(),
                    iterations != null ? iterations : s.iterations(),
                    iterationMillis != null ? Duration.ofMillis(iterationMillis) : s.iterationTime());
        }
        // Integer.valueOf: an int operand would unbox a null timelineThreads in the ternary
        final Integer trialThreads = timelineThreads != null || !timelineStress ? timelineThreads
                : Integer.valueOf(4 * cores);
        if (timelineSeconds != null || timelineWarmup != null || trialThreads != null || timelineKeys != null
                || timelineRounds != null) {
            if ((timelineSeconds != null && timelineSeconds <= 0) || (timelineWarmup != null && timelineWarmup < 0)
                    || (timelineThreads != null && timelineThreads < 1) || (timelineKeys != null && timelineKeys < 2)
                    || (timelineRounds != null && timelineRounds < 1)) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--timeline-seconds must be > 0, --timeline-warmup >= 0, --timeline-threads >= 1, "
                                + "--timeline-keys >= 2, --timeline-rounds >= 1");
            }
            s = s.withTimeline(timelineWarmup != null ? Duration.ofMillis(Math.round(timelineWarmup * 1000))
                            : s.timelineWarmup(),
                    timelineSeconds != null ? Duration.ofMillis(Math.round(timelineSeconds * 1000))
                            : s.timelineDuration(), trialThreads != null ? trialThreads : s.timelineThreads(),
                    timelineKeys != null ? timelineKeys : s.timelineKeyRange());
        }
        return s;
    }

    private Set<Family> familySet(final SuiteSpec suiteSpec) {
        if (families == null || families.isEmpty()) {
            final Set<Family> all = EnumSet.allOf(Family.class);
            if (suiteSpec.quick()) {
                all.removeIf(f -> !f.quick());
            }
            return all;
        }
        final Set<Family> set = EnumSet.noneOf(Family.class);
        for (final String f : families) {
            try {
                set.add(Family.of(f));
            } catch (final IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
        }
        return set;
    }

    private List<String> schemeList() {
        if (schemes == null) {
            return null;
        }
        for (final String s : schemes) {
            if (!s.equals(Planner.JDK) && !Planner.CDRC_SCHEMES.contains(s)) {
                try {
                    Scheme.of(s);
                } catch (final IllegalArgumentException e) {
                    throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
                }
            }
        }
        return List.copyOf(schemes);
    }

    private Map<String, List<String>> paramMap() {
        final Map<String, List<String>> m = new LinkedHashMap<>();
        if (params != null) {
            params.forEach((k, v) -> m.put(k, List.of(v.split(","))));
        }
        return m;
    }

    @Override
    public Integer call() throws Exception {
        final SuiteSpec s = suiteSpec();
        final Set<Family> fams = familySet(s);
        final Pattern includePattern;
        try {
            includePattern = include == null ? null : Pattern.compile(include);
        } catch (final PatternSyntaxException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--include: " + e.getDescription());
        }
        final Planner.Request request = new Planner.Request(s, fams, schemeList(), allocators, includePattern,
                paramMap());
        final List<PlannedRun> runs = Planner.plan(request, BenchmarkInfo.discover());
        final TimedTrial.Structure structure;
        try {
            structure = TimedTrial.Structure.of(timelineStructure);
        } catch (final IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--timeline-structure: " + e.getMessage());
        }
        final List<String> trialSchemes = schemes == null ? Planner.schemes(s)
                : schemes.stream().filter(x -> !x.equals(Planner.JDK) && !Planner.CDRC_SCHEMES.contains(x)).toList();
        final boolean timeline = fams.contains(Family.TIMELINE) && !trialSchemes.isEmpty();
        final double trialSeconds = s.trialSeconds();
        final int jmhForks = runs.stream().mapToInt(PlannedRun::forks).sum();
        final int steps = jmhForks + (timeline ? trialSchemes.size() : 0);
        final double planned = Planner.estimateSeconds(runs) + (timeline ? trialSchemes.size() * trialSeconds : 0);
        if (steps == 0) {
            console.println("bench: nothing to run (families " + fams + (include != null ? ", --include " + include : "")
                    + " select no benchmark)");
            return 2;
        }
        final List<String> parts = new ArrayList<>();
        if (!runs.isEmpty()) {
            parts.add(String.format(Locale.ROOT, "%d JMH runs (%d forks of %d x %d ms warmup + %d x %d ms)", runs.size(),
                    jmhForks, s.warmupIterations(), s.warmupTime().toMillis(), s.iterations(),
                    s.iterationTime().toMillis()));
        }
        if (timeline) {
            parts.add(String.format(Locale.ROOT, "%d timed trials of %.1f s", trialSchemes.size(),
                    s.timelineDuration().toMillis() / 1000.0));
        }
        console.printf(Locale.ROOT, "Limbo bench, %s suite: %s; estimated %s%n", s.name(), String.join(" + ", parts),
                Progress.clock(planned));
        if (dryRun) {
            for (final PlannedRun r : runs) {
                console.printf(Locale.ROOT, "  %-10s %-70s %3d forks  ~%s%n", r.family().id(), r.describe(), r.forks(),
                        Progress.clock(r.estimateSeconds()));
            }
            if (timeline) {
                console.printf(Locale.ROOT, "  %-10s %s, %d threads, keys %d, %.1f s warmup + %.1f s each: %s  ~%s%n",
                        "timeline", structure.id(), s.timelineThreads(), structure.keyRange(s.timelineKeyRange()),
                        s.timelineWarmup().toMillis() / 1000.0, s.timelineDuration().toMillis() / 1000.0, trialSchemes,
                        Progress.clock(trialSchemes.size() * trialSeconds));
            }
            return 0;
        }
        if (ignoreLock) {
            System.setProperty("jmh.ignoreLock", "true");
        }
        final Path dir = resultsDir();
        console.println("Results: " + dir);
        final Progress progress = new Progress(console, planned, steps,
                System.console() != null && System.console().isTerminal(), System::nanoTime);
        final List<String> failures = new ArrayList<>();
        final List<String> notes = new ArrayList<>();
        final String started = LocalDateTime.now().withNano(0).toString().replace('T', ' ');
        final List<RunResult> all = new ArrayList<>();
        try (PrintStream log = new PrintStream(new BufferedOutputStream(Files.newOutputStream(dir.resolve("jmh.log"))),
                true, StandardCharsets.UTF_8)) {
            if (!runs.isEmpty()) {
                runJmh(runs, dir, log, progress, all, failures);
            }
        }
        Timelines.Outcome outcome = null;
        if (timeline) {
            outcome = runTimeline(s, structure, trialSchemes, dir, progress, failures);
        }
        final double seconds = progress.elapsed();
        final List<Measurement> ms = all.stream().map(Measurement::of).toList();
        final List<Summary.Group> groups = Summary.groups(ms);
        Report.writeCsv(groups, dir.resolve("results.csv"));

        final Map<Summary.Group, String> plots = new LinkedHashMap<>();
        String allocPlot = null;
        final List<String> timelinePlots = new ArrayList<>();
        final List<String> jfrPlots = new ArrayList<>();
        JfrTimeline.Recording recording = null;
        final String noPlots = Charts.unavailableReason();
        if (noPlots != null) {
            notes.add("No plots: " + noPlots);
        }
        if (outcome != null && outcome.jfr() != null && Files.isRegularFile(outcome.jfr())) {
            try {
                recording = JfrTimeline.read(outcome.jfr());
            } catch (final IOException | RuntimeException e) {
                notes.add("Could not read timeline.jfr: " + e);
            }
        }
        if (noPlots == null) {
            for (final Summary.Group g : groups) {
                plot(notes, () -> plots.put(g, Plots.throughput(g, dir).getFileName().toString()));
            }
            final String[] alloc = new String[1];
            plot(notes, () -> {
                final Path p = Plots.allocComparison(groups, dir);
                alloc[0] = p == null ? null : p.getFileName().toString();
            });
            allocPlot = alloc[0];
            if (outcome != null && !outcome.results().isEmpty()) {
                final Timelines.Outcome o = outcome;
                plot(notes, () -> timelinePlots.add(Plots.garbage(o.results(), dir).getFileName().toString()));
                plot(notes, () -> timelinePlots.add(Plots.committed(o.results(), dir).getFileName().toString()));
                plot(notes, () -> timelinePlots.add(Plots.throughputOverTime(o.results(), dir).getFileName().toString()));
                plot(notes, () -> timelinePlots.add(Plots.epochsOverTime(o.results(), dir).getFileName().toString()));
            }
            if (recording != null) {
                final JfrTimeline.Recording rec = recording;
                plot(notes, () -> JfrTimeline.render(rec, dir, "jfr-timeline", 20)
                        .forEach(p -> jfrPlots.add(p.getFileName().toString())));
            }
        }
        final String summary = Summary.text(groups);
        Files.writeString(dir.resolve("summary.txt"), summary);
        final List<String> files = listFiles(dir, "report.md");
        final Report.Data data = new Report.Data(s, commandLine(), started, seconds, machine(), groups, plots,
                allocPlot, outcome, timelinePlots, recording, jfrPlots, failures, notes, files);
        Files.writeString(dir.resolve("report.md"), Report.markdown(data));

        console.println();
        console.println("Summary (score ± 99.9% error; x = ratio to baseline: malloc for allocators, none for schemes, "
                + "cdrc for the cdrc family)");
        console.println();
        console.print(summary);
        if (outcome != null && !outcome.results().isEmpty()) {
            console.println(timelineSummary(outcome));
        }
        for (final String n : notes) {
            console.println("note: " + n);
        }
        if (!failures.isEmpty()) {
            console.println(failures.size() + " failure(s):");
            failures.forEach(f -> console.println("  " + f));
        }
        console.printf(Locale.ROOT, "Done in %s. Report: %s%n", Progress.clock(progress.elapsed()),
                dir.resolve("report.md"));
        console.println("Files: " + String.join(", ", listFiles(dir)));
        return failures.isEmpty() ? 0 : 1;
    }

    private void runJmh(final List<PlannedRun> runs, final Path dir, final PrintStream log, final Progress progress,
                        final List<RunResult> all, final List<String> failures) throws IOException {
        final OutputFormat logFormat = OutputFormatFactory.createFormatInstance(log, VerboseMode.NORMAL);
        final JmhProgress format = new JmhProgress(logFormat, progress);
        final PrintStream out = System.out;
        final PrintStream err = System.err;
        Family section = null;
        try {
            System.setOut(log); // JMH and the forks' output go to the log; the console is ours
            System.setErr(log);
            for (final PlannedRun r : runs) {
                if (r.family() != section) {
                    section = r.family();
                    progress.note("-- " + section.id());
                }
                format.begin(r);
                final ChainedOptionsBuilder o = new OptionsBuilder()
                        .include("^" + Pattern.quote(r.benchmark().name()) + "$")
                        .forks(r.spec().forks())
                        .warmupIterations(r.spec().warmupIterations())
                        .warmupTime(TimeValue.milliseconds(r.spec().warmupTime().toMillis()))
                        .measurementIterations(r.spec().iterations())
                        .measurementTime(TimeValue.milliseconds(r.spec().iterationTime().toMillis()))
                        .threads(r.threads())
                        .shouldFailOnError(false)
                        .verbosity(VerboseMode.NORMAL);
                r.overrides().forEach((k, v) -> o.param(k, v.toArray(String[]::new)));
                if (!r.jvmArgs().isEmpty()) {
                    o.jvmArgs(r.jvmArgs().toArray(String[]::new));
                }
                if (r.family().profilesGc()) {
                    o.addProfiler(GCProfiler.class);
                }
                try {
                    all.addAll(runWaitingForLock(o, format, progress));
                } catch (final RunnerException e) {
                    final String msg = r.describe() + ": " + e.getMessage();
                    failures.add(msg);
                    progress.note("error: " + msg);
                    if (isLockError(e)) {
                        break;
                    }
                }
                writeJson(all, dir.resolve("jmh-result.json"));
            }
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
        failures.addAll(0, format.failures());
    }

    /** Seconds to wait for another JMH run to release JMH's lock before giving up. */
    private static final long LOCK_WAIT_SECONDS = 600;

    /**
     * Runs JMH; while another JMH run on this machine holds JMH's lock, waits for it (up to
     * {@link #LOCK_WAIT_SECONDS}) instead of failing at once.
     */
    private static Collection<RunResult> runWaitingForLock(final ChainedOptionsBuilder o, final JmhProgress format,
                                                           final Progress progress) throws RunnerException {
        final long deadline = System.nanoTime() + LOCK_WAIT_SECONDS * 1_000_000_000L;
        boolean told = false;
        while (true) {
            try {
                return new Runner(o.build(), format).run();
            } catch (final RunnerException e) {
                if (!isLockError(e) || System.nanoTime() > deadline) {
                    throw e;
                }
                if (!told) {
                    progress.note("waiting: another JMH run holds JMH's lock (pass --ignore-lock to run anyway)");
                    told = true;
                }
                try {
                    Thread.sleep(2000);
                } catch (final InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    private static boolean isLockError(final RunnerException e) {
        return String.valueOf(e.getMessage()).contains("JMH lock");
    }

    private static void writeJson(final List<RunResult> all, final Path file) throws IOException {
        try (PrintStream ps = new PrintStream(Files.newOutputStream(file), true, StandardCharsets.UTF_8)) {
            ResultFormatFactory.getInstance(ResultFormatType.JSON, ps).writeOut(all);
        }
    }

    /** {@code --timeline-rounds}, or the suite's default. */
    private int rounds(final SuiteSpec s) {
        return timelineRounds != null ? timelineRounds : s.quick() ? 2 : 5;
    }

    private Timelines.Outcome runTimeline(final SuiteSpec s, final TimedTrial.Structure structure,
                                          final List<String> trialSchemes, final Path dir, final Progress progress,
                                          final List<String> failures) throws IOException {
        progress.note("-- timeline");
        final int keys = structure.keyRange(s.timelineKeyRange());
        final Timelines.Settings settings = new Timelines.Settings(structure, s.timelineThreads(), s.timelineWarmup(),
                s.timelineDuration(), Duration.ofMillis(50), keys, 100, trialSchemes, jfr,
                timelineStress ? STRESS_CACHE_BYTES : 0, rounds(s), timelineStall);
        final double trialSeconds = s.trialSeconds();
        return Timelines.run(settings, dir, new Timelines.Listener() {
            @Override
            public void started(final String scheme, final int index, final int total) {
                progress.status(String.format(Locale.ROOT, "timeline   %s scheme=%s threads=%d  trial %d/%d",
                        structure.id(), scheme, s.timelineThreads(), index + 1, total));
            }

            @Override
            public void finished(final String scheme, final TimedTrial.Result r, final Throwable failure) {
                if (r != null) {
                    progress.step(trialSeconds, String.format(Locale.ROOT,
                            "timeline   %s scheme=%s threads=%d  %.1f s  %s Mops/s  peak unreclaimed %d",
                            structure.id(), scheme, s.timelineThreads(), r.seconds(), Summary.number(r.mopsPerSecond()),
                            r.peakUnreclaimed()));
                } else {
                    final String msg = "timeline " + scheme + ": " + failure;
                    failures.add(msg);
                    progress.step(trialSeconds, "timeline   " + structure.id() + " scheme=" + scheme + "  FAILED: "
                            + failure);
                }
            }
        });
    }

    static String timelineSummary(final Timelines.Outcome o) {
        final List<List<String>> rows = new ArrayList<>();
        rows.add(List.of("scheme", "Mops/s", "peak unreclaimed", "unreclaimed at end", "retired", "freed"));
        for (final TimedTrial.Result r : o.results()) {
            final List<TimedTrial.Sample> samples = r.samples();
            rows.add(List.of(r.config().scheme(), Summary.number(r.mopsPerSecond()), Long.toString(r.peakUnreclaimed()),
                    Long.toString(samples.isEmpty() ? 0 : samples.get(samples.size() - 1).unreclaimed()),
                    Long.toString(r.stats().retired()), Long.toString(r.stats().freed())));
        }
        final TimedTrial.Config c = o.results().get(0).config();
        return String.format(Locale.ROOT, "timeline  %s, %d threads, keys %d, %d%% updates, %.1f s per scheme%n",
                c.structure().id(), c.threads(), c.keyRange(), c.updatePercent(), c.duration().toMillis() / 1000.0)
                + Summary.align(rows, "  ");
    }

    /** A plot that may fail without failing the suite. */
    private interface PlotTask {
        void run() throws IOException;
    }

    private static void plot(final List<String> notes, final PlotTask task) {
        try {
            task.run();
        } catch (final IOException | RuntimeException | Error e) {
            notes.add("A plot failed: " + e);
        }
    }

    private Path resultsDir() throws IOException {
        final String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyy-MM-dd_HH-mm-ss", Locale.ROOT));
        Path dir = output.resolve(stamp);
        for (int i = 2; Files.exists(dir); i++) {
            dir = output.resolve(stamp + "-" + i);
        }
        Files.createDirectories(dir);
        return dir;
    }

    private static List<String> listFiles(final Path dir, final String... plus) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            final List<String> names = new ArrayList<>(s.map(p -> p.getFileName().toString()).toList());
            for (final String p : plus) {
                if (!names.contains(p)) {
                    names.add(p);
                }
            }
            names.sort(null);
            return names;
        }
    }

    private String commandLine() {
        final List<String> args = spec.commandLine().getParseResult().originalArgs();
        return ("./limbo bench " + String.join(" ", args)).trim();
    }

    static String machine() {
        final Runtime rt = Runtime.getRuntime();
        long memory = -1;
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            memory = os.getTotalMemorySize();
        }
        return String.format(Locale.ROOT, "%d cores, %s %s %s%s; JDK %s (%s)", rt.availableProcessors(),
                System.getProperty("os.name"), System.getProperty("os.version"), System.getProperty("os.arch"),
                memory > 0 ? String.format(Locale.ROOT, ", %.1f GiB memory", memory / (double) (1L << 30)) : "",
                System.getProperty("java.runtime.version"), System.getProperty("java.vm.vendor"));
    }

    /** {@code bench jfr-timeline RECORDING}: draws the Limbo events of a recording. */
    @Command(name = "jfr-timeline", mixinStandardHelpOptions = true,
            description = {"Turns a JFR recording with Limbo's dev.limbo.* events into timeline PNGs (Token-EBR "
                    + "Fig. 2): one row per thread, a box per reclamation batch, hazard scan or allocator cache "
                    + "flush, a diamond per epoch advance. A recording of the bench command's timed trials gives one "
                    + "PNG per trial; any other recording one PNG over its whole span."})
    static final class JfrTimelineCommand implements Callable<Integer> {

        @Parameters(index = "0", paramLabel = "RECORDING", description = "the .jfr file")
        Path recording;

        @Option(names = {"-o", "--output"}, paramLabel = "DIR",
                description = "Where the PNGs go (default: beside the recording)")
        Path output;

        @Option(names = "--prefix", defaultValue = "jfr-timeline", description = "File name prefix (default: ${DEFAULT-VALUE})")
        String prefix;

        @Option(names = "--zoom", paramLabel = "MS", defaultValue = "20",
                description = "Also draw the middle MS milliseconds of each timeline, below it; 0: off (default: ${DEFAULT-VALUE})")
        double zoom;

        @Override
        public Integer call() throws IOException {
            final JfrTimeline.Recording r = JfrTimeline.read(recording);
            if (r.windows().isEmpty()) {
                System.err.println("jfr-timeline: " + recording + " holds no dev.limbo.* events. Record them with "
                        + "-XX:StartFlightRecording:filename=rec.jfr,settings=default (the events are on by default), "
                        + "see the README.");
                return 1;
            }
            final String why = Charts.unavailableReason();
            if (why != null) {
                System.err.println("jfr-timeline: cannot draw: " + why);
                return 1;
            }
            final Path dir = output != null ? output
                    : recording.toAbsolutePath().getParent();
            final List<Path> files = JfrTimeline.render(r, dir, prefix, zoom);
            for (final JfrTimeline.Window w : r.windows()) {
                System.out.printf(Locale.ROOT, "%s: %d reclamation batches (longest %.3f ms), %d deferred, %d hazard "
                                + "scans, %d cache flushes, %d epoch advances, %d token passes, %d neutralizations%n",
                        w.title(), r.count(JfrTimeline.Kind.RECLAMATION, w),
                        r.longest(JfrTimeline.Kind.RECLAMATION, w) / 1e6, r.count(JfrTimeline.Kind.DEFERRED, w),
                        r.count(JfrTimeline.Kind.HAZARD_SCAN, w), r.count(JfrTimeline.Kind.CACHE_FLUSH, w),
                        r.count(JfrTimeline.Kind.EPOCH_ADVANCE, w), r.count(JfrTimeline.Kind.TOKEN_PASS, w),
                        r.count(JfrTimeline.Kind.NEUTRALIZATION, w));
            }
            files.forEach(f -> System.out.println("wrote " + f));
            return 0;
        }
    }
}
