package dev.limbo.structures;

import dev.limbo.reclaim.rc.Cdrc;
import org.junit.jupiter.params.provider.Arguments;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The structures over {@link Cdrc}, for tests that run over all of them: how to build each in
 * either protection mode (snapshots, or counted loads only), and views of their operations.
 */
enum CdrcKind {
    STACK(CdrcTreiberStack.class, CdrcTreiberStack.SNAPSHOTS, CdrcTreiberStack::new),
    LIST(CdrcHarrisMichaelList.class, CdrcHarrisMichaelList.SNAPSHOTS, CdrcHarrisMichaelList::new),
    HASH_MAP(CdrcMichaelHashMap.class, CdrcMichaelHashMap.SNAPSHOTS, (rc, snapshots) -> new CdrcMichaelHashMap(rc, 16, snapshots));

    /** Builds a structure of a kind over a domain, in a mode. */
    interface Factory {
        StructureLifecycle create(Cdrc rc, boolean snapshots);
    }

    final Class<? extends StructureLifecycle> type;
    /** The structure's SNAPSHOTS: the most snapshots one of its operations holds. */
    final int maxSnapshots;
    private final Factory factory;

    CdrcKind(final Class<? extends StructureLifecycle> type, final int maxSnapshots, final Factory factory) {
        this.type = type;
        this.maxSnapshots = maxSnapshots;
        this.factory = factory;
    }

    /** Every kind in both modes, as JUnit arguments (kind, snapshots): kinds added later join. */
    static Stream<Arguments> withBothModes() {
        return Arrays.stream(values()).flatMap(k -> Stream.of(Arguments.of(k, true), Arguments.of(k, false)));
    }

    StructureLifecycle create(final Cdrc rc, final boolean snapshots) {
        return factory.create(rc, snapshots);
    }

    /** Whether the structure maps keys to values rather than holding a sequence. */
    boolean keyed() {
        return this != STACK;
    }

    /** The keyed view of {@code s}, a structure of this kind. */
    LongMapChecks.Subject keyed(final StructureLifecycle s) {
        return switch (s) {
            case CdrcHarrisMichaelList l -> list(l);
            case CdrcMichaelHashMap m -> map(m);
            default -> throw new IllegalArgumentException(this + " is not keyed");
        };
    }

    /** The stack {@code s} as a {@link Kind.Linear}. */
    Kind.Linear linear(final StructureLifecycle s) {
        if (!(s instanceof CdrcTreiberStack stack)) {
            throw new IllegalArgumentException(this + " is not a stack");
        }
        return new Kind.Linear() {
            @Override
            public void add(final long value) {
                stack.push(value);
            }

            @Override
            public long take() {
                return stack.pop();
            }

            @Override
            public boolean isEmpty() {
                return stack.isEmpty();
            }
        };
    }

    /** The list seen as a {@link LongMapChecks.Subject}. */
    static LongMapChecks.Subject list(final CdrcHarrisMichaelList l) {
        return new View(l) {
            @Override
            public List<long[]> nodes() {
                return l.nodesQuiescent();
            }

            @Override
            public long[] checkShape() {
                return LongMapChecks.checkList(l.nodesQuiescent());
            }
        };
    }

    /** The map seen as a {@link LongMapChecks.Subject}; its shape: every bucket a valid list of its own keys. */
    static LongMapChecks.Subject map(final CdrcMichaelHashMap m) {
        return new View(m) {
            @Override
            public List<long[]> nodes() {
                final List<long[]> all = new ArrayList<>();
                m.bucketsQuiescent().forEach(all::addAll);
                return all;
            }

            @Override
            public long[] checkShape() {
                final List<List<long[]>> buckets = m.bucketsQuiescent();
                assertEquals(m.buckets(), buckets.size());
                final List<Long> keys = new ArrayList<>();
                for (int b = 0; b < buckets.size(); b++) {
                    for (final long k : LongMapChecks.checkList(buckets.get(b))) {
                        assertEquals(b, m.bucketOf(k), "key " + k + " linked in the wrong bucket");
                        keys.add(k);
                    }
                }
                return keys.stream().mapToLong(Long::longValue).toArray();
            }
        };
    }

    /** The map operations of the list or the hash map. */
    private abstract static class View implements LongMapChecks.Subject {
        private final CdrcHarrisMichaelList l;
        private final CdrcMichaelHashMap m;

        View(final StructureLifecycle s) {
            this.l = s instanceof CdrcHarrisMichaelList list ? list : null;
            this.m = s instanceof CdrcMichaelHashMap map ? map : null;
        }

        @Override
        public long putIfAbsent(final long key, final long value) {
            return l != null ? l.putIfAbsent(key, value) : m.putIfAbsent(key, value);
        }

        @Override
        public long put(final long key, final long value) {
            return l != null ? l.put(key, value) : m.put(key, value);
        }

        @Override
        public long get(final long key) {
            return l != null ? l.get(key) : m.get(key);
        }

        @Override
        public boolean contains(final long key) {
            return l != null ? l.contains(key) : m.contains(key);
        }

        @Override
        public long remove(final long key) {
            return l != null ? l.remove(key) : m.remove(key);
        }

        @Override
        public long size() {
            return l != null ? l.size() : m.size();
        }

        @Override
        public void close() {
            if (l != null) {
                l.close();
            } else {
                m.close();
            }
        }
    }
}
