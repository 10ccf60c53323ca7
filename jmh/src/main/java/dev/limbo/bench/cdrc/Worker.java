package dev.limbo.bench.cdrc;

import dev.limbo.bench.structures.StructureBenchmark.Rng;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.ThreadParams;

/** A benchmark thread's random numbers and its slot in {@link CdrcScheme}'s element counters. */
@State(Scope.Thread)
public class Worker {

    final Rng rng = new Rng(Thread.currentThread().threadId() * 0x9E3779B97F4A7C15L);
    int slot;

    @Setup(Level.Trial)
    public void create(final ThreadParams thread) {
        slot = CdrcScheme.slot(thread.getThreadIndex());
    }
}
