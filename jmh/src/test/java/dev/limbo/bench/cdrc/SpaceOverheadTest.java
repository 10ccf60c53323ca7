package dev.limbo.bench.cdrc;

import dev.limbo.structures.CdrcTreiberStack;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The benchmarks' states outside JMH, on one thread: the space overhead they report counts the
 * nodes removed but not yet freed, and nothing else. CDRC's is read from the allocator, so once
 * the thread's deferred decrements are applied ({@code flush}) it must be exactly 0 whatever the
 * structure's size became (which checks the node size and the nodes per element); a manual
 * scheme's is its domain's retired nodes ({@code none} never frees them).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SpaceOverheadTest {

    static final int THREAD = CdrcScheme.slot(0);

    static CdrcScheme scheme(final String id) {
        final CdrcScheme s = new CdrcScheme();
        s.scheme = id;
        s.create(1);
        return s;
    }

    /** Removes {@code n} present keys of [0, range) and inserts {@code n} absent ones, counting them as the benchmark does. */
    static int churn(final CdrcScheme s, final int n, final int range, final Remover remove, final Inserter insert) {
        int removed = 0;
        for (int k = 0; k < range && removed < n; k++) {
            if (remove.remove(k)) {
                s.added(THREAD, -1);
                removed++;
            }
        }
        int inserted = 0;
        for (int k = range - 1; k >= 0 && inserted < n / 2; k--) {
            if (insert.insert(k)) {
                s.added(THREAD, 1);
                inserted++;
            }
        }
        assertEquals(n, removed, "the prefill holds enough keys");
        return removed;
    }

    interface Remover {
        boolean remove(long key);
    }

    interface Inserter {
        boolean insert(long key);
    }

    @ParameterizedTest
    @ValueSource(strings = {"cdrc", "cdrc-rc"})
    void cdrcTreeOverheadIsZeroOnceTheDecrementsAreApplied(final String id) {
        final CdrcScheme s = scheme(id);
        final CdrcTree.Tree tree = new CdrcTree.Tree();
        tree.keys = 2_000;
        tree.create(s);
        assertEquals(0, s.unreclaimed(), "baseline");
        final int removed = churn(s, 300, tree.range, tree::remove, tree::insert);
        final long before = s.unreclaimed();
        assertTrue(before >= 0 && before <= nodes(removed), "at most the removed nodes: " + before);
        s.rc.flush();
        assertEquals(0, s.unreclaimed(), "every removed node freed, the inserted ones counted as the tree's");
        tree.close(s);
    }

    private static long nodes(final int removedKeys) {
        return (long) CdrcTree.NODES_PER_KEY * removedKeys;
    }

    @ParameterizedTest
    @ValueSource(strings = {"cdrc", "cdrc-rc"})
    void cdrcListOverheadIsZeroOnceTheDecrementsAreApplied(final String id) {
        final CdrcScheme s = scheme(id);
        final CdrcList.Set list = new CdrcList.Set();
        list.create(s);
        churn(s, 200, CdrcList.RANGE, list::remove, list::insert);
        s.rc.flush();
        assertEquals(0, s.unreclaimed());
        list.close(s);
    }

    /** The map's buckets are lists: one node per key, as the list's (its 10^5-key prefill makes it the slowest). */
    @Test
    void cdrcMapOverheadIsZeroOnceTheDecrementsAreApplied() {
        final CdrcScheme m = scheme("cdrc");
        final CdrcHashMap.Map map = new CdrcHashMap.Map();
        map.create(m);
        churn(m, 500, CdrcHashMap.RANGE, map::remove, map::insert);
        m.rc.flush();
        assertEquals(0, m.unreclaimed());
        map.close(m);
    }

    @Test
    void cdrcStackOverheadIsZeroOnceTheDecrementsAreApplied() {
        final CdrcScheme s = scheme("cdrc");
        final CdrcStack.Stacks st = new CdrcStack.Stacks();
        st.create(s);
        for (int i = 0; i < 500; i++) {
            final long v = st.pop(i % CdrcStack.STACKS);
            if (v != CdrcTreiberStack.RESERVED) {
                st.push((i * 7) % CdrcStack.STACKS, v);
            }
        }
        s.rc.flush();
        assertEquals(0, s.unreclaimed(), "every popped node freed, the pushed ones counted as the stacks'");
        st.close(s);
    }

    @Test
    void manualOverheadIsTheDomainsRetiredNodes() {
        final CdrcScheme s = scheme("none");
        final CdrcTree.Tree tree = new CdrcTree.Tree();
        tree.keys = 2_000;
        tree.create(s);
        assertEquals(0, s.unreclaimed());
        final int removed = churn(s, 300, tree.range, tree::remove, tree::insert);
        assertEquals(nodes(removed), s.unreclaimed(), "none frees nothing: a leaf and its parent per removed key");
        tree.close(s);
    }

    @Test
    void loadStoreOverheadCountsTheReplacedObjectsNotYetFreed() {
        final CdrcLoadStore.Cells c = new CdrcLoadStore.Cells();
        c.scheme = CdrcLoadStore.CDRC;
        c.size = 10;
        c.storePercent = 50;
        c.create();
        assertEquals(0, c.unreclaimed());
        for (int i = 0; i < 100; i++) {
            c.rc.storeMove(c.cell(i % c.size), c.fresh(i));
        }
        final long before = c.unreclaimed();
        assertTrue(before >= 0 && before <= 100, "at most the replaced objects: " + before);
        c.rc.flush();
        assertEquals(0, c.unreclaimed());
        c.close();
    }

    /** Every thread samples each iteration; the first reports, the others report 0 (JMH sums them). */
    @Test
    void theFirstThreadToSampleAnIterationReportsIt() {
        final CdrcScheme s = scheme("cdrc");
        final CdrcList.Set list = new CdrcList.Set();
        list.create(s);
        final SpaceGauges first = new SpaceGauges();
        final SpaceGauges second = new SpaceGauges();
        first.sample(s);
        second.sample(s);
        assertTrue(first.offHeapBytes > 0, "the list's nodes");
        assertEquals(0, second.offHeapBytes);
        assertEquals(0, second.unreclaimedNodes);
        second.sample(s);
        first.sample(s);
        assertTrue(second.offHeapBytes > 0, "iteration 2: the other thread came first");
        assertEquals(0, first.offHeapBytes);
        list.close(s);
    }

    @Test
    void unknownSchemesAreNamed() {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> scheme("cdrc-snap"));
        assertTrue(e.getMessage().contains("cdrc-snap"), e.getMessage());
        final CdrcLoadStore.Cells c = new CdrcLoadStore.Cells();
        c.scheme = "ebr";
        final IllegalArgumentException f = assertThrows(IllegalArgumentException.class, c::create);
        assertTrue(f.getMessage().contains("'ebr'"), f.getMessage());
    }
}
