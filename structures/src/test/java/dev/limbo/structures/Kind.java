package dev.limbo.structures;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.reclaim.Capability;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Scheme;
import org.junit.jupiter.params.provider.Arguments;

import java.util.Arrays;
import java.util.function.Function;
import java.util.stream.Stream;

/** The structures, for tests that run over all of them: how to build each, and views of their operations. */
enum Kind {
    STACK(TreiberStack.class, LinkedNodeLayout.SIZE, TreiberStack.SLOTS, TreiberStack::new),
    QUEUE(MichaelScottQueue.class, LinkedNodeLayout.SIZE, 2, MichaelScottQueue::new),
    LIST(HarrisMichaelList.class, ListNodeLayout.SIZE, HarrisMichaelList.SLOTS, HarrisMichaelList::new),
    HASH_MAP(MichaelHashMap.class, ListNodeLayout.SIZE, HarrisMichaelList.SLOTS, d -> new MichaelHashMap(d, 16)),
    TREE(NatarajanMittalTree.class, NatarajanMittalTree.NODE_BYTES, NatarajanMittalTree.SLOTS,
            NatarajanMittalTree::new),
    ELLEN(EllenBst.class, EllenBst.RECORD_BYTES, EllenBst.SLOTS, EllenBst::new),
    ABTREE(BrownAbTree.class, BrownAbTree.recordBytes(BrownAbTree.DEFAULT_DEGREE), BrownAbTree.SLOTS,
            BrownAbTree::new),
    LZS_HASH_MAP(LiuZhangSpearHashMap.class, FreezableSetLayout.RECORD_BYTES, LiuZhangSpearHashMap.SLOTS,
            LiuZhangSpearHashMap::new);

    /** The stack and the queue as one interface: add a value, take one, or RESERVED if empty. */
    interface Linear {
        void add(long value);

        long take();

        boolean isEmpty();
    }

    final Class<? extends OffHeapStructure> type;
    final long recordBytes;
    final int slots;
    private final Function<ReclaimDomain, OffHeapStructure> create;

    Kind(final Class<? extends OffHeapStructure> type, final long recordBytes, final int slots,
         final Function<ReclaimDomain, OffHeapStructure> create) {
        this.type = type;
        this.recordBytes = recordBytes;
        this.slots = slots;
        this.create = create;
    }

    /**
     * Every kind with every scheme that can serve it, as JUnit arguments (kind, scheme): schemes
     * added later join ({@link #servedBy}).
     */
    static Stream<Arguments> withEveryScheme() {
        return Arrays.stream(values()).flatMap(k -> Arrays.stream(Scheme.values()).filter(k::servedBy)
                .map(s -> Arguments.of(k, s)));
    }

    /** Every kind with every scheme that neutralizes ({@link Capability#NEUTRALIZATION}) and can serve it. */
    static Stream<Arguments> withNeutralizingSchemes() {
        return Arrays.stream(values()).flatMap(k -> Arrays.stream(Scheme.values())
                .filter(s -> s.capabilities().contains(Capability.NEUTRALIZATION) && k.servedBy(s))
                .map(s -> Arguments.of(k, s)));
    }

    /**
     * Whether this kind's records have one layout, so that it can declare their links
     * ({@link ReclaimDomain#declareLinks}); EllenBst's nodes and info records cannot, nor
     * BrownAbTree's nodes and SCX records.
     */
    boolean oneLayout() {
        return this != ELLEN && this != ABTREE && this != LZS_HASH_MAP;
    }

    /**
     * Whether {@code scheme} can serve this kind: a counting scheme ({@link Capability#COUNTED_LINKS})
     * refuses a structure whose records have several layouts (EllenBstTest checks the refusal).
     */
    boolean servedBy(final Scheme scheme) {
        return oneLayout() || !scheme.capabilities().contains(Capability.COUNTED_LINKS);
    }

    /**
     * A domain with the records and slots this kind needs; {@code restartOneIn} &gt; 0 injects a
     * {@link dev.limbo.reclaim.Restart} at about one poll in that many.
     */
    ReclaimDomain domain(final Scheme scheme, final LimboAllocator allocator, final boolean debug,
                         final int restartOneIn) {
        return builder(scheme, allocator, debug).restartInjection(restartOneIn).build();
    }

    /** A builder of a domain with the records and slots this kind needs, for tests that set more. */
    ReclaimDomain.Builder builder(final Scheme scheme, final LimboAllocator allocator, final boolean debug) {
        return ReclaimDomain.builder(scheme).allocator(allocator).recordBytes(recordBytes).slots(slots).debug(debug);
    }

    OffHeapStructure create(final ReclaimDomain domain) {
        return create.apply(domain);
    }

    /** Whether the structure maps keys to values (list, hash map, trees) rather than holding a sequence. */
    boolean keyed() {
        return this == LIST || this == HASH_MAP || this == TREE || this == ELLEN || this == ABTREE
                || this == LZS_HASH_MAP;
    }

    /** Whether the keyed view supports put (replace in place): not the binary trees. */
    boolean replaces() {
        return this == LIST || this == HASH_MAP || this == ABTREE || this == LZS_HASH_MAP;
    }

    /** The keyed view of {@code s}, a structure of this kind. */
    LongMapChecks.Subject keyed(final OffHeapStructure s) {
        return switch (this) {
            case LIST -> HarrisMichaelListTest.subject((HarrisMichaelList) s);
            case HASH_MAP -> MichaelHashMapTest.subject((MichaelHashMap) s);
            case TREE -> NatarajanMittalTreeTest.subject((NatarajanMittalTree) s);
            case ELLEN -> EllenBstTest.subject((EllenBst) s);
            case ABTREE -> BrownAbTreeTest.subject((BrownAbTree) s);
            case LZS_HASH_MAP -> LiuZhangSpearHashMapTest.subject((LiuZhangSpearHashMap) s);
            default -> throw new IllegalArgumentException(this + " is not keyed");
        };
    }

    /** The stack or queue {@code s} as a {@link Linear}. */
    Linear linear(final OffHeapStructure s) {
        return switch (s) {
            case TreiberStack stack -> new Linear() {
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
            case MichaelScottQueue queue -> new Linear() {
                @Override
                public void add(final long value) {
                    queue.enqueue(value);
                }

                @Override
                public long take() {
                    return queue.dequeue();
                }

                @Override
                public boolean isEmpty() {
                    return queue.isEmpty();
                }
            };
            default -> throw new IllegalArgumentException(this + " is not a stack or queue");
        };
    }

    /** The message of the exception an operation on a closed structure of this kind throws. */
    String closedMessage() {
        return type.getSimpleName() + " is closed";
    }
}
