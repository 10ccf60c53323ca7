package dev.limbo.bench.index;

/**
 * One contender of {@link IndexBench} behind the point operations the benchmark calls: a fork
 * measures one contender, so each call site sees one implementation (monomorphic).
 */
public interface IndexAdapter extends AutoCloseable {

    /** What the operations return for "no mapping". */
    long MISSING = -1;

    /** The key's value, or {@link #MISSING}. */
    long get(long key);

    /** Maps the key to the value; the previous value, or {@link #MISSING}. */
    long put(long key, long value);

    /** Removes the key's mapping; the value it had, or {@link #MISSING}. */
    long remove(long key);

    /**
     * Off-heap bytes the contender holds, as its own allocator or the JVM measures them (0 for the
     * on-heap maps); the benchmark reads it before and after the prefill.
     */
    long offHeapBytes();

    /** Frees everything the contender holds. */
    @Override
    void close();
}
