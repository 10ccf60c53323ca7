package dev.limbo.reclaim.rc;

import dev.limbo.core.Words;
import dev.limbo.reclaim.Guard;
import dev.limbo.stress.WordSlots;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * The store-buffering race of acquire-retire (digest §8.1; {@link AcquireRetire}'s memory ordering
 * (1) to (5) and its protection invariant, Definition 4.1): an acquire that announces a handle and
 * re-validates the source, racing with the unlink of that handle, its retire and a scan. If the
 * acquire validated the handle (the unlink had not happened), the scan, which follows the unlink,
 * must see the announcement, so the eject never hands back the retire that the active acquire owns.
 *
 * <p>Every state has handle X (a padded word's address: the handles are plain numbers here, nothing
 * is freed), a cell holding X and a done flag. All states share one {@link AcquireRetire} with
 * Cdrc's K = 8 slots. Actor {@code acquire} runs {@link AcquireRetire.Local#acquire} on slot 0,
 * then raises the done flag with a release store (7), and keeps the acquisition: jcstress does not
 * wait for the other actor between states, so the acquisition ends when this thread's acquire of a
 * later state reuses the slot, after the flag. Actor {@code unlink} unlinks X with a getAndSet (as
 * {@link Cdrc#storeMove}'s (8)), retires X, ejects with {@link AcquireRetire.Local#ejectNow}, which
 * scans (each state drains the safe list, so the next one starts empty and scans) and hands back
 * every retire no announcement holds, then reads the done flag with an acquire load (8). If the
 * scan read the slot after the acquirer's next announcement, that announcement (a volatile
 * getAndSet after the flag) makes the flag visible to (8).
 *
 * <p>Result (acquired, ejected, done): acquired 1 = the acquire returned X (validated), 0 = null (it
 * saw the unlink and re-announced null); ejected 1 = the eject handed back X, 0 = it kept X's
 * retire (a later scan hands it back); done 1 = the flag was up after the eject, 0 = not yet, so
 * the acquisition was still active when the scan read the slot. (1, 1, 0) is the bug: X's retire
 * ejected while an acquisition that validated X was active. (1, 1, 1) is fine: the acquirer may
 * have moved on before the scan; (0, 0, _) too: the scan saw X announced before the acquire
 * re-validated and replaced it.
 *
 * <p>{@link BrokenNoAnnounceFence} announces with a release store and no fence (the acquire loop
 * otherwise as {@link AcquireRetire}'s, writing the same announcement word, reached by a private
 * lookup: the shaded jar is in the unnamed module). x86's store buffer lets the re-validation pass
 * the announcement while the unlink, the retire and the scan run on the other core: x86 shows (1,
 * 1, 0), in the C2 configurations (the interpreter and C1 leave too little time between the store and
 * the load).
 */
public final class AcquireAnnounceVsRetireTest {

    /** The acquire-retire instance every state shares, with Cdrc's slots per thread. */
    static final AcquireRetire AR = new AcquireRetire(1 + Cdrc.SNAPSHOT_SLOTS);
    /** Handles an eject may return at once: more than the retires a scan can find safe here (X and the few kept ones). */
    static final int OUT = 16;

    private AcquireAnnounceVsRetireTest() {
    }

    /** A state: handle X, a cell holding it, the acquirer's done flag, the eject buffer. */
    abstract static class Base {
        final long x = WordSlots.word();
        final long cell = WordSlots.word(x);
        final long done = WordSlots.word();
        final long[] out = new long[OUT];

        /** The acquirer, after its acquire returned {@code p}: records it and raises the done flag (7). */
        final void acquired(final III_Result r, final long p) {
            r.r1 = acquired(p);
            Words.sr(done, 1); // (7)
        }

        /** 1 if the acquire returned X, 0 if null, 9 for anything else. */
        final int acquired(final long p) {
            return p == x ? 1 : p == 0 ? 0 : 9;
        }

        /** The unlinker: unlink, retire and eject (r2), then read the done flag (8) (r3). */
        final void unlinker(final III_Result r) {
            r.r2 = unlinkRetireEject();
            r.r3 = (int) Words.la(done); // (8)
        }

        /** Unlinks X with a getAndSet, retires X and ejects: 1 if X was handed back. */
        final int unlinkRetireEject() {
            final AcquireRetire.Local l = AR.local();
            Words.xchg(cell, 0);
            l.retire(x);
            int found = 0;
            int n = l.ejectNow(out); // scans: the previous state drained the safe list
            while (true) {
                for (int i = 0; i < n; i++) {
                    if (out[i] == x) {
                        found = 1;
                    }
                }
                if (n < out.length) {
                    return found;
                }
                n = l.eject(out); // drains the rest; no new scan (no retire since the last one)
            }
        }
    }

    /** As {@link AcquireRetire} does it: announce and fence as one getAndSet, then re-validate. */
    @JCStressTest
    @Description("acquire: la(cell); xchg(slot, p); la(cell) == p? || xchg(cell, null); retire(X); ejectNow "
            + "(fullFence; la(slots)): a validated acquisition is never ejected while it is active")
    @Outcome(id = {"0, 0, 0", "0, 0, 1"}, expect = ACCEPTABLE, desc = "the scan saw X announced before the "
            + "acquire re-validated and replaced it with null")
    @Outcome(id = {"0, 1, 0", "0, 1, 1"}, expect = ACCEPTABLE, desc = "the acquire saw the unlink; X was ejected")
    @Outcome(id = {"1, 0, 0", "1, 0, 1"}, expect = ACCEPTABLE, desc = "the acquire validated X; the scan saw its "
            + "announcement and keeps X")
    @Outcome(id = "1, 1, 1", expect = ACCEPTABLE, desc = "the acquire validated X and was done before the eject "
            + "ended: its next acquire may have ended this one before the scan")
    @Outcome(id = "1, 1, 0", expect = FORBIDDEN, desc = "the acquire validated X and was not done, but the eject "
            + "handed X's retire back")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class Fenced extends Base {
        @Actor
        public void acquire(final III_Result r) {
            acquired(r, AR.local().acquire(0, cell));
        }

        @Actor
        public void unlink(final III_Result r) {
            unlinker(r);
        }
    }

    /**
     * BROKEN on purpose: the acquire announces with a release store and no full fence (3), then
     * re-validates. The re-validating load can pass the announcement still in the store buffer: x86
     * shows (1, 1, 0).
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: store buffering): acquire: la(cell); sr(slot, p); la(cell) == p? "
            + "|| xchg(cell, null); retire(X); ejectNow: no fence after the announcement, the scan may miss it")
    @Outcome(id = {"0, 0, 0", "0, 0, 1"}, expect = ACCEPTABLE, desc = "the scan saw X announced before the "
            + "acquire re-validated and replaced it with null")
    @Outcome(id = {"0, 1, 0", "0, 1, 1"}, expect = ACCEPTABLE, desc = "the acquire saw the unlink; X was ejected")
    @Outcome(id = {"1, 0, 0", "1, 0, 1"}, expect = ACCEPTABLE, desc = "the acquire validated X; the scan saw its "
            + "announcement and keeps X")
    @Outcome(id = "1, 1, 1", expect = ACCEPTABLE, desc = "the acquire validated X and was done before the eject "
            + "ended: its next acquire may have ended this one before the scan")
    @Outcome(id = "1, 1, 0", expect = ACCEPTABLE_INTERESTING,
            desc = "the re-validation passed the unfenced announcement: X is acquired and its retire ejected")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class BrokenNoAnnounceFence extends Base {
        @Actor
        public void acquire(final III_Result r) {
            acquired(r, Unfenced.acquire(AR.local(), 0, cell));
        }

        @Actor
        public void unlink(final III_Result r) {
            unlinker(r);
        }
    }

    /** {@link AcquireRetire.Local#acquire} with its announcement a release store: its table reached by a private lookup. */
    static final class Unfenced {
        private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(long[].class);
        private static final long[] TABLE;
        private static final int ROW;

        static {
            try {
                final MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(AcquireRetire.class, MethodHandles.lookup());
                TABLE = (long[]) lookup.findVarHandle(AcquireRetire.class, "table", long[].class).get(AR);
                ROW = (int) lookup.findStaticVarHandle(AcquireRetire.class, "ROW", int.class).get();
            } catch (final ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private Unfenced() {
        }

        static long acquire(final AcquireRetire.Local l, final int slot, final long src) {
            final int i = l.id() * ROW + slot;
            long p = Words.la(src); // (1)
            while (true) {
                SLOTS.setRelease(TABLE, i, p & ~Guard.MARK_BITS); // (2), and no (3)
                final long q = Words.la(src); // (1)
                if (q == p) {
                    return p;
                }
                p = q;
            }
        }
    }
}
