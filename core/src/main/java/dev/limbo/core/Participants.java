package dev.limbo.core;

import java.lang.ref.Cleaner;
import java.lang.ref.WeakReference;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntConsumer;

/**
 * Dense participant ids: a small integer per thread that indexes per-thread state (reclaimer
 * announcements, hazard slots, limbo bags, allocator caches).
 *
 * <p>A thread's id is claimed lazily by its first {@link #current()} call, always the lowest id
 * that is free or whose holder has terminated, and stays its own until one of:
 * <ul>
 *   <li>the thread calls {@link #close()};</li>
 *   <li>the thread dies and its token becomes unreachable ({@link Cleaner});</li>
 *   <li>the thread dies and a later claimer's scan passes its id: the claimer releases it and may
 *       take it, without waiting for a GC, so ids stay dense under thread churn;</li>
 *   <li>ids run out and a claimer {@linkplain #reapTerminated() reaps} the ids of terminated
 *       threads at once. This is what lets any number of short-lived (virtual) threads run: only
 *       live holders count against {@link #CAPACITY}.</li>
 * </ul>
 * Before an id returns to the free pool every {@linkplain #onRelease release hook} runs with it, so
 * other modules can adopt what the departed thread left behind. Hooks run on the releasing thread
 * (the thread itself, the cleaner thread, or a reaper, which may be a claiming thread) while no
 * thread holds the id.
 *
 * <p>Claiming and releasing are lock-free CASes on a table of owners; {@link #current()} is one
 * {@link ThreadLocal} read. Hot paths that already know their id may pass it explicitly. Callers
 * that can do without an id (the allocator falls back to striped caches) use
 * {@link #tryCurrent()}, which answers -1 instead of throwing when every id is held by a live
 * thread.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm: a table of owner words claimed by CAS, lowest free index first, so that ids stay
 * dense and the reclamation schemes' scans over 0..highWater() stay short; no paper. Each claim
 * installs a fresh Owner (a weak reference to the thread), and a Token that only the holder's
 * ThreadLocal references carries the id; a Cleaner releases the id when the token becomes
 * unreachable.
 *
 * Invariants:
 *  - OWNERS[id] is null (free), RELEASING (its release hooks are running) or an Owner (held).
 *    Transitions: null -> Owner by a claim's CAS (2); Owner -> RELEASING by the release CAS (3),
 *    which exactly one of close, the cleaner and the reapers wins; RELEASING -> null by the
 *    winner's store (4) after the hooks. So the hooks run once per claim, while no thread holds
 *    the id.
 *  - A live thread's id is released only by the thread itself (close); other threads release
 *    only ids whose holder terminated (reapers, claimers) or whose token became unreachable (the
 *    cleaner: the thread died, or close already released the id and the clean is a no-op).
 *  - highWater > every id whose claim has raised it (5); it never decreases.
 *  - releases counts the releases whose store (4) is done (8); it never decreases. A thread whose
 *    claim failed in tryCurrent() keeps the count it read before the claim, and claims again
 *    only once the count moved: no id became free in between otherwise, except ids of holders
 *    that terminated since, which the next release or reap makes claimable.
 * Non-invariants: a terminated holder keeps its id until a reap, a claimer's scan or the cleaner
 * releases it; a claimer that finds an id RELEASING skips it. heldCount() is a moving count.
 *
 * Linearization points: current() - on the first call, the claim CAS (2); later, a ThreadLocal
 * read. close() - the release CAS (3) (isHeld turns false), the id becoming claimable at (4); a
 * close refused by a check has no shared effect. reapTerminated() - each release's CAS (3).
 * awaitReleases() - its last load (1) that finds an id no longer RELEASING: every release that
 * was in flight when it began has then run its hooks ((4) pairs with (1)).
 * isHeld and highWater - their loads (1), (6).
 *
 * Progress: current() is wait-free after the first call. The first call registers with the
 * Cleaner (which takes a lock) and scans the table at most twice, trying each id once per scan (a
 * CAS fails only because another thread claimed that id), so it is bounded apart from that lock
 * and the release hooks of the dead holders' ids it releases on the way. close(), the cleaner and
 * the reapers run the checks and hooks, whose progress is theirs (the reclamation domains' hook
 * is synchronized); a release CAS is tried once, and a loser returns at once.
 *
 * Memory ordering:
 *  (1) volatile loads of OWNERS[id] (claims, reaps, isHeld).
 *  (2) claim CAS null -> owner; pairs with (4): a claimer that finds the id free sees everything
 *      the hooks that freed it wrote (the domains' cleared guards, announcements and slots) before
 *      it uses the id.
 *  (3) release CAS owner -> RELEASING: one winner per claim.
 *  (4) volatile store of null after the hooks; pairs with (1), (2).
 *  (5) the raise of HIGH_WATER after a claim (a volatile read-modify-write), and (6) its volatile
 *      loads. (5) precedes the holder's first write to any per-id slot, so the store-load pairing
 *      that makes such a write visible to a scanner (EpochDomain (3)/(8), HazardPointers (3)/(4),
 *      the scanner's fence before its highWater load (6)) makes (5) visible as well: a scan that
 *      reads a smaller highWater misses only ids whose holders it could as well have seen idle.
 *  (7) Release.id, volatile: written by the claimer once its claim succeeded, read by the cleaner
 *      action, which may run on the Cleaner's thread (-1: the claim failed, release nothing).
 *  (8) increment of RELEASES after (4), and (9) its volatile load in tryCurrent(), before the claim
 *      it guards: a thread that read the count before a release's (8) claims again, and its scan
 *      then follows (4).
 *  Hooks read a dead holder's per-thread state with plain loads. A reaper or claimer saw the
 *  holder terminated through Thread.isAlive(), which the thread's final action synchronizes-with
 *  (JLS 17.4.4); when the Thread object was already collected, and on the cleaner's path, the edge
 *  comes from garbage collection and reference processing (safepoints, the reference queue's
 *  lock), not from a rule of the Java memory model.
 *
 * Reclamation and ABA: ids are recycled, Owners never are: a stale releaser (the cleaner of an
 * earlier holder, a reaper that read an old Owner) compares against its own Owner object, so its
 * CAS (3) fails once the id was released and claimed again.
 * }</pre>
 */
