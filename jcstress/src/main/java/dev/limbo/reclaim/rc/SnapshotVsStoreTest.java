package dev.limbo.reclaim.rc;

import dev.limbo.core.Words;
import dev.limbo.stress.WordSlots;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

import static dev.limbo.reclaim.rc.RcStates.NEXT;
import static dev.limbo.reclaim.rc.RcStates.PAYLOAD;
import static dev.limbo.reclaim.rc.RcStates.RC;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * A snapshot against a concurrent store (digest §8.6 and §8.5; {@link Cdrc}'s notes on
 * {@link Cdrc#snapshot} and its departure from Figure 3): a snapshotted object stays alive and
 * readable until the snapshot closes, though the snapshot holds no count, and so does an object
 * snapshotted through a field of a node that dies meanwhile, because a dying node retires the
 * references in its fields instead of decrementing them at once.
 *
 * <p>Every state starts with a cell that holds node N (count 1, the cell's), whose strong field
 * {@link RcStates#NEXT} holds leaf Y (count 1, N's; payload the state's stamp); both are observed
 * ({@link RcStates}), so a death reads as count 0 and no block is freed while the state lives.
 * Actor {@code snapshots}: n = snapshot(cell); if n is N: y = snapshot(N.next); check that N is
 * alive; releaseSnapshot(n); check that Y is alive and read its payload (Y is now protected by its
 * own snapshot only, while N may die and retire Y); releaseSnapshot(y). Actor {@code storeFlush}:
 * store(cell, null), which retires N, then flush(), which applies every decrement no snapshot holds
 * back, N's death and the retire of Y it makes included. The arbiter reads the final counts and
 * drops the observers.
 *
 * <p>Result (reader, N, Y): reader 0 = the cell was null, 1 = N and Y alive while snapshotted and
 * Y's payload intact, 2 = N dead while its snapshot was open, 3 = Y dead while its snapshot was
 * open, 9 = a payload that is not the stamp; N and Y final: {@link RcStates#DIED} (0),
 * {@link RcStates#ONE_LEFT} (1: a snapshot's announcement held a retire back, a later flush of that
 * thread applies it) or {@link RcStates#BAD} (9). N alive at the end keeps Y alive (its reference).
 *
 * <p>The broken variant {@link BrokenUnvalidatedSnapshot} announces N's snapshot without
 * re-validating the cell (hazard pointers without the validation): the store and the flush may
 * kill N between the read and the announcement, and the reader then holds a dead N (an
 * interleaving, which any hardware shows, x86 included).
 */
public final class SnapshotVsStoreTest {

    private SnapshotVsStoreTest() {
    }

    /** A state: cell -> N -> Y, each count 1, both observed; Y's payload the cell's address (a unique stamp). */
    abstract static class Base {
        final long cell = WordSlots.word();
        final long y = RcStates.leaf(cell);
        final long n = RC.allocate(RcStates.NODE);

        Base() {
            RC.weakOf(y);
            RC.weakOf(n);
            RC.storeMove(n + NEXT, y); // N owns Y's only count
            RC.storeMove(cell, n); // the cell owns N's only count
        }

        /** The reader, holding snapshots of N and N.next: whether N is alive (1) or dead (2). */
        final int nodeSeen(final long node) {
            return RC.count(node) == 0 ? 2 : 1;
        }

        /**
         * The reader, after closing N's snapshot: checks the snapshot {@code leaf} of Y (if N was
         * alive) and closes it.
         */
        final int leafSeen(final int node, final long leaf) {
            int seen = node;
            if (node == 1) {
                seen = RC.count(leaf) == 0 ? 3 : Words.lp(leaf + PAYLOAD) == cell ? 1 : 9;
            }
            RC.releaseSnapshot(leaf);
            return seen;
        }

        /** Actor 2: overwrite the cell (retiring N), then apply every delayed decrement nothing holds back. */
        final void storeAndFlush() {
            RC.store(cell, 0);
            RC.flush();
        }

        final void arbitrate(final III_Result r) {
            r.r2 = RcStates.finalCount(n);
            r.r3 = RcStates.finalCount(y);
        }
    }

    /** As {@link Cdrc} does it: snapshots validated by their acquire, N's death retires Y. */
    @JCStressTest
    @Description("snapshot(cell); snapshot(N.next); releaseSnapshot(N); read Y; releaseSnapshot(Y) || store(cell, "
            + "null); flush: a snapshotted object stays alive until its snapshot closes")
    @Outcome(id = "0, 0, 0", expect = ACCEPTABLE, desc = "the cell was null; N and Y died")
    @Outcome(id = "0, 1, 1", expect = ACCEPTABLE, desc = "the cell was null after the snapshot announced N; "
            + "the flush saw the stale announcement and delays N's decrement")
    @Outcome(id = "1, 0, 0", expect = ACCEPTABLE, desc = "the reader saw N and Y alive; both died after")
    @Outcome(id = "1, 0, 1", expect = ACCEPTABLE, desc = "the reader saw N and Y alive; N died and its retire "
            + "of Y was held back by Y's snapshot")
    @Outcome(id = "1, 1, 1", expect = ACCEPTABLE, desc = "the reader saw N and Y alive; N's snapshot held its "
            + "decrement back")
    @Outcome(expect = FORBIDDEN, desc = "a snapshotted N or Y dead while its snapshot was open, a payload "
            + "overwritten, or wrong final counts")
    @State
    public static class Snapshots extends Base {
        @Actor
        public void snapshots(final III_Result r) {
            final long node = RC.snapshot(cell);
            if (node == 0) {
                r.r1 = 0;
                return;
            }
            final long leaf = RC.snapshot(node + NEXT);
            final int seen = nodeSeen(node);
            RC.releaseSnapshot(node);
            r.r1 = leafSeen(seen, leaf);
        }

        @Actor
        public void storeFlush() {
            storeAndFlush();
        }

        @Arbiter
        public void arbiter(final III_Result r) {
            arbitrate(r);
        }
    }

    /**
     * BROKEN on purpose: N's snapshot reads the cell and announces N (fenced, in a snapshot slot
     * the reader's real snapshots leave free: they take the lowest free one and it holds at most
     * two) without re-reading the cell. If the store and the flush ran between the read and the
     * announcement, nothing held N's retire back: N died (and its retire of Y may have killed Y),
     * and the reader snapshots through a dead N. It stalls ({@link RcStates#stall()}) between the
     * read and the announcement, so that every run shows it.
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: an interleaving): la(cell); announce N, no re-validation; "
            + "snapshot(N.next); ... || store(cell, null); flush: the reader may hold a dead N")
    @Outcome(id = "0, 0, 0", expect = ACCEPTABLE, desc = "the cell was null; N and Y died")
    @Outcome(id = "1, 0, 0", expect = ACCEPTABLE, desc = "the reader saw N and Y alive; both died after")
    @Outcome(id = "1, 0, 1", expect = ACCEPTABLE, desc = "the reader saw N and Y alive; N died and its retire "
            + "of Y was held back by Y's snapshot")
    @Outcome(id = "1, 1, 1", expect = ACCEPTABLE, desc = "the reader saw N and Y alive; N's announcement held "
            + "its decrement back")
    @Outcome(id = {"2, 0, 0", "2, 0, 1"}, expect = ACCEPTABLE_INTERESTING,
            desc = "the flush killed N between the read and the unvalidated announcement: the reader held a dead N")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class BrokenUnvalidatedSnapshot extends Base {
        @Actor
        public void snapshots(final III_Result r) {
            final AcquireRetire.Local l = RC.acquireRetire().local();
            final long node = Words.la(cell);
            if (node == 0) {
                r.r1 = 0;
                return;
            }
            RcStates.stall();
            l.reserve(Cdrc.SNAPSHOT_SLOTS, node); // announced and fenced, but never re-validated
            final long leaf = RC.snapshot(node + NEXT);
            final int seen = nodeSeen(node);
            l.release(Cdrc.SNAPSHOT_SLOTS);
            r.r1 = leafSeen(seen, leaf);
        }

        @Actor
        public void storeFlush() {
            storeAndFlush();
        }

        @Arbiter
        public void arbiter(final III_Result r) {
            arbitrate(r);
        }
    }
}
