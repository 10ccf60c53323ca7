package dev.limbo.reclaim;

import dev.limbo.core.Words;
import dev.limbo.stress.WordSlots;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * Stamp-it's stamp order ({@link StampIt}'s safety, {@link StampQueue}'s (Q2) and (Q9)): a node
 * stamped after a thread entered its region is never found safe while that thread is inside.
 *
 * <p>Every state starts with an empty {@link StampQueue} and a cell that links node r (a padded word
 * of its own). Actor {@code enterRead} enters a region (push: its stamp is H's getAndAdd (Q2)) and
 * reads the cell with an acquire load, as {@code Guard.sectionProtect} does; it stays inside. Actor
 * {@code unlinkRetire} unlinks r with a CAS r -> 0, stamps it as a retire does (highest(): the
 * getAndAdd(H, 0) (Q9)), and checks whether r is safe: its stamp at most lowest() (Q11). Result
 * (read, safe): read 1 = the region read r as linked, 0 = it read the unlinked cell; safe 1 = the
 * retirer would free r now. (1, 1) is the bug: the region holds r and r would be freed.
 *
 * <p>{@link BrokenCachedStamp} stamps r with the head stamp read before the unlink (a stamp cached
 * from an earlier point, such as the retirer's own entry): a region entered between that read and
 * the unlink takes a stamp at least the cached one, so r looks safe while it reads r. An
 * interleaving, which any hardware shows.
 */
public final class StampOrderTest {

    private StampOrderTest() {
    }

    /** A state: node r, a cell linking it, an empty stamp queue with two blocks. */
    abstract static class Base {
        final long node = WordSlots.word(0);
        final long cell = WordSlots.word(node);
        final StampQueue queue = new StampQueue(2);

        /** Actor enterRead: push (Q2), then the section's acquire load of the cell; 1 if it read r. */
        final int enterRead() {
            queue.push(StampQueue.blockOf(0));
            final long p = Words.la(cell);
            return p == node ? 1 : p == 0 ? 0 : 9;
        }

        /** 1 if a node stamped {@code stamp} is safe now (at most lowest() (Q11)), else 0. */
        final int safe(final long stamp) {
            return stamp <= queue.lowest() ? 1 : 0;
        }
    }

    /** As {@link StampIt} does it: the retire stamps with getAndAdd(H, 0) after the unlink. */
    @JCStressTest
    @Description("push; la(cell) || cas(cell, r, 0); stamp = getAndAdd(H, 0); stamp <= lowest(): "
            + "a node stamped after a region entered is not safe while that region reads it")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the stamp came before the entry: the region read the unlinked cell")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the region read the unlinked cell; r not yet safe")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "the region read r; r is not safe while it is inside")
    @Outcome(id = "1, 1", expect = FORBIDDEN, desc = "the region read r, and r would be freed while it is inside")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class Stamped extends Base {
        @Actor
        public void enterRead(final II_Result r) {
            r.r1 = enterRead();
        }

        @Actor
        public void unlinkRetire(final II_Result r) {
            Words.cas(cell, node, 0);
            r.r2 = safe(queue.highest()); // (Q9)
        }
    }

    /**
     * BROKEN on purpose: the retire stamps r with the head stamp read before the unlink (cached). A
     * region that enters between that read and the unlink reads r, and r looks safe.
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: an interleaving): push; la(cell) || stamp = getAndAdd(H, 0); "
            + "cas(cell, r, 0); stamp <= lowest(): a stamp cached before the unlink lets r be freed under a region")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the region read the unlinked cell")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the region read the unlinked cell; r not yet safe")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "the region read r; r is not safe while it is inside")
    @Outcome(id = "1, 1", expect = ACCEPTABLE_INTERESTING,
            desc = "the cached stamp was below the region's: r would be freed while the region reads it")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class BrokenCachedStamp extends Base {
        @Actor
        public void enterRead(final II_Result r) {
            r.r1 = enterRead();
        }

        @Actor
        public void unlinkRetire(final II_Result r) {
            final long cached = queue.highest(); // too early: before the unlink
            Words.cas(cell, node, 0);
            r.r2 = safe(cached);
        }
    }
}
