package dev.limbo.reclaim.rc;

import dev.limbo.core.Words;
import dev.limbo.reclaim.Guard;
import dev.limbo.stress.WordSlots;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

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
 * is freed), a cell holding X and a flag. All states share one {@link AcquireRetire} with Cdrc's
 * K = 8 slots. Actor {@code acquire} runs {@link AcquireRetire.Local#acquire} on slot 0 and keeps
 * the acquisition until the flag is up (7), then releases it. Actor {@code unlink} unlinks X with a
 * getAndSet (as {@link Cdrc#storeMove}'s (8)), retires X, ejects with
 * {@link AcquireRetire.Local#ejectNow}, which scans (each state drains the safe list, so the next
 * one starts empty and scans) and hands back every retire no announcement holds, and raises the
 * flag with a release store (8). The wait is what makes the question well posed: jcstress does not
 * keep the actors in step, and without it the acquirer's next state could reuse the slot before
 * the scan, which may then rightly eject X. It ends, as the unlinker never waits. (The unlinker
 * still runs ahead, so most acquires read null; a meeting of both actors before each race was
 * tried and was worse: the acquire then nearly always validates before the unlink.)
 *
 * <p>Result (acquired, ejected): acquired 1 = the acquire returned X (validated), 0 = null (it saw
 * the unlink and re-announced null); ejected 1 = the eject handed back X, 0 = it kept X's retire (a
 * later scan hands it back). (1, 1) is the bug: X's retire ejected while an acquisition that
 * validated X was active. (0, 0) is fine: the scan saw X announced before the acquire re-validated
 * and replaced it.
 *
 * <p>{@link BrokenNoAnnounceFence} announces with a release store and no fence (the acquire loop
 * otherwise as {@link AcquireRetire}'s, writing the same announcement word, reached by a private
 * lookup: the shaded jar is in the unnamed module). x86's store buffer lets the re-validation pass
 * the announcement while the unlink, the retire and the scan run on the other core: x86 shows (1,
 * 1), in the C2 configurations only, and rarely (0 to 24 per quick run on 2 x86 cores, in 6 of 7
 * runs; likely because the unlink, the retire and the scan's prologue usually outlast the
 * announcement's stay in the store buffer), so CI only reports it.
 */
public final class AcquireAnnounceVsRetireTest {

    /** The acquire-retire instance every state shares, with Cdrc's slots per thread. */
    static final AcquireRetire AR = new AcquireRetire(1 + Cdrc.SNAPSHOT_SLOTS);
    /** The same, with every acquire on the wait-free slow path (a copy that a scan may complete). */
    static final AcquireRetire SLOW = new AcquireRetire(1 + Cdrc.SNAPSHOT_SLOTS, 0);
    /** Handles an eject may return at once: more than the retires a scan can find safe here (X and the few kept ones). */
    static final int OUT = 16;

    private AcquireAnnounceVsRetireTest() {
    }

    /** A state: handle X, a cell holding it, the unlinker's flag, the eject buffer. */
    abstract static class Base {
        final long x = WordSlots.word();
        final long cell = WordSlots.word(x);
        final long ejected = WordSlots.word();
        final long[] out = new long[OUT];

        /** The acquirer, after its acquire on slot 0 of {@code l} returned {@code p}: waits for the eject (7), then releases. */
        final void holdUntilEjected(final II_Result r, final AcquireRetire.Local l, final long p) {
            r.r1 = acquired(p);
            while (Words.la(ejected) == 0) { // (7)
                Thread.onSpinWait();
            }
            l.release(0);
        }

        /** 1 if the acquire returned X, 0 if null, 9 for anything else. */
        final int acquired(final long p) {
            return p == x ? 1 : p == 0 ? 0 : 9;
        }

        /** The unlinker: unlink, retire and eject, then raise the flag (8). */
        final void unlinker(final II_Result r) {
            unlinker(r, AR);
        }

        /** The unlinker over {@code ar}. */
        final void unlinker(final II_Result r, final AcquireRetire ar) {
            r.r2 = unlinkRetireEject(ar);
            Words.sr(ejected, 1); // (8)
        }

        /** Unlinks X with a getAndSet, retires X and ejects: 1 if X was handed back. */
        final int unlinkRetireEject(final AcquireRetire ar) {
            final AcquireRetire.Local l = ar.local();
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
    @Description("acquire: la(cell); xchg(slot, p); lv(cell) == p? || xchg(cell, null); retire(X); ejectNow "
            + "(fullFence; la(slots)): a validated acquisition is never ejected")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the scan saw X announced before the acquire re-validated "
            + "and replaced it with null")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the acquire saw the unlink; X was ejected")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "the acquire validated X; the scan saw its announcement and keeps X")
    @Outcome(id = "1, 1", expect = FORBIDDEN, desc = "the acquire validated X, but the eject handed X's retire back")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class Fenced extends Base {
        @Actor
        public void acquire(final II_Result r) {
            final AcquireRetire.Local l = AR.local();
            holdUntilEjected(r, l, l.acquire(0, cell));
        }

        @Actor
        public void unlink(final II_Result r) {
            unlinker(r);
        }
    }

    /** The wait-free slow path: the acquire announces a copy in progress, which the scan completes if it meets it. */
    @JCStressTest
    @Description("slow-path acquire: copies[slot] = c; xchg(slot, PENDING); c.complete(): CAS(value, lv(cell)) "
            + "|| xchg(cell, null); retire(X); ejectNow (a PENDING slot: complete its copy): a copied X is "
            + "never ejected")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the copy read null (the owner's or the scan's read); X was ejected")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "the copy read X before the unlink; the scan keeps X")
    @Outcome(id = "1, 1", expect = FORBIDDEN, desc = "the acquire returned X, but the eject handed X's retire back")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote, or X kept for an acquire that returned null")
    @State
    public static class SlowPath extends Base {
        @Actor
        public void acquire(final II_Result r) {
            final AcquireRetire.Local l = SLOW.local();
            holdUntilEjected(r, l, l.acquire(0, cell));
        }

        @Actor
        public void unlink(final II_Result r) {
            unlinker(r, SLOW);
        }
    }

    /**
     * BROKEN on purpose: the acquire announces with a release store and no full fence (3), then
     * re-validates. The re-validating load can pass the announcement still in the store buffer: x86
     * shows (1, 1).
     */
    @JCStressTest
    @Description("BROKEN (x86 can show it: store buffering): acquire: la(cell); sr(slot, p); lv(cell) == p? "
            + "|| xchg(cell, null); retire(X); ejectNow: no fence after the announcement, the scan may miss it")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the scan saw X announced before the acquire re-validated "
            + "and replaced it with null")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the acquire saw the unlink; X was ejected")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "the acquire validated X; the scan saw its announcement and keeps X")
    @Outcome(id = "1, 1", expect = ACCEPTABLE_INTERESTING,
            desc = "the re-validation passed the unfenced announcement: X is acquired and its retire ejected")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class BrokenNoAnnounceFence extends Base {
        @Actor
        public void acquire(final II_Result r) {
            final AcquireRetire.Local l = AR.local();
            holdUntilEjected(r, l, Unfenced.acquire(l, 0, cell));
        }

        @Actor
        public void unlink(final II_Result r) {
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
                final long q = Words.lv(src); // (1'): volatile, as the real one; a release store does not order it
                if (q == p) {
                    return p;
                }
                p = q;
            }
        }
    }
}
