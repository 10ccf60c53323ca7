package dev.limbo.bench.soak;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Participants;
import dev.limbo.reclaim.Capability;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.ReclaimStats;
import dev.limbo.reclaim.Scheme;
import dev.limbo.structures.EllenBst;
import dev.limbo.structures.HarrisMichaelList;
import dev.limbo.structures.MichaelHashMap;
import dev.limbo.structures.MichaelScottQueue;
import dev.limbo.structures.NatarajanMittalTree;
import dev.limbo.structures.OffHeapStructure;
import dev.limbo.structures.TreiberStack;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * {@code ./limbo soak [minutes]}: every structure under every scheme in turn, with mixed workloads,
 * thread churn (workers end after a few thousand operations and are replaced, by platform and
 * virtual threads in turn), a {@code trim()} and a full check every round (a couple of seconds):
 * every map result is checked exactly against the worker's own model of its key partition, the
 * structure's contents against the union of the models, queue and stack contents against what was
 * put in and taken out; the domain's counters and the allocator's bytes are sampled. Each
 * structure and domain is then closed, and the allocator's bytes in use must be back where they
 * began (except what {@code none} leaks by design). Prints a summary; exits 1 if anything failed.
 */
public final class Soak {

    private static final int WORKERS = 3;
    private static final int OPS_PER_THREAD = 4_000;
    private static final int KEYS = 4_096;
    private static final long ROUND_NANOS = TimeUnit.SECONDS.toNanos(2);

    private Soak() {
    }

    /** A structure under test, seen as a long-to-long map or as a bag of values. */
    private interface Subject {
        OffHeapStructure structure();

        /** One random operation of worker {@code w} on its own keys, checked against its model. */
        void step(int w, SplittableRandom random, Map<Long, Long> model, long serial);

        /** Quiescent: checks the contents against the models and the bag's counts; null if right. */
        String check(List<Map<Long, Long>> models);
    }

    /** A structure: its name, its domain's record size and slots, and how to build it. */
    private record Kind(String name, long recordBytes, int slots, Function<ReclaimDomain, Subject> create) {
        Kind(final String name, final Function<ReclaimDomain, Subject> create) {
            this(name, 32, 5, create);
        }

        /** Whether {@code scheme} can serve it: a counting scheme refuses EllenBst's two record layouts. */
        boolean servedBy(final Scheme scheme) {
            return !name.equals("ellen") || !scheme.capabilities().contains(Capability.COUNTED_LINKS);
        }
    }

    public static void main(final String[] args) throws Exception {
        final double minutes = args.length > 0 ? Double.parseDouble(args[0]) : 10;
        final List<Kind> kinds = List.of(
                new Kind("stack", d -> bag(new TreiberStack(d), true)),
                new Kind("queue", d -> bag(new MichaelScottQueue(d), false)),
                new Kind("list", d -> map(new HarrisMichaelList(d), 512)),
                new Kind("hashmap", d -> map(new MichaelHashMap(d, 1024), KEYS)),
                new Kind("tree", d -> map(new NatarajanMittalTree(d), KEYS)),
                new Kind("ellen", EllenBst.RECORD_BYTES, EllenBst.SLOTS, d -> map(new EllenBst(d), KEYS)));
        final Scheme[] schemes = Scheme.values();
        final long segmentNanos = Math.max(ROUND_NANOS,
                (long) (minutes * 60e9) / (kinds.size() * schemes.length));
        System.out.printf(Locale.ROOT, "soak: %.1f min, %d structures x %d schemes, %.1f s each, %d workers%n",
                minutes, kinds.size(), schemes.length, segmentNanos / 1e9, WORKERS);
        final List<String> lines = new ArrayList<>();
        int failed = 0;
        for (final Kind kind : kinds) {
            for (final Scheme scheme : schemes) {
                if (!kind.servedBy(scheme)) {
                    continue;
                }
                final String line = segment(kind, scheme, segmentNanos);
                System.out.println(line);
                lines.add(line);
                failed += line.contains("FAILED") ? 1 : 0;
            }
        }
        System.out.println();
        System.out.println("summary");
        lines.forEach(System.out::println);
        System.out.printf("%d of %d segments failed%n", failed, lines.size());
        System.exit(failed == 0 ? 0 : 1);
    }

