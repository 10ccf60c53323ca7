package dev.limbo.bench.cdrc;

import dev.limbo.bench.structures.StructureBenchmark;
import dev.limbo.reclaim.ReclaimDomain;
import dev.limbo.structures.CdrcTreiberStack;
import dev.limbo.structures.TreiberStack;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * CDRC's microbenchmark #2 (PLDI '21 §7.1, Figures 6e-6g; digest §6.2, B2): {@value #STACKS}
 * Treiber stacks (each top word in its own 128 bytes) of {@value #ELEMENTS} elements each, the
 * values {@code 0 .. }{@value #VALUES}{@code - 1}. With probability {@code updatePercent} an
 * operation pops from a random stack and pushes the popped value onto a random stack (possibly the
 * same; nothing when the pop found the stack empty); otherwise it runs {@code contains} of a random
 * value in {@code [0, }{@value #VALUES}{@code )} on a random stack, a traversal. ({@code
 * updatePercent} is the artifact's update flag; the paper's text calls it p_f, digest §6.2.)
 * {@code scheme}: {@link CdrcTreiberStack} with snapshots ({@code cdrc}: the traversal costs no
 * count change) or counted loads only ({@code cdrc-rc}), or {@link TreiberStack} over a manual
 * scheme (one domain for the ten stacks). The space overhead ({@link SpaceGauges}) is reported next
 * to the throughput.
 */
public class CdrcStack extends StructureBenchmark {

    static final int STACKS = 10;
    static final int ELEMENTS = 20;
    static final int VALUES = STACKS * ELEMENTS;

    @State(Scope.Benchmark)
    public static class Stacks {
        @Param({"1", "10", "50"})
        public int updatePercent;

        TreiberStack[] manual;
        CdrcTreiberStack[] counted;

        @Setup(Level.Trial)
        public void create(final CdrcScheme s) {
            if (s.counted()) {
                counted = new CdrcTreiberStack[STACKS];
                for (int i = 0; i < STACKS; i++) {
                    counted[i] = new CdrcTreiberStack(s.rc, s.snapshots());
                }
            } else {
                final ReclaimDomain d = s.domain(16, 2); // TreiberStack: 16-byte nodes, 2 slots (contains)
                manual = new TreiberStack[STACKS];
                for (int i = 0; i < STACKS; i++) {
                    manual[i] = new TreiberStack(d);
                }
            }
            for (int v = 0; v < VALUES; v++) {
                push(v / ELEMENTS, v);
            }
            s.baseline(VALUES, 1, CdrcTreiberStack.NODE.bytes());
        }

        void push(final int stack, final long value) {
            if (counted != null) {
                counted[stack].push(value);
            } else {
                manual[stack].push(value);
            }
        }

        long pop(final int stack) {
            return counted != null ? counted[stack].pop() : manual[stack].pop();
        }

        boolean contains(final int stack, final long value) {
            return counted != null ? counted[stack].contains(value) : manual[stack].contains(value);
        }

        @TearDown(Level.Trial)
        public void close(final CdrcScheme s) {
            s.close(() -> {
                for (int i = 0; i < STACKS; i++) {
                    if (counted != null) {
                        counted[i].close();
                    } else {
                        manual[i].close();
                    }
                }
            });
        }
    }

    @Benchmark
    public boolean operation(final Stacks st, final Worker w, final SpaceGauges gauges) {
        if (w.rng.nextInt(100) < st.updatePercent) {
            final long v = st.pop(w.rng.nextInt(STACKS));
            if (v == TreiberStack.RESERVED) {
                return false;
            }
            st.push(w.rng.nextInt(STACKS), v);
            return true;
        }
        return st.contains(w.rng.nextInt(STACKS), w.rng.nextInt(VALUES));
    }
}