public final class Participants {

    /** System property: the number of ids (threads holding an id at the same time). */
    public static final String CAPACITY_PROPERTY = "limbo.participants";
    /** The number of ids; {@value #CAPACITY_PROPERTY}, default 1024, at most 2^20. */
    public static final int CAPACITY = capacity(System.getProperty(CAPACITY_PROPERTY));

    private static final Owner RELEASING = new Owner(null);
    /** Release hooks the calling thread is running now (nested releases count): see {@link #awaitReleases()}. */
    private static final ThreadLocal<int[]> RELEASING_HERE = ThreadLocal.withInitial(() -> new int[1]);
    private static final AtomicReferenceArray<Owner> OWNERS = new AtomicReferenceArray<>(CAPACITY);
    private static final AtomicInteger HIGH_WATER = new AtomicInteger();
    private static final ThreadLocal<Token> CURRENT = new ThreadLocal<>();
    private static final Cleaner CLEANER = Cleaner.create();
    private static final CopyOnWriteArrayList<IntConsumer> HOOKS = new CopyOnWriteArrayList<>();
    private static final CopyOnWriteArrayList<IntConsumer> CLOSE_CHECKS = new CopyOnWriteArrayList<>();
    /** Releases completed so far; see {@link #tryCurrent()}. */
    private static final AtomicLong RELEASES = new AtomicLong();
    /** Per thread whose last claim in {@link #tryCurrent()} failed: {@link #RELEASES} before that claim, else -1. */
    private static final ThreadLocal<long[]> FAILED_AT = ThreadLocal.withInitial(() -> new long[] {-1});

    private Participants() {
    }

    /** The calling thread's id, claimed on first use. */
    public static int current() {
        final Token token = CURRENT.get();
        return token != null ? token.id : claimForCurrentThread(true);
    }

    /**
     * The calling thread's id, claimed on first use, or -1 if every id is held by a live thread.
     * After a failed claim the thread claims again only once some id has been released since, so
     * a thread without an id pays a {@link ThreadLocal} read and one counter load per call. (An id
     * whose holder terminated counts as released once a {@linkplain #reapTerminated() reap}, a
     * claim's scan or the {@link Cleaner} releases it.)
     */
    public static int tryCurrent() {
        final Token token = CURRENT.get();
        if (token != null) {
            return token.id;
        }
        final long[] failedAt = FAILED_AT.get();
        final long releases = RELEASES.get(); // (9)
        if (failedAt[0] == releases) {
            return -1;
        }
        final int id = claimForCurrentThread(false);
        failedAt[0] = id < 0 ? releases : -1;
        return id;
    }

