package dev.limbo.bench;

import dev.limbo.core.Region;
import dev.limbo.core.Words;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * What a {@link Words} access costs against the on-heap equivalents: a load (sum of 1024 words) and
 * a CAS (1024 increments by CAS), each on the region, a {@code long[]} and an {@link AtomicLongArray}.
 * The ratios region/array are the result; they should be close to 1.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class WordsAccess {

    static final int WORDS = 1024;
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class)
            .withInvokeExactBehavior();

    private long base;
    private long[] array;
    private AtomicLongArray atomic;

    @Setup
    public void setup() {
        final Region region = Region.global();
        final long bytes = (WORDS * Long.BYTES + region.pageSize() - 1) & -region.pageSize();
        base = region.claim(bytes, region.pageSize());
        region.commit(base, bytes);
        array = new long[WORDS];
        atomic = new AtomicLongArray(WORDS);
        for (int i = 0; i < WORDS; i++) {
            Words.sp(base + (long) i * Long.BYTES, i);
            array[i] = i;
            atomic.set(i, i);
        }
    }

    @Benchmark
    public long loadRegion() {
        final long base = this.base;
        long sum = 0;
        for (int i = 0; i < WORDS; i++) {
            sum += Words.lp(base + (long) i * Long.BYTES);
        }
        return sum;
    }

    @Benchmark
    public long loadArray() {
        final long[] array = this.array;
        long sum = 0;
        for (int i = 0; i < WORDS; i++) {
            sum += array[i];
        }
        return sum;
    }

    @Benchmark
    public long loadAtomicArray() {
        final AtomicLongArray atomic = this.atomic;
        long sum = 0;
        for (int i = 0; i < WORDS; i++) {
            sum += atomic.get(i);
        }
        return sum;
    }

    @Benchmark
    public int casRegion() {
        final long base = this.base;
        int won = 0;
        for (int i = 0; i < WORDS; i++) {
            final long off = base + (long) i * Long.BYTES;
            final long v = Words.lp(off);
            won += Words.cas(off, v, v + 1) ? 1 : 0;
        }
        return won;
    }

    @Benchmark
    public int casArray() {
        final long[] array = this.array;
        int won = 0;
        for (int i = 0; i < WORDS; i++) {
            final long v = array[i];
            won += (boolean) LONGS.compareAndSet(array, i, v, v + 1) ? 1 : 0;
        }
        return won;
    }

    @Benchmark
    public int casAtomicArray() {
        final AtomicLongArray atomic = this.atomic;
        int won = 0;
        for (int i = 0; i < WORDS; i++) {
            final long v = atomic.get(i);
            won += atomic.compareAndSet(i, v, v + 1) ? 1 : 0;
        }
        return won;
    }
}
