package dev.limbo.core;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * Access-mode helpers over 8-byte words of the {@linkplain Region#global() global region}. The
 * naming scheme and the ordering each mode gives are documented once, in the
 * {@linkplain dev.limbo.core package overview}.
 *
 * <p>Offsets must be 8-byte aligned and inside the region: a misaligned offset raises
 * {@link IllegalArgumentException}, an offset outside raises {@link IndexOutOfBoundsException}.
 * Neither can corrupt memory or crash the JVM. The two exceptions, {@link #lpNoAlignCheck} and
 * {@link #spNoAlignCheck}, check the bounds only: they are for hot paths whose offsets are
 * aligned by the caller's invariants, and a misaligned offset inside the region accesses the 8
 * bytes there instead of throwing.
 *
 * <p>Every helper is one exact invocation of a {@code static final} {@link VarHandle} on a
 * {@code static final} segment, so the JIT folds both and the call costs what the raw access costs
 * (measured by the {@code WordsAccess} JMH benchmark).
 */
public final class Words {

    /** The global region's segment, a constant to the JIT. */
    public static final MemorySegment SEGMENT = Region.global().segment();

    private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle().withInvokeExactBehavior();
    /** Plain accesses with no alignment check; the same single move as WORD's on x86-64 and AArch64. */
    private static final VarHandle ANY_ALIGNMENT = ValueLayout.JAVA_LONG_UNALIGNED.varHandle().withInvokeExactBehavior();

    private Words() {
    }

    /** Plain load. */
    public static long lp(final long offset) {
        return (long) WORD.get(SEGMENT, offset);
    }

    /** Plain store. */
    public static void sp(final long offset, final long value) {
        WORD.set(SEGMENT, offset, value);
    }

    /**
     * Plain load that checks only the region's bounds, for an offset the caller's invariants keep
     * 8-byte aligned (the allocator's blocks and descriptors): the segment's alignment check costs
     * the allocator's hot paths more than its few instructions (AllocThreadtest). Use {@link #lp}
     * wherever the alignment is not already established.
     */
    public static long lpNoAlignCheck(final long offset) {
        return (long) ANY_ALIGNMENT.get(SEGMENT, offset);
    }

    /** Plain store that checks only the region's bounds; see {@link #lpNoAlignCheck}. */
    public static void spNoAlignCheck(final long offset, final long value) {
        ANY_ALIGNMENT.set(SEGMENT, offset, value);
    }

    /** Opaque load: atomic and coherent, no ordering with other locations. */
    public static long opaqueLoad(final long offset) {
        return (long) WORD.getOpaque(SEGMENT, offset);
    }

    /** Opaque store: atomic and coherent, no ordering with other locations. */
    public static void opaqueStore(final long offset, final long value) {
        WORD.setOpaque(SEGMENT, offset, value);
    }

    /** Acquire load: later accesses stay after it. */
    public static long la(final long offset) {
        return (long) WORD.getAcquire(SEGMENT, offset);
    }

    /** Release store: earlier accesses stay before it. */
    public static void sr(final long offset, final long value) {
        WORD.setRelease(SEGMENT, offset, value);
    }

    /** Volatile load: acquire, and totally ordered with every other volatile access. */
    public static long lv(final long offset) {
        return (long) WORD.getVolatile(SEGMENT, offset);
    }

    /** Volatile store: release, and totally ordered with every other volatile access. */
    public static void sv(final long offset, final long value) {
        WORD.setVolatile(SEGMENT, offset, value);
    }

    /** Volatile compare-and-set; true when the word held {@code expected} and now holds {@code value}. */
    public static boolean cas(final long offset, final long expected, final long value) {
        return (boolean) WORD.compareAndSet(SEGMENT, offset, expected, value);
    }

    /** Volatile weak compare-and-set: like {@link #cas} but may fail spuriously; use in retry loops. */
    public static boolean casWeak(final long offset, final long expected, final long value) {
        return (boolean) WORD.weakCompareAndSet(SEGMENT, offset, expected, value);
    }

    /** Volatile compare-and-exchange: returns the witness value (equal to {@code expected} on success). */
    public static long cae(final long offset, final long expected, final long value) {
        return (long) WORD.compareAndExchange(SEGMENT, offset, expected, value);
    }

    /** Volatile get-and-add: returns the previous value. */
    public static long xadd(final long offset, final long delta) {
        return (long) WORD.getAndAdd(SEGMENT, offset, delta);
    }

    /** Volatile get-and-set: returns the previous value. */
    public static long xchg(final long offset, final long value) {
        return (long) WORD.getAndSet(SEGMENT, offset, value);
    }

    /** Full fence: no load or store moves across it; the only fence that orders a store before a later load. */
    public static void fullFence() {
        VarHandle.fullFence();
    }

    /** Acquire fence: earlier loads stay before later loads and stores. */
    public static void acquireFence() {
        VarHandle.acquireFence();
    }

    /** Release fence: earlier loads and stores stay before later stores. */
    public static void releaseFence() {
        VarHandle.releaseFence();
    }

    /** Load-load fence. */
    public static void loadLoadFence() {
        VarHandle.loadLoadFence();
    }

    /** Store-store fence. */
    public static void storeStoreFence() {
        VarHandle.storeStoreFence();
    }
}