    /**
     * Gives up the calling thread's id now (running the release hooks); a later {@link #current()}
     * claims a fresh one. Does nothing if the thread holds no id. First every
     * {@linkplain #onClose close check} runs with the id; one that throws refuses the close, and the
     * thread keeps its id.
     *
     * @throws IllegalStateException if a close check refuses (for example: the thread is still
     *                               pinned in a reclamation domain)
     */
    public static void close() {
        final Token token = CURRENT.get();
        if (token != null) {
            for (final IntConsumer check : CLOSE_CHECKS) {
                check.accept(token.id);
            }
            CURRENT.remove();
            token.cleanable.clean();
        }
    }

    /**
     * Registers a hook that receives each id just before it is recycled.
     *
     * @return a handle whose {@code close()} unregisters the hook
     * @throws NullPointerException if {@code hook} is null (it would break every later release)
     */
    public static AutoCloseable onRelease(final IntConsumer hook) {
        HOOKS.add(Objects.requireNonNull(hook, "hook"));
        return () -> HOOKS.remove(hook);
    }

    /**
     * Registers a check that {@link #close()} runs, on the closing thread and with its id, before
     * it releases anything: a module whose per-thread state must not be released yet (a pinned
     * reclamation guard) throws {@link IllegalStateException}. Checks do not run when a dead
     * thread's id is released, since the thread cannot use its state any more.
     *
     * @return a handle whose {@code close()} unregisters the check
     * @throws NullPointerException if {@code check} is null (it would break every later close)
     */
    public static AutoCloseable onClose(final IntConsumer check) {
        CLOSE_CHECKS.add(Objects.requireNonNull(check, "check"));
        return () -> CLOSE_CHECKS.remove(check);
    }

    /** Releases the ids of every terminated thread now; returns how many it released. */
    public static int reapTerminated() {
        int reaped = 0;
        final int limit = HIGH_WATER.get(); // (6)
        for (int id = 0; id < limit; id++) {
            final Owner owner = OWNERS.get(id); // (1)
            if (owner != null && owner != RELEASING && owner.terminated() && release(id, owner)) {
                reaped++;
            }
        }
        return reaped;
    }

    /** One more than the highest id ever claimed: scans over all participants stop here. */
    public static int highWater() {
        return HIGH_WATER.get(); // (6)
    }

    /** Whether {@code id} is currently held by a thread. */
    public static boolean isHeld(final int id) {
        final Owner owner = OWNERS.get(id); // (1)
        return owner != null && owner != RELEASING;
    }

    /** The number of ids currently held. */
    public static int heldCount() {
        int held = 0;
        final int limit = HIGH_WATER.get(); // (6)
        for (int id = 0; id < limit; id++) {
            if (isHeld(id)) {
                held++;
            }
        }
        return held;
    }

    /** Claims an id for the calling thread; if none is free, throws ({@code orThrow}) or returns -1. */
    private static int claimForCurrentThread(final boolean orThrow) {
        final Thread thread = Thread.currentThread();
        final Owner owner = new Owner(thread);
        // Register the cleanup before claiming: Cleaner.register takes a lock, and a virtual thread
        // that blocks on it unmounts. Claiming first let thousands of such parked threads each hold
        // an id and exhaust them all.
        final Token token = new Token();
        final Release release = new Release(owner);
        token.cleanable = CLEANER.register(token, release);
        int id = tryClaim(owner);
        if (id < 0) {
            // Retry even when this reap found nothing: another claimer's reap or the cleaner may have
            // freed ids since the scan, and reporting "all held by live threads" then would be wrong.
            reapTerminated();
            id = tryClaim(owner);
        }
        if (id < 0) {
            token.cleanable.clean(); // releases nothing: release.id is still -1
            if (!orThrow) {
                return -1;
            }
            throw new IllegalStateException(String.format(Locale.ROOT,
                    "all %d participant ids are held by live threads; raise -D%s or call "
                            + "Participants.close() in threads that have finished with Limbo",
                    CAPACITY, CAPACITY_PROPERTY));
        }
        release.id = id; // (7)
        token.id = id;
        CURRENT.set(token);
        return id;
    }

