package dev.limbo.bench.structures;

import dev.limbo.structures.MichaelScottQueue;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Stamp-it's Queue benchmark (report §4.1): a Michael-Scott queue of 10 elements; one operation is
 * an enqueue and a dequeue, so the size stays constant. Values are random in [0, 20).
 * {@code jdk}: {@link ConcurrentLinkedQueue} of boxed longs.
 */
public class QueueBench extends StructureBenchmark {

    static final int ELEMENTS = 10;

    @State(Scope.Benchmark)
    public static class Queue {
        MichaelScottQueue offHeap;
        ConcurrentLinkedQueue<Long> jdk;

        @Setup(Level.Trial)
        public void create(final SchemeState s) {
            if (s.jdk()) {
                jdk = new ConcurrentLinkedQueue<>();
                for (long i = 0; i < ELEMENTS; i++) {
                    jdk.add(i);
                }
            } else {
                offHeap = new MichaelScottQueue(s.domain(16, 2));
                for (long i = 0; i < ELEMENTS; i++) {
                    offHeap.enqueue(i);
                }
            }
        }

        @TearDown(Level.Trial)
        public void close(final SchemeState s) {
            if (offHeap != null) {
                offHeap.close();
            }
            s.close();
        }
    }

    @State(Scope.Thread)
    public static class Local {
        final Rng rng = new Rng(Thread.currentThread().threadId() * 0x9E3779B97F4A7C15L);
    }

    @Benchmark
    public void enqueueDequeue(final Queue q, final Local local, final Gauges gauges, final Blackhole bh) {
        final long v = local.rng.nextInt(2 * ELEMENTS);
        if (q.jdk != null) {
            q.jdk.add(v);
            bh.consume(q.jdk.poll());
        } else {
            q.offHeap.enqueue(v);
            bh.consume(q.offHeap.dequeue());
        }
    }
}
