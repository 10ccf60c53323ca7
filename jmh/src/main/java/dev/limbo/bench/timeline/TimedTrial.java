package dev.limbo.bench.timeline;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.bench.structures.StructureBenchmark.Rng;
import dev.limbo.core.Participants;
import dev.limbo.core.Region;
import dev.limbo.reclaim.Guard;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Restart;
import dev.limbo.reclaim.Scheme;
import dev.limbo.reclaim.ReclaimStats;
import dev.limbo.structures.HarrisMichaelList;
import dev.limbo.structures.MichaelHashMap;
import dev.limbo.structures.NatarajanMittalTree;
import dev.limbo.structures.OffHeapStructure;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiFunction;
import java.util.function.LongPredicate;
import java.util.stream.Collectors;

import static dev.limbo.structures.OffHeapStructure.RESERVED;

/**
 * A timed trial in the style of setbench (Brown et al.; the Token-EBR paper's Figs. 4-9, Stamp-it's
 * Fig. 9): prefill a structure to half its key range, run {@code threads} threads on a random
 * insert/delete/lookup mix for a fixed time, and sample every {@code sampleInterval} the
 * unreclaimed (retired, not yet freed) nodes, the committed off-heap bytes and the throughput.
 *
 * <p>Throughput comes from per-thread counters, each in its own 128-byte stretch of one array and
 * published with an opaque store by its owner only, so the sampler adds no shared contended write
 * to the hot loop. Each trial builds a fresh allocator and domain and closes both afterwards.
 */
public final class TimedTrial {

    /**
     * The structures a trial can run, each with its domain's record size and slots and its
     * operations: a structure added here is offered by {@code --timeline-structure} without other
     * edits.
     */
    public enum Structure {
        /** {@link NatarajanMittalTree}: 32-byte nodes, 5 guard slots. */
        TREE("tree", NatarajanMittalTree.NODE_BYTES, NatarajanMittalTree.SLOTS, Integer.MAX_VALUE, (d, keyRange) -> {
            final NatarajanMittalTree t = new NatarajanMittalTree(d);
            return new Target(t, k -> t.insert(k, k), k -> t.remove(k) != RESERVED, t::contains);
        }),
        /** {@link HarrisMichaelList}: 24-byte nodes, 3 slots; O(n) operations, so at most 2000 keys. */
        LIST("list", 24, 3, 2000, (d, keyRange) -> {
            final HarrisMichaelList l = new HarrisMichaelList(d);
            return new Target(l, l::insert, k -> l.remove(k) != RESERVED, l::contains);
        }),
        /** {@link MichaelHashMap}: Harris-Michael buckets, load factor about 1. */
        HASHMAP("hashmap", 24, 3, Integer.MAX_VALUE, (d, keyRange) -> {
            final MichaelHashMap m = new MichaelHashMap(d,
                    Math.max(16, Integer.highestOneBit(Math.max(1, keyRange / 2)) << 1));
            return new Target(m, k -> m.putIfAbsent(k, k) == RESERVED, k -> m.remove(k) != RESERVED, m::contains);
        });

        private final String id;
        private final long recordBytes;
        private final int slots;
        private final int maxKeyRange;
        private final BiFunction<ReclaimDomain, Integer, Target> open;

        Structure(final String id, final long recordBytes, final int slots, final int maxKeyRange,
                  final BiFunction<ReclaimDomain, Integer, Target> open) {
            this.id = id;
            this.recordBytes = recordBytes;
            this.slots = slots;
            this.maxKeyRange = maxKeyRange;
            this.open = open;
        }

        public String id() {
            return id;
        }

        /** The key range a trial of this structure uses when {@code wanted} is asked for. */
        public int keyRange(final int wanted) {
            return Math.min(wanted, maxKeyRange);
        }

        public static Structure of(final String id) {
            for (final Structure s : values()) {
                if (s.id.equals(id)) {
                    return s;
                }
            }
            throw new IllegalArgumentException("unknown structure '" + id + "'; known: " + ids());
        }

        /** Every structure's id, comma-separated. */
        public static String ids() {
            return Arrays.stream(values()).map(Structure::id).collect(Collectors.joining(", "));
        }

        @Override
        public String toString() {
            return id;
        }

        ReclaimDomain domain(final String scheme, final LimboAllocator allocator) {
            // amortized free frees straight to the allocator, as in the Token-EBR paper
            return ReclaimDomain.builder(scheme).allocator(allocator).recordBytes(recordBytes).slots(slots)
                    .bypassPool(Scheme.of(scheme).amortized()).build();
        }
    }