    private static int tryClaim(final Owner owner) {
        for (int id = 0; id < CAPACITY; id++) {
            Owner held = OWNERS.get(id); // (1)
            if (held != null && held != RELEASING && held.terminated()) {
                // Its holder died without close() and its token is not cleaned yet: release it now
                // (running the hooks) rather than leave a gap that pushes new ids, and highWater, up.
                release(id, held);
                held = OWNERS.get(id); // (1)
            }
            if (held == null && OWNERS.compareAndSet(id, null, owner)) { // (2)
                HIGH_WATER.accumulateAndGet(id + 1, Math::max); // (5)
                return id;
            }
        }
        return -1;
    }

    /** Releases {@code id} if {@code owner} still holds it; true if this call released it. */
    private static boolean release(final int id, final Owner owner) {
        if (!OWNERS.compareAndSet(id, owner, RELEASING)) { // (3)
            return false; // already released by another path (close, cleaner or reaper)
        }
        final int[] running = RELEASING_HERE.get();
        running[0]++;
        try {
            for (final IntConsumer hook : HOOKS) {
                hook.accept(id);
            }
        } finally {
            running[0]--;
            OWNERS.set(id, null); // (4)
            RELEASES.incrementAndGet(); // (8)
        }
        return true;
    }

    /**
     * Waits until no id is being released by another thread. A reap that loses the release race
     * for a dead thread's id (to the Cleaner, or to another reaper) returns while the winner may
     * still be running the release hooks, which adopt what the thread left (its retired nodes, its
     * caches); counters read before they finish miss it. Call it after {@link #reapTerminated()}
     * where such counts must be complete. Returns at once when called from a release hook, and must
     * not be called while holding a lock that a release hook takes.
     */
    public static void awaitReleases() {
        if (RELEASING_HERE.get()[0] != 0) {
            return; // a hook must not wait for the release it is part of
        }
        final int limit = HIGH_WATER.get(); // (6)
        for (int id = 0; id < limit; id++) {
            for (long pause = 1_000; OWNERS.get(id) == RELEASING; pause = Math.min(2 * pause, 1_000_000)) { // (1)
                LockSupport.parkNanos(pause);
            }
        }
    }

    /**
     * The number of ids that {@code value}, the value of {@value #CAPACITY_PROPERTY}, asks for
     * (read as {@link Integer#decode} reads it), or 1024 if the property is unset.
     *
     * @throws IllegalArgumentException naming the property and the value, if it is not an integer
     *                                  in [1, 2^20]
     */
    static int capacity(final String value) {
        if (value == null) {
            return 1024;
        }
        final int n;
        try {
            n = Integer.decode(value.trim());
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException("-D" + CAPACITY_PROPERTY + "=" + value + " is not a number of ids", e);
        }
        if (n < 1 || n > (1 << 20)) {
            throw new IllegalArgumentException("-D" + CAPACITY_PROPERTY + "=" + value
                    + " is out of range [1, 1048576]");
        }
        return n;
    }

    /** Who holds an id; the thread is weakly held so a dead thread can be collected. */
    private static final class Owner {
        private final WeakReference<Thread> thread;

        Owner(final Thread thread) {
            this.thread = new WeakReference<>(thread);
        }

        boolean terminated() {
            final Thread t = thread.get();
            return t == null || !t.isAlive();
        }
    }

    /** Reachable only from the holder's {@link ThreadLocal}; its cleaning releases the id. */
    private static final class Token {
        int id; // written once by the holder before it publishes the token in CURRENT
        Cleaner.Cleanable cleanable;
    }

    /** The cleaner action; must not reference the token. */
    private static final class Release implements Runnable {
        private final Owner owner;
        /** The claimed id, set after the claim succeeds; -1 while unclaimed or if the claim failed. */
        volatile int id = -1;

        Release(final Owner owner) {
            this.owner = owner;
        }

        @Override
        public void run() {
            final int claimed = id; // (7)
            if (claimed >= 0) {
                release(claimed, owner);
            }
        }
    }
}
