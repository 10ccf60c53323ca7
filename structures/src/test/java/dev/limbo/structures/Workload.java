package dev.limbo.structures;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import static dev.limbo.structures.LongMapChecks.orReserved;
import static dev.limbo.structures.OffHeapStructure.RESERVED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One worker's share of a concurrent test: operations on a part of the structure that no other
 * worker touches, so that the result of every operation is known and checked exactly, however the
 * threads interleave.
 */
abstract class Workload {

    final int id;
    final int workers;
    final SplittableRandom random;
    /** Operations completed. */
    long steps;

    Workload(final int id, final int workers, final long seed) {
        this.id = id;
        this.workers = workers;
        this.random = new SplittableRandom(seed * 1_000_003 + id);
    }

    /** A workload for {@code f}'s structure: {@link Keyed} with {@code keys} keys, or {@link Linear}. */
    static Workload of(final Fixture f, final int id, final int workers, final int keys, final long seed) {
        return f.kind.keyed()
                ? new Keyed(f.keyed(), f.kind.replaces(), id, workers, keys, seed)
                : new Linear(f.linear(), f.kind == Kind.QUEUE, id, workers, seed);
    }

    /** Runs one random operation and checks its result. */
    final void step() {
        operate();
        steps++;
    }

    abstract void operate();

    /**
     * A keyed structure: worker {@code id} of {@code workers} owns the keys {@code k} with
     * {@code floorMod(k, workers) == id}, {@code keys} of them around 0 (negative keys included),
     * and keeps a model of them. Every so often it also checks that size() lies within what all
     * workers' keys allow.
     */
    static final class Keyed extends Workload {
        private final LongMapChecks.Subject s;
        private final boolean replaces;
        private final int keys;
        final Map<Long, Long> model = new HashMap<>();

        Keyed(final LongMapChecks.Subject s, final boolean replaces, final int id, final int workers, final int keys,
              final long seed) {
            super(id, workers, seed);
            this.s = s;
            this.replaces = replaces;
            this.keys = keys;
        }

        @Override
        void operate() {
            final long k = (long) (random.nextInt(keys) - keys / 2) * workers + id;
            final long v = LongMapChecks.value(k, id, steps);
            final String at = "worker " + id + " op " + steps + " key " + k;
            switch (random.nextInt(replaces ? 6 : 5)) {
                case 0 -> assertEquals(orReserved(model.putIfAbsent(k, v)), s.putIfAbsent(k, v), at + " putIfAbsent");
                case 1 -> assertEquals(orReserved(model.get(k)), s.get(k), at + " get");
                case 2 -> assertEquals(model.containsKey(k), s.contains(k), at + " contains");
                case 3, 4 -> assertEquals(orReserved(model.remove(k)), s.remove(k), at + " remove");
                default -> assertEquals(orReserved(model.put(k, v)), s.put(k, v), at + " put");
            }
            if (steps % 1024 == 0) {
                final long size = s.size();
                assertTrue(size >= 0 && size <= (long) keys * workers, at + ": size " + size);
            }
        }
    }

    /**
     * A stack or queue: worker {@code id} adds the values {@code id << 32 | n}, and takes only
     * while it has added more than it took, so no take can find the structure empty (every worker's
     * adds outnumber its takes, and the taker's strictly). A queue's values must come out of it in
     * each worker's order of adding them (FIFO per producer).
     */
    static final class Linear extends Workload {
        private final Kind.Linear s;
        private final boolean fifo;
        private final long[] lastSeen;
        final LongMapChecks.LongList taken = new LongMapChecks.LongList();
        long added;

        Linear(final Kind.Linear s, final boolean fifo, final int id, final int workers, final long seed) {
            super(id, workers, seed);
            this.s = s;
            this.fifo = fifo;
            this.lastSeen = new long[workers];
            Arrays.fill(lastSeen, -1);
        }

        @Override
        void operate() {
            if (added == taken.size() || random.nextInt(100) < 55) {
                s.add((long) id << 32 | added);
                added++;
                return;
            }
            final long v = s.take();
            final String at = "worker " + id + " op " + steps;
            assertNotEquals(RESERVED, v, at + ": take found the structure empty");
            check(v, at);
            taken.add(v);
        }

        /** {@code v} was added by a worker, and (queue) after that worker's last value taken here. */
        void check(final long v, final String at) {
            final int producer = (int) (v >>> 32);
            final long n = v & 0xFFFF_FFFFL;
            assertTrue(producer >= 0 && producer < workers, at + ": value 0x" + Long.toHexString(v) + " never added");
            if (fifo) {
                assertTrue(n > lastSeen[producer], at + ": worker " + producer + "'s value " + n
                        + " came out after its value " + lastSeen[producer]);
                lastSeen[producer] = n;
            }
        }
    }
}