    /**
     * What to run.
     *
     * @param structure      the structure
     * @param scheme         the reclamation scheme id
     * @param threads        worker threads
     * @param warmup         how long the workers run before sampling starts (the JIT compiles the
     *                       operations; garbage already accumulates)
     * @param duration       how long the workers run after the warmup, sampled
     * @param sampleInterval time between samples
     * @param keyRange       keys are drawn from [0, keyRange); the structure is prefilled to half
     * @param updatePercent  percentage of updates (half inserts, half deletes); the rest are lookups
     * @param seed           base seed of the threads' random numbers
     * @param cacheBytes     the allocator's thread cache per size class
     *                       ({@link LimboAllocator.Builder#cacheBytesPerClass}), or 0 for its default;
     *                       a small cache makes batch frees overflow it, as jemalloc's tcache does in
     *                       the Token-EBR paper
     * @param rounds         worker generations: the sampled run is cut into this many equal rounds,
     *                       each run by fresh threads that start when the previous round's have
     *                       ended (Stamp-it's efficiency benchmark re-creates its threads every
     *                       trial: what departed threads leave behind shows only under such churn)
     * @param stalled        whether one more thread pins the domain before the workers start and
     *                       stays pinned, doing nothing, until the sampled run ends: a stalled or
     *                       descheduled thread, which robust schemes must not let stop reclamation
     */
    public record Config(Structure structure, String scheme, int threads, Duration warmup, Duration duration,
                         Duration sampleInterval,
                         int keyRange, int updatePercent, long seed, long cacheBytes, int rounds, boolean stalled) {

        /** A trial of one round, no stalled thread, on the allocator's default thread cache. */
        public Config(final Structure structure, final String scheme, final int threads, final Duration warmup,
                      final Duration duration, final Duration sampleInterval, final int keyRange,
                      final int updatePercent, final long seed) {
            this(structure, scheme, threads, warmup, duration, sampleInterval, keyRange, updatePercent, seed, 0, 1,
                    false);
        }

        public Config {
            if (rounds < 1) {
                throw new IllegalArgumentException("rounds must be >= 1, got " + rounds);
            }
            if (cacheBytes < 0) {
                throw new IllegalArgumentException("cacheBytes must be >= 0 (0: the allocator's default), got "
                        + cacheBytes);
            }
            if (threads < 1) {
                throw new IllegalArgumentException("threads must be >= 1, got " + threads);
            }
            if (keyRange < 2) {
                throw new IllegalArgumentException("keyRange must be >= 2, got " + keyRange);
            }
            if (updatePercent < 0 || updatePercent > 100) {
                throw new IllegalArgumentException("updatePercent must be in [0, 100], got " + updatePercent);
            }
            if (duration.isNegative() || duration.isZero() || sampleInterval.isNegative() || sampleInterval.isZero()
                    || warmup.isNegative()) {
                throw new IllegalArgumentException("duration and sampleInterval must be positive, warmup >= 0");
            }
        }
    }

    /**
     * One sample.
     *
     * @param seconds        time since sampling started (after the warmup)
     * @param unreclaimed    retired nodes not yet freed ({@link ReclaimStats#inLimbo()})
     * @param retired        nodes retired so far
     * @param committedBytes bytes committed in the whole off-heap region
     * @param bytesInUse     bytes in live allocations of the trial's allocator
     * @param ops            operations completed since the previous sample
     * @param mopsPerSecond  throughput since the previous sample, in million operations per second
     * @param advances       epoch advances (token rounds, for Token-EBR) since the previous sample
     * @param epochsPerSecond advances per second since the previous sample
     */
    public record Sample(double seconds, long unreclaimed, long retired, long committedBytes, long bytesInUse,
                         long ops, double mopsPerSecond, long advances, double epochsPerSecond) {
    }

    /**
     * A trial's outcome.
     *
     * @param config         what ran
     * @param samples        the samples, the first at time 0
     * @param totalOps       operations completed by all workers
     * @param seconds        measured run time
     * @param prefillSeconds time the prefill took
     * @param stats          the domain's counters at the end, before it was closed
     */
    public record Result(Config config, List<Sample> samples, long totalOps, double seconds, double prefillSeconds,
                         ReclaimStats stats) {
        /** Mean throughput in million operations per second. */
        public double mopsPerSecond() {
            return seconds > 0 ? totalOps / seconds / 1e6 : 0;
        }

        /** Epoch advances (token rounds) per second over the sampled run. */
        public double epochsPerSecond() {
            return seconds > 0 ? samples.stream().mapToLong(Sample::advances).sum() / seconds : 0;
        }

        /** The largest unreclaimed count sampled. */
        public long peakUnreclaimed() {
            return samples.stream().mapToLong(Sample::unreclaimed).max().orElse(0);
        }
    }

    /** longs per counter: 128 bytes, two cache lines, so adjacent-line prefetch does not share. */
    private static final int STRIDE = 16;
    private static final VarHandle COUNTS = MethodHandles.arrayElementVarHandle(long[].class);

    private TimedTrial() {
    }

