package dev.limbo.reclaim;

import dev.limbo.stress.WordSlots;
import dev.limbo.core.Words;
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
 * The store-buffering race of hazard pointers ({@link HazardPointers}' memory-ordering notes (1) to
 * (5)): a protect that publishes a hazard and then validates that the pointer is still linked, racing
 * with an unlink followed by a scan of the hazard slots. If the validation saw the node still
 * linked, the scan, which follows the unlink, must see the hazard; otherwise the node is freed while
 * the protector uses it.
 *
 * <p>Every state starts with a cell that links node r (a padded word of its own) and an empty hazard
 * slot. Actor {@code protect} runs {@code HpGuard.protect}'s loop: p = acquire load of the cell (1);
 * then, until the pointer is stable, publish p in the slot and fence ((2) and (3): one getAndSet),
 * re-load the cell (1) and compare. Actor {@code unlinkScan} unlinks r with a CAS r -> 0, then scans
 * as {@code HpGuard.scan} does: a full fence (4) and an acquire load (5) of the slot. Result
 * (protect, scan): protect 1 = it returned r (validated as linked), 0 = it returned the unlinked
 * cell; scan 1 = it saw r in the slot (r is kept), 0 = it did not (r would be freed). (1, 0) is the
 * bug. (0, 1) is fine: the protect published r, the scan saw it, then the validation saw the unlink
 * and the protect retried with 0.
 *
 * <p>x86's store buffer shows the bug when a side drops its fence: {@link BrokenNoPublishFence}
 * (the protect publishes and re-loads without (3); the scan is as in {@link HazardPointers}) and
 * {@link BrokenNoScanFence} (the protect is correct, the unlink is a release store, as a structure
 * with a single writer or a lock might do it, and the scan has no (4)) are both expected to show
 * (1, 0) on x86. Each is marked ACCEPTABLE_INTERESTING so that the suite does not fail on it. (With a
 * CAS unlink and no (4), x86 cannot show it: its locked CAS is a full fence; the epoch test's
 * {@code BrokenNoScanFence} has that shape.)
 */
public final class HazardPublishVsScanTest {

    private HazardPublishVsScanTest() {
    }

    /** A state: node r, a cell linking it, an empty hazard slot. */
    abstract static class Base {
        final long node = WordSlots.word(0);
        final long cell = WordSlots.word(node);
        final long hazard = WordSlots.word(0);

        /** {@code HpGuard.protect}'s loop on {@link #cell} with slot {@link #hazard}; without (3), the publish is a plain opaque store. */
        final long protect(final boolean fence) {
            long p = Words.la(cell); // (1)
            while (true) {
                if (fence) {
                    Words.xchg(hazard, p); // (2), (3)
                } else {
                    Words.opaqueStore(hazard, p); // (2) only
                }
                final long q = Words.la(cell); // (1)
                if (q == p) {
                    return q;
                }
                p = q;
            }
        }

        /** 1 if the protect returned r, 0 if it returned the unlinked cell, 9 for anything else. */
        final int returned(final long p) {
            return p == node ? 1 : p == 0 ? 0 : 9;
        }

        /** 1 if the scan saw r in the slot, 0 if it saw it empty, 9 for anything else. */
        final int scanSaw(final long v) {
            return v == node ? 1 : v == 0 ? 0 : 9;
        }
    }

    /** As {@link HazardPointers} does it: publish (2), fence (3), validate (1) || unlink CAS, fence (4), load (5). */
    @JCStressTest
    @Description("protect: la; xchg(h, p); la == p? || cas(cell, r, 0); fullFence; la(h): "
            + "a validated r is seen by the scan")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the protect validated r; the scan saw the hazard and keeps r")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the scan saw r published; the validation then saw the unlink and the protect retried")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the protect read or re-read the unlinked cell; the scan saw no hazard for r")
    @Outcome(id = "1, 0", expect = FORBIDDEN, desc = "the protect validated r, but the scan missed the hazard and would free r")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class Fenced extends Base {
        @Actor
        public void protect(final II_Result r) {
            r.r1 = returned(protect(true));
        }

        @Actor
        public void unlinkScan(final II_Result r) {
            Words.cas(cell, node, 0);
            Words.fullFence(); // (4)
            r.r2 = scanSaw(Words.la(hazard)); // (5)
        }
    }

    /**
     * BROKEN on purpose: the protect publishes the hazard and re-loads the cell without the full fence
     * (3). The re-load can pass the publish still in the store buffer: x86 shows (1, 0).
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: store buffering): protect: la; opaqueStore(h, p); la == p? || cas(cell, r, 0); fullFence; "
            + "la(h): no fence after the publish, the scan may miss the hazard of a validated r")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the protect validated r; the scan saw the hazard and keeps r")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the scan saw r published; the validation then saw the unlink and the protect retried")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the protect read or re-read the unlinked cell; the scan saw no hazard for r")
    @Outcome(id = "1, 0", expect = ACCEPTABLE_INTERESTING,
            desc = "the validation passed the unfenced publish: the protect holds r, the scan would free it")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class BrokenNoPublishFence extends Base {
        @Actor
        public void protect(final II_Result r) {
            r.r1 = returned(protect(false));
        }

        @Actor
        public void unlinkScan(final II_Result r) {
            Words.cas(cell, node, 0);
            Words.fullFence(); // (4)
            r.r2 = scanSaw(Words.la(hazard)); // (5)
        }
    }

    /**
     * BROKEN on purpose: the protect is as in {@link HazardPointers}, but the unlink is a release store
     * and the scan loads the slot without the full fence (4). The slot load can pass the unlink still
     * in the store buffer: x86 shows (1, 0).
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: store buffering): protect: la; xchg(h, p); la == p? || sr(cell, 0); la(h): "
            + "no fence before the scan, which may miss the hazard of a validated r")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the protect validated r; the scan saw the hazard and keeps r")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the scan saw r published; the validation then saw the unlink and the protect retried")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the protect read or re-read the unlinked cell; the scan saw no hazard for r")
    @Outcome(id = "1, 0", expect = ACCEPTABLE_INTERESTING,
            desc = "the scan's load passed the unfenced unlink: the protect holds r, the scan would free it")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class BrokenNoScanFence extends Base {
        @Actor
        public void protect(final II_Result r) {
            r.r1 = returned(protect(true));
        }

        @Actor
        public void unlinkScan(final II_Result r) {
            Words.sr(cell, 0);
            r.r2 = scanSaw(Words.la(hazard)); // no (4) before it
        }
    }
}
