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
 * The store-buffering race of the era family (EraDomain's (E3), (E4); IntervalBasedReclamation's
 * (I3), (I4); HazardEras' (H1), (H2)): a protect that publishes an era and then re-reads the
 * pointer, racing with an unlink followed by a scan of the reservations. If the protect returned
 * the node, the scan, which follows the unlink, must see a reservation that covers the node's
 * lifetime; otherwise the node is freed while the protector uses it.
 *
 * <p>Every state starts at era E = 2 with a cell that links node r, born at era 2, and a reader
 * whose reservation is stale: ibr's interval [1, 1] (pinned at era 1), he's slot era 1. Actor
 * {@code protect} runs the scheme's protect loop: load the cell (acquire), load E; if E is not
 * covered, publish it (ibr: raise upper to E; he: set the slot to E) with a getAndSet and
 * retry. Actor {@code unlinkScan} unlinks r with a CAS r -> 0 (its retire era is 2), then scans
 * as EraGuard.scan does: a full fence and an acquire load of the reservation; r is held back iff
 * the reservation covers era 2. Result (protect, scan): protect 1 = it returned r, 0 = it returned
 * the unlinked cell; scan 1 = it holds r back, 0 = it would free r. (1, 0) is the bug.
 *
 * <p>The broken variants publish with an opaque store instead of the getAndSet: the re-load can
 * pass the publish still in the store buffer, and x86 shows (1, 0) in the C2 configurations.
 */
public final class EraPublishVsScanTest {

    private EraPublishVsScanTest() {
    }

    /** The era of the state, node r's birth and retire era. */
    static final long ERA = 2;

    /** A state: the era, node r linked from a cell, a reservation word at era 1. */
    abstract static class Base {
        final long era = WordSlots.word(ERA);
        final long node = WordSlots.word(0);
        final long cell = WordSlots.word(node);
        /** ibr: the upper era (lower is 1, published at the pin); he: the slot's era. */
        final long reservation = WordSlots.word(1);

        /** ibr's protect (IbrGuard.protect): until E <= upper, raise upper to E and re-load. */
        final long protect(final boolean fence) {
            while (true) {
                final long p = Words.la(cell); // (I3) / (H1)
                final long e = Words.lv(era); // (E1)
                if (e <= Words.lp(reservation)) {
                    return p;
                }
                if (fence) {
                    Words.xchg(reservation, e); // (I4) / (H2)
                } else {
                    Words.opaqueStore(reservation, e); // the publish alone
                }
            }
        }

        /** HeGuard.protect's loop. */
        final long heProtect(final boolean fence) {
            long prev = Words.lp(reservation);
            while (true) {
                final long p = Words.la(cell); // (H1)
                final long e = Words.lv(era); // (E1)
                if (e == prev) {
                    return p;
                }
                if (fence) {
                    Words.xchg(reservation, e); // (H2)
                } else {
                    Words.opaqueStore(reservation, e);
                }
                prev = e;
            }
        }

        /** Unlink, then EraGuard.scan's fence (E4) and reservation load: 1 if it holds r back. */
        final int unlinkScan() {
            Words.cas(cell, node, 0);
            Words.fullFence(); // (E3), (E4)
            final long upper = Words.la(reservation); // (E4)
            return upper >= ERA ? 1 : 0; // ibr: [1, upper] overlaps [2, 2]; he: the slot era is in [2, 2]
        }

        /** 1 if the protect returned r, 0 if it returned the unlinked cell, 9 for anything else. */
        final int returned(final long p) {
            return p == node ? 1 : p == 0 ? 0 : 9;
        }
    }

    /** ibr as IntervalBasedReclamation does it: raise upper with a getAndSet (I4), re-load (I3) || unlink CAS, fence, load. */
    @JCStressTest
    @Description("ibr protect: la; lv(E); xchg(upper, E); la; E <= upper? || cas(cell, r, 0); fullFence; la(upper): "
            + "a returned r is held back by the scan")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the protect returned r; the scan saw the raised upper and holds r")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the scan saw the raised upper; the re-load then saw the unlink")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the protect re-loaded the unlinked cell; the scan frees r, unused")
    @Outcome(id = "1, 0", expect = FORBIDDEN, desc = "the protect returned r, but the scan missed its upper and would free r")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class IbrFenced extends Base {
        @Actor
        public void protect(final II_Result r) {
            r.r1 = returned(protect(true));
        }

        @Actor
        public void unlinkScan(final II_Result r) {
            r.r2 = unlinkScan();
        }
    }

    /**
     * BROKEN on purpose: ibr's protect raises upper with an opaque store and no fence; the re-load
     * can pass it in the store buffer: x86 shows (1, 0).
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: store buffering): ibr protect: la; lv(E); opaqueStore(upper, E); la || "
            + "cas(cell, r, 0); fullFence; la(upper): no fence after the raise, the scan may miss it")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the protect returned r; the scan saw the raised upper and holds r")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the scan saw the raised upper; the re-load then saw the unlink")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the protect re-loaded the unlinked cell; the scan frees r, unused")
    @Outcome(id = "1, 0", expect = ACCEPTABLE_INTERESTING,
            desc = "the re-load passed the unfenced raise: the protect holds r, the scan would free it")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class IbrBrokenNoFence extends Base {
        @Actor
        public void protect(final II_Result r) {
            r.r1 = returned(protect(false));
        }

        @Actor
        public void unlinkScan(final II_Result r) {
            r.r2 = unlinkScan();
        }
    }

    /** he's protect as HazardEras does it: publish the era in the slot with a getAndSet (H2), re-load (H1). */
    @JCStressTest
    @Description("he protect: la; lv(E); E == slot? else xchg(slot, E); la || cas(cell, r, 0); fullFence; la(slot): "
            + "a returned r is held back by the scan")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the protect returned r; the scan saw the slot era and holds r")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the scan saw the slot era; the re-load then saw the unlink")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the protect re-loaded the unlinked cell; the scan frees r, unused")
    @Outcome(id = "1, 0", expect = FORBIDDEN, desc = "the protect returned r, but the scan missed its era and would free r")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class HeFenced extends Base {
        @Actor
        public void protect(final II_Result r) {
            r.r1 = returned(heProtect(true));
        }

        @Actor
        public void unlinkScan(final II_Result r) {
            r.r2 = unlinkScan();
        }
    }

    /**
     * BROKEN on purpose: he's protect publishes the slot era with an opaque store and no fence;
     * the re-load can pass it in the store buffer: x86 shows (1, 0).
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: store buffering): he protect: la; lv(E); opaqueStore(slot, E); la || "
            + "cas(cell, r, 0); fullFence; la(slot): no fence after the publish, the scan may miss it")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the protect returned r; the scan saw the slot era and holds r")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the scan saw the slot era; the re-load then saw the unlink")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the protect re-loaded the unlinked cell; the scan frees r, unused")
    @Outcome(id = "1, 0", expect = ACCEPTABLE_INTERESTING,
            desc = "the re-load passed the unfenced publish: the protect holds r, the scan would free it")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class HeBrokenNoFence extends Base {
        @Actor
        public void protect(final II_Result r) {
            r.r1 = returned(heProtect(false));
        }

        @Actor
        public void unlinkScan(final II_Result r) {
            r.r2 = unlinkScan();
        }
    }
}
