package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Scheme;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static dev.limbo.structures.OffHeapStructure.RESERVED;
import static dev.limbo.structures.OffHeapStructure.RESERVED_KEY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The misuse catalogue: every public method of every structure with every kind of bad input it
 * can be given (the reserved key or value, a null, closed or unsuitable domain, bad bucket counts
 * and timeouts, a closed structure, a closed domain), each answered by a clear exception, with the
 * structure intact afterwards (same contents, still usable) and nothing leaked. No method is
 * confined to a thread (each call pins the calling thread's own guard), so no wrong thread exists
 * to call one from.
 */
class MisuseTest {

    private static final String BAD_KEY = "key Long.MAX_VALUE is reserved for sentinels";
    private static final String BAD_VALUE = "value Long.MIN_VALUE is reserved: it means absent or empty";

    /** A call that must throw {@code type} with {@code message}. */
    private record Misuse(String call, Class<? extends Throwable> type, String message, Executable run) {
    }

    /** Every public operation of {@code s} with a reserved key or value, {@code k} a key it holds. */
    private static List<Misuse> reservedArguments(final OffHeapStructure s, final long k) {
        final List<Misuse> all = new ArrayList<>();
        switch (s) {
            case TreiberStack stack -> all.add(bad("push(RESERVED)", BAD_VALUE, () -> stack.push(RESERVED)));
            case MichaelScottQueue queue -> all.add(bad("enqueue(RESERVED)", BAD_VALUE, () -> queue.enqueue(RESERVED)));
            case HarrisMichaelList list -> {
                all.add(bad("insert(RESERVED_KEY)", BAD_KEY, () -> list.insert(RESERVED_KEY)));
                all.add(bad("putIfAbsent(RESERVED_KEY, 1)", BAD_KEY, () -> list.putIfAbsent(RESERVED_KEY, 1)));
                all.add(bad("putIfAbsent(k, RESERVED)", BAD_VALUE, () -> list.putIfAbsent(k, RESERVED)));
                all.add(bad("putIfAbsent(RESERVED_KEY, RESERVED)", BAD_KEY,
                        () -> list.putIfAbsent(RESERVED_KEY, RESERVED)));
                all.add(bad("put(RESERVED_KEY, 1)", BAD_KEY, () -> list.put(RESERVED_KEY, 1)));
                all.add(bad("put(k, RESERVED)", BAD_VALUE, () -> list.put(k, RESERVED)));
                all.add(bad("get(RESERVED_KEY)", BAD_KEY, () -> list.get(RESERVED_KEY)));
                all.add(bad("contains(RESERVED_KEY)", BAD_KEY, () -> list.contains(RESERVED_KEY)));
                all.add(bad("remove(RESERVED_KEY)", BAD_KEY, () -> list.remove(RESERVED_KEY)));
            }
            case MichaelHashMap map -> {
                all.add(bad("putIfAbsent(RESERVED_KEY, 1)", BAD_KEY, () -> map.putIfAbsent(RESERVED_KEY, 1)));
                all.add(bad("putIfAbsent(k, RESERVED)", BAD_VALUE, () -> map.putIfAbsent(k, RESERVED)));
                all.add(bad("putIfAbsent(RESERVED_KEY, RESERVED)", BAD_KEY,
                        () -> map.putIfAbsent(RESERVED_KEY, RESERVED)));
                all.add(bad("put(RESERVED_KEY, 1)", BAD_KEY, () -> map.put(RESERVED_KEY, 1)));
                all.add(bad("put(k, RESERVED)", BAD_VALUE, () -> map.put(k, RESERVED)));
                all.add(bad("get(RESERVED_KEY)", BAD_KEY, () -> map.get(RESERVED_KEY)));
                all.add(bad("contains(RESERVED_KEY)", BAD_KEY, () -> map.contains(RESERVED_KEY)));
                all.add(bad("remove(RESERVED_KEY)", BAD_KEY, () -> map.remove(RESERVED_KEY)));
            }
            case EllenBst tree -> {
                all.add(bad("insert(RESERVED_KEY, 1)", BAD_KEY, () -> tree.insert(RESERVED_KEY, 1)));
                all.add(bad("insert(k, RESERVED)", BAD_VALUE, () -> tree.insert(k, RESERVED)));
                all.add(bad("putIfAbsent(RESERVED_KEY, 1)", BAD_KEY, () -> tree.putIfAbsent(RESERVED_KEY, 1)));
                all.add(bad("putIfAbsent(k, RESERVED)", BAD_VALUE, () -> tree.putIfAbsent(k, RESERVED)));
                all.add(bad("putIfAbsent(RESERVED_KEY, RESERVED)", BAD_KEY,
                        () -> tree.putIfAbsent(RESERVED_KEY, RESERVED)));
                all.add(bad("get(RESERVED_KEY)", BAD_KEY, () -> tree.get(RESERVED_KEY)));
                all.add(bad("contains(RESERVED_KEY)", BAD_KEY, () -> tree.contains(RESERVED_KEY)));
                all.add(bad("remove(RESERVED_KEY)", BAD_KEY, () -> tree.remove(RESERVED_KEY)));
            }
            case NatarajanMittalTree tree -> {
                all.add(bad("insert(RESERVED_KEY, 1)", BAD_KEY, () -> tree.insert(RESERVED_KEY, 1)));
                all.add(bad("insert(k, RESERVED)", BAD_VALUE, () -> tree.insert(k, RESERVED)));
                all.add(bad("putIfAbsent(RESERVED_KEY, 1)", BAD_KEY, () -> tree.putIfAbsent(RESERVED_KEY, 1)));
                all.add(bad("putIfAbsent(k, RESERVED)", BAD_VALUE, () -> tree.putIfAbsent(k, RESERVED)));
                all.add(bad("putIfAbsent(RESERVED_KEY, RESERVED)", BAD_KEY,
                        () -> tree.putIfAbsent(RESERVED_KEY, RESERVED)));
                all.add(bad("get(RESERVED_KEY)", BAD_KEY, () -> tree.get(RESERVED_KEY)));
                all.add(bad("contains(RESERVED_KEY)", BAD_KEY, () -> tree.contains(RESERVED_KEY)));
                all.add(bad("remove(RESERVED_KEY)", BAD_KEY, () -> tree.remove(RESERVED_KEY)));
            }
            case BrownAbTree tree -> { // every key and value is valid: the other arguments
                all.add(bad("copyLeaf(k, AbTreeLeafCopy(4))", "the AbTreeLeafCopy holds 4 entries; this tree's leaves "
                        + "hold up to " + tree.degree(), () -> tree.copyLeaf(k, new AbTreeLeafCopy(4))));
                all.add(bad("bulkLoad(unsorted)", "bulk load: keys must be strictly ascending; key 1 at index 1 "
                        + "follows 2", () -> tree.bulkLoad(new long[] {2, 1}, new long[2])));
            }
            case LiuZhangSpearHashMap map -> // every key and value is valid: the other arguments
                    all.add(bad("scanStep(0, long[1])", "a scan step needs an array of at least 2 words, got 1",
                            () -> map.scanStep(0, new long[1])));
            default -> throw new IllegalArgumentException("no catalogue for " + s);
        }
        all.add(new Misuse("close(null)", NullPointerException.class, "timeout must not be null", () -> s.close(null)));
        all.add(new Misuse("close(-1 ms)", IllegalArgumentException.class,
                "close timeout must not be negative, was PT-0.001S", () -> s.close(Duration.ofMillis(-1))));
        return all;
    }

    private static Misuse bad(final String call, final String message, final Executable run) {
        return new Misuse(call, IllegalArgumentException.class, message, run);
    }

    /** Every public operation of {@code s} with valid arguments. */
    private static Map<String, Executable> operations(final OffHeapStructure s) {
        final Map<String, Executable> all = new LinkedHashMap<>();
        switch (s) {
            case TreiberStack stack -> {
                all.put("push", () -> stack.push(1));
                all.put("pop", stack::pop);
                all.put("isEmpty", stack::isEmpty);
            }
            case MichaelScottQueue queue -> {
                all.put("enqueue", () -> queue.enqueue(1));
                all.put("dequeue", queue::dequeue);
                all.put("isEmpty", queue::isEmpty);
            }
            case HarrisMichaelList list -> {
                all.put("insert", () -> list.insert(1));
                all.put("putIfAbsent", () -> list.putIfAbsent(1, 1));
                all.put("put", () -> list.put(1, 1));
                all.put("get", () -> list.get(1));
                all.put("contains", () -> list.contains(1));
                all.put("remove", () -> list.remove(1));
                all.put("size", list::size);
            }
            case MichaelHashMap map -> {
                all.put("putIfAbsent", () -> map.putIfAbsent(1, 1));
                all.put("put", () -> map.put(1, 1));
                all.put("get", () -> map.get(1));
                all.put("contains", () -> map.contains(1));
                all.put("remove", () -> map.remove(1));
                all.put("size", map::size);
            }
            case EllenBst tree -> {
                all.put("insert", () -> tree.insert(1, 1));
                all.put("putIfAbsent", () -> tree.putIfAbsent(1, 1));
                all.put("get", () -> tree.get(1));
                all.put("contains", () -> tree.contains(1));
                all.put("remove", () -> tree.remove(1));
                all.put("size", tree::size);
            }
            case NatarajanMittalTree tree -> {
                all.put("insert", () -> tree.insert(1, 1));
                all.put("putIfAbsent", () -> tree.putIfAbsent(1, 1));
                all.put("get", () -> tree.get(1));
                all.put("contains", () -> tree.contains(1));
                all.put("remove", () -> tree.remove(1));
                all.put("size", tree::size);
            }
            case BrownAbTree tree -> {
                all.put("put", () -> tree.put(1, 1, 0));
                all.put("putIfAbsent", () -> tree.putIfAbsent(1, 1));
                all.put("putIfAbsent(missing)", () -> tree.putIfAbsent(1, 1, 0));
                all.put("replace", () -> tree.replace(1, 1));
                all.put("replace(expected)", () -> tree.replace(1, 1, 2));
                all.put("remove", () -> tree.remove(1, 0));
                all.put("removeIfEquals", () -> tree.removeIfEquals(1, 1));
                all.put("get", () -> tree.get(1, 0));
                all.put("containsKey", () -> tree.containsKey(1));
                all.put("copyLeaf", () -> tree.copyLeaf(1, new AbTreeLeafCopy(tree.degree())));
                all.put("ceiling", () -> tree.ceiling(1, new AbTreeLeafCopy(tree.degree())));
                all.put("floor", () -> tree.floor(1, new AbTreeLeafCopy(tree.degree())));
                all.put("bulkLoad", () -> tree.bulkLoad(new long[0], new long[0]));
            }
            case LiuZhangSpearHashMap map -> {
                all.put("getOrDefault", () -> map.getOrDefault(1, 0));
                all.put("containsKey", () -> map.containsKey(1));
                all.put("putIfAbsent", () -> map.putIfAbsent(1, 1));
                all.put("put", () -> map.put(1, 1, 0));
                all.put("replace", () -> map.replace(1, 2));
                all.put("replace(expected)", () -> map.replace(1, 2, 3));
                all.put("remove", () -> map.remove(1, 0));
                all.put("removeIfEquals", () -> map.removeIfEquals(1, 3));
                all.put("size", map::size);
                all.put("buckets", map::buckets);
            }
            default -> throw new IllegalArgumentException("no operations for " + s);
        }
        return all;
    }

    /** Some contents: a short single-threaded workload. */
    private static Workload fill(final Fixture f) {
        final Workload w = Workload.of(f, 0, 1, 64, 3);
        while (w.steps < 300) {
            w.step();
        }
        return w;
    }

    /**
     * The contents of {@code f}'s structure: a keyed one's map (after checking its shape), a stack's
     * or queue's values in the order they come out (taken out and put back, so this also shows
     * that the structure still works).
     */
    private static Object contents(final Fixture f) {
        if (f.kind.keyed()) {
            f.keyed().checkShape();
            return LongMapChecks.snapshot(f.keyed());
        }
        final Kind.Linear s = f.linear();
        final List<Long> values = new ArrayList<>();
        for (long v; (v = s.take()) != RESERVED; ) {
            values.add(v);
        }
        for (int i = 0; i < values.size(); i++) {
            s.add(values.get(f.kind == Kind.STACK ? values.size() - 1 - i : i));
        }
        return values;
    }

    @ParameterizedTest(name = "{0} over {1}")
    @MethodSource("dev.limbo.structures.Kind#withEveryScheme")
    void reservedArgumentsAndBadTimeoutsLeaveTheStructureIntact(final Kind kind, final Scheme scheme) {
        final Fixture f = new Fixture(kind, scheme, true);
        final Workload w = fill(f);
        final Object before = contents(f);
        final long k = kind.keyed() ? ((Workload.Keyed) w).model.keySet().iterator().next() : 0;
        for (final Misuse m : reservedArguments(f.structure, k)) {
            final Throwable e = assertThrows(m.type(), m.run(), m.call());
            assertEquals(m.message(), e.getMessage(), m.call());
            assertEquals(before, contents(f), m.call() + " changed the structure");
        }
        assertFalse(f.structure.isClosed());
        while (w.steps < 600) { // still usable: every result checked against the model
            w.step();
        }
        f.closeAndCheckMemory();
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void everyOperationOfAClosedStructureThrows(final Kind kind) {
        final Fixture f = new Fixture(kind, Scheme.HP, true);
        fill(f);
        f.structure.close();
        for (final Map.Entry<String, Executable> op : operations(f.structure).entrySet()) {
            final IllegalStateException e = assertThrows(IllegalStateException.class, op.getValue(), op.getKey());
            assertEquals(kind.closedMessage(), e.getMessage(), op.getKey());
        }
        assertTrue(f.structure.isClosed());
        assertEquals(f.domain, f.structure.domain());
        f.structure.close(); // idempotent
        f.closeAndCheckMemory();
    }

    /** A structure whose domain was closed: operations throw the domain's error; closing still frees the nodes. */
    @ParameterizedTest(name = "{0} over {1}")
    @MethodSource("dev.limbo.structures.Kind#withEveryScheme")
    void everyOperationOverAClosedDomainThrows(final Kind kind, final Scheme scheme) {
        final Fixture f = new Fixture(kind, scheme, true);
        fill(f);
        final long leaked = f.leakedByNone();
        f.domain.close();
        for (final Map.Entry<String, Executable> op : operations(f.structure).entrySet()) {
            final IllegalStateException e = assertThrows(IllegalStateException.class, op.getValue(), op.getKey());
            assertEquals("reclamation domain " + f.domain + " is closed", e.getMessage(), op.getKey());
        }
        assertFalse(f.structure.isClosed());
        f.structure.close(Duration.ZERO); // no operation is left in flight by the failed ones
        f.assertBytesBack(leaked);
    }

    /** Unsuitable domains and bucket counts; a failed constructor allocates nothing. */
    @ParameterizedTest
    @EnumSource(Kind.class)
    void constructorsRejectUnsuitableArguments(final Kind kind) {
        final LimboAllocator allocator = LimboAllocator.builder().checked(true).build();
        final long baseline = allocator.stats().bytesInUse();
        final String name = kind.type.getSimpleName();

        final NullPointerException nullDomain = assertThrows(NullPointerException.class, () -> kind.create(null));
        assertEquals("domain must not be null", nullDomain.getMessage());

        final ReclaimDomain closed = kind.domain(Scheme.DEBRA, allocator, false, 0);
        closed.close();
        final IllegalStateException closedDomain = assertThrows(IllegalStateException.class, () -> kind.create(closed));
        assertEquals(name + " cannot be built over a closed domain", closedDomain.getMessage());

        try (ReclaimDomain small = ReclaimDomain.builder(Scheme.HP).allocator(allocator)
                .recordBytes(kind.recordBytes - 8).slots(kind.slots).build()) {
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> kind.create(small));
            assertEquals(String.format(Locale.ROOT, "%s needs records of at least %d bytes; the domain has %d (builder.recordBytes(%d))",
                    name, kind.recordBytes, kind.recordBytes - 8, kind.recordBytes), e.getMessage());
        }
        if (kind.slots > 1) {
            try (ReclaimDomain few = ReclaimDomain.builder(Scheme.HP).allocator(allocator)
                    .recordBytes(kind.recordBytes).slots(kind.slots - 1).build()) {
                final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> kind.create(few));
                assertEquals(String.format(Locale.ROOT, "the structure needs %d protection slots per guard; the domain has %d "
                        + "(builder.slots(%d))", kind.slots, kind.slots - 1, kind.slots), e.getMessage());
            }
        }
        if (kind == Kind.HASH_MAP) {
            try (ReclaimDomain d = kind.domain(Scheme.DEBRA, allocator, false, 0)) {
                for (final int buckets : new int[] {0, -1, 3, 6, Integer.MIN_VALUE}) {
                    final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                            () -> new MichaelHashMap(d, buckets));
                    assertEquals("the number of buckets must be a positive power of two, was " + buckets,
                            e.getMessage());
                }
            }
        }
        if (kind == Kind.LZS_HASH_MAP) {
            try (ReclaimDomain d = kind.domain(Scheme.DEBRA, allocator, false, 0)) {
                for (final long capacity : new long[] {-1, Long.MIN_VALUE, LiuZhangSpearHashMap.MAX_INITIAL_CAPACITY + 1}) {
                    final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                            () -> new LiuZhangSpearHashMap(d, capacity));
                    assertEquals("initial capacity must be between 0 and 1099511627776 keys, was " + capacity,
                            e.getMessage());
                }
            }
        }
        allocator.trim();
        assertEquals(baseline, allocator.stats().bytesInUse(), "a rejected constructor leaked");
    }
}