    /**
     * The operations a trial calls, the same for every structure; each returns whether it found
     * the key or changed the structure.
     */
    private record Target(OffHeapStructure structure, LongPredicate insert, LongPredicate remove,
                          LongPredicate contains) implements AutoCloseable {
        @Override
        public void close() {
            structure.close();
        }
    }

    /** Runs one trial; {@code onStart} and {@code onEnd} run on the calling thread around the timed part. */
    public static Result run(final Config c, final Runnable onStart, final Runnable onEnd) throws InterruptedException {
        final LimboAllocator allocator = c.cacheBytes() > 0
                ? LimboAllocator.builder().cacheBytesPerClass(c.cacheBytes()).build() : LimboAllocator.create();
        final ReclaimDomain domain = c.structure().domain(c.scheme(), allocator);
        try (Target target = c.structure().open.apply(domain, c.keyRange())) {
            final long prefillStart = System.nanoTime();
            final Rng prefill = mixed(c.seed());
            for (int size = 0; size < c.keyRange() / 2; ) {
                if (target.insert().test(prefill.nextInt(c.keyRange()))) {
                    size++;
                }
            }
            final double prefillSeconds = (System.nanoTime() - prefillStart) / 1e9;
            final Result r = measure(c, target, domain, allocator, onStart, onEnd, prefillSeconds);
            Participants.close();
            return r;
        } finally {
            domain.close();
            allocator.trim();
        }
    }

    private static Result measure(final Config c, final Target target, final ReclaimDomain domain,
                                  final LimboAllocator allocator, final Runnable onStart, final Runnable onEnd,
                                  final double prefillSeconds) throws InterruptedException {
        final long[] counts = new long[(c.threads() + 2) * STRIDE];
        final Staller staller = c.stalled() ? Staller.start(domain) : null;
        final CountDownLatch go = new CountDownLatch(1);
        Worker[] workers = start(c, target, counts, go, 0);
        final List<Sample> samples = new ArrayList<>();
        final Region region = Region.global();
        final long interval = c.sampleInterval().toNanos();
        final long duration = c.duration().toNanos();
        go.countDown();
        final long warm = System.nanoTime() + c.warmup().toNanos();
        for (long now; (now = System.nanoTime()) < warm; ) {
            LockSupport.parkNanos(warm - now);
        }
        onStart.run();
        final long t0 = System.nanoTime();
        final long startOps = total(counts, c.threads());
        long lastAdvances = domain.stats().advances();
        samples.add(sample(0, domain, region, allocator, 0, 0, 0));
        long lastOps = startOps;
        long lastTime = t0;
        long next = t0 + interval;
        long end = t0 + duration;
        int round = 1;
        long nextRound = c.rounds() > 1 ? t0 + duration / c.rounds() : Long.MAX_VALUE;
        boolean failed = false;
        while (true) {
            final long deadline = Math.min(Math.min(next, end), nextRound);
            for (long now; (now = System.nanoTime()) < deadline; ) {
                LockSupport.parkNanos(deadline - now);
            }
            final boolean newRound = deadline == nextRound && deadline < end;
            if (newRound) {
                stopAll(workers); // this round's threads end (and release their ids) before the next's start
            }
            final long now = System.nanoTime();
            final long ops = total(counts, c.threads());
            final Sample p = sample((now - t0) / 1e9, domain, region, allocator, ops - lastOps, now - lastTime,
                    lastAdvances);
            samples.add(p);
            lastAdvances += p.advances();
            lastOps = ops;
            lastTime = now;
            if (!failed && failure(workers) != null) {
                failed = true;
                end = now; // stop at once: the result is reported as failed below
            }
            if (now >= end) {
                break;
            }
            if (newRound) {
                workers = start(c, target, counts, new CountDownLatch(0), round++);
                nextRound = round < c.rounds() ? t0 + duration * round / c.rounds() : Long.MAX_VALUE;
            }
            if (deadline == next) {
                next += interval;
            }
        }
        stopAll(workers);
        if (staller != null) {
            staller.release();
        }
        final long elapsed = lastTime - t0; // up to the last sample, like the operations counted
        onEnd.run();
        final Worker bad = failure(workers);
        if (bad != null) {
            throw new IllegalStateException("timed trial " + c.structure() + "/" + c.scheme() + ": worker "
                    + bad.getName() + " failed: " + bad.failure, bad.failure);
        }
        return new Result(c, samples, lastOps - startOps, elapsed / 1e9, prefillSeconds, domain.stats());
    }

