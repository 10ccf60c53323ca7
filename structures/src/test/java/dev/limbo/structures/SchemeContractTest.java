package dev.limbo.structures;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.allocator.LimboAllocator;
import dev.limbo.core.Words;
import dev.limbo.reclaim.Capability;
import dev.limbo.reclaim.Guard;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.reclaim.Scheme;

import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.stream.Stream;

/**
 * The reclamation SPI's contract as structures rely on it: a structure operation that runs nested
 * in the caller's section leaves the caller's protections alone, and a structure follows the
 * domain's capabilities, never the scheme's identity.
 */
@Timeout(60)
class SchemeContractTest {

    private static ReclaimDomain.Builder treeDomain(final Scheme scheme, final LimboAllocator a) {
        return ReclaimDomain.builder(scheme).allocator(a).recordBytes(NatarajanMittalTree.NODE_BYTES)
                .slots(NatarajanMittalTree.SLOTS);
    }

    /** The trees, with every scheme. */
    static Stream<Arguments> treesWithEveryScheme() {
        return Kind.withEveryScheme().filter(a -> a.get()[0] == Kind.TREE || a.get()[0] == Kind.ELLEN
                || a.get()[0] == Kind.ABTREE);
    }

    /**
     * An outer section protects a node in slot 0; full tree operations then run nested (they use
     * every slot); another thread unlinks and retires the node and flushes. The node must survive
     * until the outer section ends: with one slot window shared by all depths, hp freed it.
     */
    @ParameterizedTest(name = "{0} over {1}")
    @MethodSource("treesWithEveryScheme")
    void aStructureOperationRunNestedLeavesTheOuterProtectionAlone(final Kind kind, final Scheme scheme)
            throws Exception {
        final LimboAllocator a = LimboAllocator.builder().debug(true).build(); // poisons what is freed
        final ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(kind.recordBytes)
                .slots(kind.slots).scanThreshold(1).minCalls(1).build();
        final OffHeapStructure structure = kind.create(d);
        final LongMapChecks.Subject tree = kind.keyed(structure);
        final long cell = a.allocateZeroed(Long.BYTES);
        final long node = d.allocateExclusive();
        Words.sp(node + 8, 0x5EED);
        try (Guard outer = d.pin()) {
            outer.store(cell, node); // counted: a counting scheme holds the node through the cell
            assertEquals(node, outer.protect(0, cell));
            for (long k = 0; k < 200; k++) { // nested: each pins again and protects in every slot
                tree.putIfAbsent(k, k);
                tree.remove(k - 100);
            }
            final Thread t = Thread.ofPlatform().start(() -> {
                try (Guard g = d.pin()) {
                    long old;
                    do {
                        old = Words.la(cell);
                    } while (!g.cas(cell, old, 0));
                    g.retire(old);
                }
                for (int i = 0; i < 20; i++) {
                    d.flush();
                }
            });
            t.join();
            assertEquals(0x5EED, Words.lp(node + 8), "the outer section's node was freed under it");
            assertEquals(1, outer.depth());
        }
        tree.close();
        d.close();
        a.free(cell);
    }

    @Test
    void everySchemeDeclaresItsCapabilitiesAndTheTreeFollowsThem() {
        final LimboAllocator a = LimboAllocator.create();
        for (final Scheme scheme : Scheme.values()) {
            try (ReclaimDomain d = treeDomain(scheme, a).build(); NatarajanMittalTree tree = new NatarajanMittalTree(d)) {
                assertEquals(scheme.capabilities().contains(Capability.PROTECTION_NEEDS_VALIDATION), tree.validates,
                        scheme.id());
                assertEquals(d.has(Capability.PROTECTION_NEEDS_VALIDATION), tree.validates, scheme.id());
            }
            if (!Kind.ELLEN.servedBy(scheme)) {
                continue; // a counting scheme refuses it (EllenBstTest)
            }
            try (ReclaimDomain d = ReclaimDomain.builder(scheme).allocator(a).recordBytes(EllenBst.RECORD_BYTES)
                    .slots(EllenBst.SLOTS).build(); EllenBst tree = new EllenBst(d)) {
                assertEquals(scheme.capabilities().contains(Capability.PROTECTION_NEEDS_VALIDATION), tree.validates,
                        scheme.id());
            }
        }
        assertTrue(Scheme.HP.capabilities().contains(Capability.PROTECTION_NEEDS_VALIDATION));
        assertFalse(Scheme.EBR.capabilities().contains(Capability.PROTECTION_NEEDS_VALIDATION));
    }

    /**
     * A scheme that declares "needs reachability validation" (here: ebr with the capability added,
     * standing for any new scheme) makes the tree validate, with no change to the tree; the tree
     * stays correct under concurrent updates.
     */
    @Test
    void aDeclaredCapabilityMakesTheTreeValidateWithNoChangeToTheTree() throws Exception {
        final LimboAllocator a = LimboAllocator.create();
        try (ReclaimDomain d = treeDomain(Scheme.EBR, a).capability(Capability.PROTECTION_NEEDS_VALIDATION).build();
             NatarajanMittalTree tree = new NatarajanMittalTree(d)) {
            assertTrue(tree.validates);
            final Thread[] threads = new Thread[2];
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            for (int t = 0; t < threads.length; t++) {
                final long base = t * 1_000_000L;
                threads[t] = Thread.ofPlatform().start(() -> {
                    try {
                        for (int round = 0; round < 20; round++) {
                            for (long k = 0; k < 500; k++) {
                                assertTrue(tree.insert(base + k, k));
                            }
                            for (long k = 0; k < 500; k++) {
                                assertEquals(k, tree.remove(base + k));
                            }
                        }
                    } catch (final Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
            }
            for (final Thread t : threads) {
                t.join();
            }
            assertNull(failure.get());
            assertEquals(0, tree.size());
            assertTrue(tree.checkInvariants().isEmpty(), () -> tree.checkInvariants().toString());
        }
    }
}
