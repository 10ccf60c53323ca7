package dev.limbo.structures;

import dev.limbo.core.StripedCounter;

import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * What every off-heap structure shares: the key and value rules, and closing. {@link OffHeapStructure}
 * adds the {@link dev.limbo.reclaim.ReclaimDomain} of the structures whose nodes a reclamation scheme frees; the CDRC
 * structures, whose nodes free themselves when their count drops to zero, extend this class directly.
 *
 * <p>Keys and values are {@code long}s. {@link #RESERVED} ({@code Long.MIN_VALUE}) is not a valid
 * value: operations return it to say "absent" or "empty". {@code Long.MAX_VALUE} is not a valid
 * key: ordered structures use it for their sentinels. Both are rejected with an
 * {@link IllegalArgumentException}.
 *
 * <p>{@link #close()} may run while other threads still use the structure: it refuses new
 * operations ({@link IllegalStateException}), waits for the operations in flight to end, then frees
 * every node (an {@link OffHeapStructure} leaves its domain open).
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm: an operation counts itself in flight on its thread's stripe of a StripedCounter
 * (striped by a hash of its thread id, StripedCounter.threadKey(); threads that share a stripe
 * add to it atomically) and checks the closed flag after doing so; close() sets the flag and
 * waits until the stripes sum to zero. The flag and the count form a store-buffering (Dekker)
 * handshake, the pattern of an epoch announcement against an epoch advance or a reader count
 * against a writer in a read-write lock.
 *
 * Invariants: a stripe holds the number of operations of the threads mapped to it that are
 * between their increment (2) and their decrement (4), so it is never negative; every operation
 * that got past its re-check (3) is counted until it has left the domain's section. closed goes
 * false -> true once, at the first close(), also one that times out; freeNodes() runs once (the
 * field freed, under the monitor), after closed is set and every stripe was seen at 0.
 *
 * Linearization points: close() - its store (5) of closed: an operation whose re-check (3) comes
 * later in the synchronization order throws; one whose re-check saw false completes before the
 * nodes are freed. enter - the re-check (3).
 *
 * Progress: enter and exit are wait-free (a load, an atomic add, a load) and allocate nothing. close() blocks: it waits
 * for the operations in flight, which are lock-free and call no user code (so a thread cannot be
 * inside an operation of the structure it closes), at most for its timeout. The check (1) before
 * the increment keeps operations that start after (5) off the stripes, so their transient counts
 * cannot keep close() waiting: only the finitely many operations that passed (1) before (5) can.
 *
 * Memory ordering:
 *  (1) volatile load of closed, before the increment.
 *  (2) get-and-add +1 on the thread's stripe (volatile).
 *  (3) volatile load of closed, after (2). (2) and (3) against (5) and (7): both sides write, then
 *      read the other's word, with (2)+(3) volatile and a full fence (6) between (5) and (7): at
 *      least one side sees the other's write. An operation that read closed false at (3) is seen
 *      by close's load (7) of its stripe, until its decrement (4).
 *  (4) get-and-add -1 on the stripe (volatile, so a release), after the operation's last access to
 *      a node and the close of its guard.
 *  (5) volatile store of closed = true.
 *  (6) full fence between (5) and (7).
 *  (7) StripedCounter.sum(): opaque loads of the stripes, repeated until they sum to 0. No stripe
 *      is negative, so a zero sum means that every stripe read 0 at its own load, after (6).
 *  (8) acquire fence after the zero sum: with the releases (4) it orders every access of the
 *      finished operations before the frees of freeNodes().
 *
 * Reclamation: nodes are freed only by freeNodes(), once, after every operation that could reach
 * them has ended; nodes the operations retired are the domain's to free.
 * }</pre>
 */
public abstract class StructureLifecycle implements AutoCloseable {

    /** The reserved value: returned for "absent" or "empty", rejected as a value. */
    public static final long RESERVED = Long.MIN_VALUE;
    /** The reserved key, used by sentinels. */
    public static final long RESERVED_KEY = Long.MAX_VALUE;
    /** How long {@link #close()} waits for the operations in flight. */
    public static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(10);

    private final StripedCounter inFlight = new StripedCounter();
    private volatile boolean closed;
    /** Whether freeNodes() ran; guarded by this. */
    private boolean freed;

    StructureLifecycle() {
    }

    /**
     * Starts an operation: counts it in flight, after checking that the structure is open. Pass
     * the returned stripe id to {@link #exit}.
     *
     * @throws IllegalStateException if the structure is closed
     */
    final int enter() {
        if (closed) { // (1)
            throw closedException();
        }
        final int id = StripedCounter.threadKey();
        inFlight.add(id, 1); // (2)
        if (closed) { // (3)
            inFlight.add(id, -1);
            throw closedException();
        }
        return id;
    }

    /** Ends an operation started by {@link #enter}, after its guard closed. */
    final void exit(final int id) {
        inFlight.add(id, -1); // (4)
    }

    private IllegalStateException closedException() {
        return new IllegalStateException(getClass().getSimpleName() + " is closed");
    }

    /**
     * Closes the structure, waiting up to {@link #CLOSE_TIMEOUT} for the operations in flight:
     * see {@link #close(Duration)}.
     */
    @Override
    public final void close() {
        close(CLOSE_TIMEOUT);
    }

    /**
     * Refuses new operations, waits up to {@code timeout} for those in flight to end, then frees
     * every node. Idempotent once it has freed the nodes. If operations are still in flight after
     * {@code timeout}, it throws and frees nothing: the structure stays closed to new operations,
     * and a later {@code close} waits again.
     *
     * @throws IllegalStateException    if operations are still in flight after {@code timeout}
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public final synchronized void close(final Duration timeout) {
        Objects.requireNonNull(timeout, "timeout must not be null");
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("close timeout must not be negative, was " + timeout);
        }
        if (freed) {
            return;
        }
        closed = true; // (5)
        VarHandle.fullFence(); // (6)
        awaitNoOperations(TimeUnit.NANOSECONDS.convert(timeout));
        freeNodes();
        freed = true;
    }

    private void awaitNoOperations(final long timeoutNanos) {
        final long start = System.nanoTime();
        long n;
        for (int round = 0; (n = inFlight.sum()) != 0; round++) { // (7)
            final long waited = System.nanoTime() - start;
            if (waited > timeoutNanos) {
                throw new IllegalStateException(String.format(Locale.ROOT,
                        "%s.close(): %d operation%s still in flight after %d ms; it refuses new operations "
                                + "but has not freed its nodes: close it again once they have ended",
                        getClass().getSimpleName(), n, n == 1 ? "" : "s", TimeUnit.NANOSECONDS.toMillis(waited)));
            }
            if (round < 64) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(100_000);
            }
        }
        VarHandle.acquireFence(); // (8)
    }

    /**
     * Whether {@link #close()} was called, also one that timed out: the structure refuses new
     * operations.
     */
    public final boolean isClosed() {
        return closed;
    }

    /** Frees every node still linked; runs once, after every operation ended. */
    abstract void freeNodes();

    static long checkKey(final long key) {
        if (key == RESERVED_KEY) {
            throw new IllegalArgumentException("key Long.MAX_VALUE is reserved for sentinels");
        }
        return key;
    }

    static long checkValue(final long value) {
        if (value == RESERVED) {
            throw new IllegalArgumentException("value Long.MIN_VALUE is reserved: it means absent or empty");
        }
        return value;
    }
}