    /**
     * Starts round {@code round}'s workers: fresh threads, each keeping its operation count in its
     * own counter slot, which carries on from the previous round's thread in that slot.
     */
    private static Worker[] start(final Config c, final Target target, final long[] counts, final CountDownLatch go,
                                  final int round) {
        final Worker[] workers = new Worker[c.threads()];
        for (int i = 0; i < workers.length; i++) {
            final int slot = (i + 1) * STRIDE;
            workers[i] = new Worker(c, target, counts, slot, go, c.seed() * 31 + (long) round * c.threads() + i + 1,
                    (long) COUNTS.getOpaque(counts, slot));
            workers[i].setName(String.format(Locale.ROOT, "limbo-trial-%s-%d-%d", c.scheme(), round, i));
            workers[i].setDaemon(true);
            workers[i].start();
        }
        return workers;
    }

    /** Tells the workers to stop and waits until they have ended. */
    private static void stopAll(final Worker[] workers) throws InterruptedException {
        for (final Worker w : workers) {
            w.stop = true;
        }
        for (final Worker w : workers) {
            w.join();
        }
    }

    /** The first worker that failed, or null. */
    private static Worker failure(final Worker[] workers) {
        for (final Worker w : workers) {
            if (w.failure != null) {
                return w;
            }
        }
        return null;
    }

    /** {@link Config#stalled}: a thread pinned in the domain, doing nothing until released. */
    private static final class Staller extends Thread {
        private final ReclaimDomain domain;
        private final CountDownLatch pinned = new CountDownLatch(1);
        private final CountDownLatch release = new CountDownLatch(1);

        private Staller(final ReclaimDomain domain) {
            this.domain = domain;
            setName("limbo-trial-stalled");
            setDaemon(true);
        }

        /** Starts a staller and returns once it is pinned. */
        static Staller start(final ReclaimDomain domain) throws InterruptedException {
            final Staller s = new Staller(domain);
            s.start();
            s.pinned.await();
            return s;
        }

        /** Pins and waits: a section with no protections, held for the whole sampled run. */
        @Override
        public void run() {
            try (Guard g = domain.pin()) {
                pinned.countDown();
                release.await();
                g.poll(); // a neutralizing scheme may have restarted this section: nothing was read
            } catch (final InterruptedException | Restart e) {
                // released, or neutralized while stalled: it read nothing, so nothing to redo
            } finally {
                pinned.countDown();
                Participants.close();
            }
        }

        /** Ends the stall and waits for the thread to unpin and end. */
        void release() throws InterruptedException {
            release.countDown();
            join();
        }
    }

    /** A sample; {@code lastAdvances}: the domain's advances at the previous sample. */
    private static Sample sample(final double seconds, final ReclaimDomain domain, final Region region,
                                 final LimboAllocator allocator, final long ops, final long nanos,
                                 final long lastAdvances) {
        final ReclaimStats s = domain.stats();
        final long advances = nanos > 0 ? s.advances() - lastAdvances : 0;
        return new Sample(seconds, s.inLimbo(), s.retired(), region.committedBytes(), allocator.stats().bytesInUse(),
                ops, nanos > 0 ? ops * 1e3 / nanos : 0, advances, nanos > 0 ? advances * 1e9 / nanos : 0);
    }

    private static long total(final long[] counts, final int threads) {
        long sum = 0;
        for (int i = 1; i <= threads; i++) {
            sum += (long) COUNTS.getOpaque(counts, i * STRIDE);
        }
        return sum;
    }

    /** A worker: the operation mix until told to stop; publishes its count after every operation. */
    private static final class Worker extends Thread {
        private final Target target;
        private final long[] counts;
        private final int slot;
        private final CountDownLatch go;
        private final Rng rng;
        private final int keyRange;
        private final int insertBelow;
        private final int updateBelow;
        volatile boolean stop;
        volatile Throwable failure;

        private final long initialCount;

        Worker(final Config c, final Target target, final long[] counts, final int slot, final CountDownLatch go,
               final long seed, final long initialCount) {
            this.initialCount = initialCount;
            this.target = target;
            this.counts = counts;
            this.slot = slot;
            this.go = go;
            this.rng = mixed(seed);
            this.keyRange = c.keyRange();
            this.insertBelow = c.updatePercent() / 2;
            this.updateBelow = c.updatePercent();
        }

        @Override
        public void run() {
            try {
                go.await();
                long n = initialCount;
                while (!stop) {
                    final int r = rng.nextInt(100);
                    final long key = rng.nextInt(keyRange);
                    if (r < insertBelow) {
                        target.insert().test(key);
                    } else if (r < updateBelow) {
                        target.remove().test(key);
                    } else {
                        target.contains().test(key);
                    }
                    COUNTS.setOpaque(counts, slot, ++n);
                }
            } catch (final Throwable t) {
                failure = t;
            } finally {
                Participants.close();
            }
        }
    }

    /** The benchmarks' generator, seeded with {@code seed} spread over all 64 bits (0 stays valid). */
    static Rng mixed(final long seed) {
        return new Rng(seed * 0x9E3779B97F4A7C15L);
    }
}