    /** One structure under one scheme: rounds of churning workers, checks, close, memory accounting. */
    private static String segment(final Kind kind, final Scheme scheme, final long nanos) throws Exception {
        final LimboAllocator allocator = LimboAllocator.create();
        final long baseline = settle(allocator);
        final ReclaimDomain domain = ReclaimDomain.builder(scheme).allocator(allocator).recordBytes(kind.recordBytes())
                .slots(kind.slots()).build();
        final Subject subject = kind.create().apply(domain);
        final List<Map<Long, Long>> models = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++) {
            models.add(new HashMap<>());
        }
        final List<String> problems = new CopyOnWriteArrayList<>();
        final AtomicLong ops = new AtomicLong();
        final long[] serials = new long[WORKERS];
        long threads = 0;
        long rounds = 0;
        long worstInLimbo = 0;
        long worstBytes = 0;
        final long end = System.nanoTime() + nanos;
        while (System.nanoTime() < end && problems.isEmpty()) {
            final long roundEnd = Math.min(end, System.nanoTime() + ROUND_NANOS);
            final List<Thread> workers = new ArrayList<>();
            for (int w = 0; w < WORKERS; w++) {
                final int worker = w;
                workers.add(Thread.ofPlatform().start(() -> {
                    // churn: each thread does OPS_PER_THREAD operations and hands over to a new one
                    for (int gen = 0; System.nanoTime() < roundEnd && problems.isEmpty(); gen++) {
                        final Runnable body = () -> {
                            try {
                                final SplittableRandom random = new SplittableRandom(serials[worker] * 31 + worker);
                                for (int i = 0; i < OPS_PER_THREAD; i++) {
                                    subject.step(worker, random, models.get(worker), ++serials[worker]);
                                }
                                ops.addAndGet(OPS_PER_THREAD);
                            } catch (final Throwable t) {
                                problems.add(kind.name() + "/" + scheme.id() + " worker " + worker + ": " + t);
                            }
                        };
                        final Thread t = gen % 2 == 0 ? Thread.ofPlatform().start(body) : Thread.ofVirtual().start(body);
                        try {
                            t.join();
                        } catch (final InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                    }
                }));
            }
            for (final Thread t : workers) {
                t.join();
            }
            threads += workers.size();
            rounds++;
            final String wrong = subject.check(models);
            if (wrong != null) {
                problems.add(kind.name() + "/" + scheme.id() + " round " + rounds + ": " + wrong);
            }
            allocator.trim();
            final ReclaimStats s = domain.stats();
            if (s.retired() - s.freed() != s.inLimbo()) {
                problems.add("stats do not add up: " + s);
            }
            worstInLimbo = Math.max(worstInLimbo, s.inLimbo());
            worstBytes = Math.max(worstBytes, allocator.stats().bytesInUse() - baseline);
        }
        final ReclaimStats last = domain.stats();
        subject.structure().close();
        domain.close();
        final long left = settle(allocator) - baseline;
        final long leakedByDesign = scheme == Scheme.NONE ? last.retired() * (kind.recordBytes() + ReclaimDomain.TRAILER_BYTES) : 0;
        if (left != leakedByDesign) {
            problems.add(String.format(Locale.ROOT, "%d bytes left after close (expected %d)", left, leakedByDesign));
        }
        return String.format(Locale.ROOT, "%-8s %-9s %5d rounds %12d ops  worst unreclaimed %8d  worst bytes %,14d  %s",
                kind.name(), scheme.id(), rounds, ops.get(), worstInLimbo, worstBytes,
                problems.isEmpty() ? "ok" : "FAILED " + problems);
    }

    private static long settle(final LimboAllocator allocator) {
        Participants.reapTerminated();
        Participants.awaitReleases();
        allocator.trim();
        return allocator.stats().bytesInUse();
    }

    // ------------------------------------------------------------------ maps

    /** A long-to-long map structure: putIfAbsent, remove, get, size. */
    private interface LongMap {
        long putIfAbsent(long key, long value);

        long remove(long key);

        long get(long key);

        long size();
    }

    private static Subject map(final HarrisMichaelList list, final int keys) {
        return map(list, new LongMap() {
            public long putIfAbsent(final long k, final long v) {
                return list.putIfAbsent(k, v);
            }

            public long remove(final long k) {
                return list.remove(k);
            }

            public long get(final long k) {
                return list.get(k);
            }

            public long size() {
                return list.size();
            }
        }, keys);
    }

    private static Subject map(final MichaelHashMap m, final int keys) {
        return map(m, new LongMap() {
            public long putIfAbsent(final long k, final long v) {
                return m.putIfAbsent(k, v);
            }

            public long remove(final long k) {
                return m.remove(k);
            }

            public long get(final long k) {
                return m.get(k);
            }

            public long size() {
                return m.size();
            }
        }, keys);
    }

    private static Subject map(final EllenBst tree, final int keys) {
        return map(tree, new LongMap() {
            public long putIfAbsent(final long k, final long v) {
                return tree.putIfAbsent(k, v);
            }

            public long remove(final long k) {
                return tree.remove(k);
            }

            public long get(final long k) {
                return tree.get(k);
            }

            public long size() {
                return tree.size();
            }
        }, keys);
    }

    private static Subject map(final NatarajanMittalTree tree, final int keys) {
        return map(tree, new LongMap() {
            public long putIfAbsent(final long k, final long v) {
                return tree.putIfAbsent(k, v);
            }

            public long remove(final long k) {
                return tree.remove(k);
            }

            public long get(final long k) {
                return tree.get(k);
            }

            public long size() {
                return tree.size();
            }
        }, keys);
    }

    /** Worker w owns the keys congruent to w modulo WORKERS, so every result is known exactly. */
    private static Subject map(final OffHeapStructure structure, final LongMap map, final int keys) {
        return new Subject() {
            @Override
            public OffHeapStructure structure() {
                return structure;
            }

            @Override
            public void step(final int w, final SplittableRandom random, final Map<Long, Long> model, final long serial) {
                final long key = (long) random.nextInt(keys / WORKERS) * WORKERS + w;
                final Long had = model.get(key);
                final long want = had == null ? OffHeapStructure.RESERVED : had;
                final int op = random.nextInt(10);
                final long got;
                if (op < 4) {
                    got = map.putIfAbsent(key, serial);
                    if (had == null) {
                        model.put(key, serial);
                    }
                } else if (op < 7) {
                    got = map.remove(key);
                    model.remove(key);
                } else {
                    got = map.get(key);
                }
                if (got != want) {
                    throw new AssertionError(String.format(Locale.ROOT, "op %d on key %d returned %d, expected %d",
                            op, key, got, want));
                }
            }

            @Override
            public String check(final List<Map<Long, Long>> models) {
                long expected = 0;
                for (final Map<Long, Long> model : models) {
                    expected += model.size();
                    for (final Map.Entry<Long, Long> e : model.entrySet()) {
                        if (map.get(e.getKey()) != e.getValue()) {
                            return "key " + e.getKey() + " holds " + map.get(e.getKey()) + ", expected " + e.getValue();
                        }
                    }
                }
                final long size = map.size();
                return size == expected ? null : "size " + size + ", expected " + expected;
            }
        };
    }

    // ------------------------------------------------------------------ stack and queue

    /**
     * A bag of values: workers put unique values and take arbitrary ones; every round drains it and
     * checks that what came out equals what went in (count and sum).
     */
    private static Subject bag(final OffHeapStructure structure, final boolean stack) {
        final AtomicLong putCount = new AtomicLong();
        final AtomicLong putSum = new AtomicLong();
        final AtomicLong takeCount = new AtomicLong();
        final AtomicLong takeSum = new AtomicLong();
        return new Subject() {
            @Override
            public OffHeapStructure structure() {
                return structure;
            }

            private void put(final long v) {
                if (stack) {
                    ((TreiberStack) structure).push(v);
                } else {
                    ((MichaelScottQueue) structure).enqueue(v);
                }
            }

            private long take() {
                return stack ? ((TreiberStack) structure).pop() : ((MichaelScottQueue) structure).dequeue();
            }

            @Override
            public void step(final int w, final SplittableRandom random, final Map<Long, Long> model, final long serial) {
                if (random.nextInt(10) < 5) {
                    final long v = ((long) w << 48) | serial;
                    put(v);
                    putCount.incrementAndGet();
                    putSum.addAndGet(v);
                } else {
                    final long v = take();
                    if (v != OffHeapStructure.RESERVED) {
                        takeCount.incrementAndGet();
                        takeSum.addAndGet(v);
                    }
                }
            }

            @Override
            public String check(final List<Map<Long, Long>> models) {
                for (long v; (v = take()) != OffHeapStructure.RESERVED; ) {
                    takeCount.incrementAndGet();
                    takeSum.addAndGet(v);
                }
                if (putCount.get() != takeCount.get() || putSum.get() != takeSum.get()) {
                    return String.format(Locale.ROOT, "put %d values (sum %d), took %d (sum %d)",
                            putCount.get(), putSum.get(), takeCount.get(), takeSum.get());
                }
                return null;
            }
        };
    }
}
