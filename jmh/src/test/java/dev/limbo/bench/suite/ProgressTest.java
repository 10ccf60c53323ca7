package dev.limbo.bench.suite;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;

class ProgressTest {

    @Test
    void etaScalesThePlanByTheObservedPace() {
        final AtomicLong now = new AtomicLong();
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        final Progress p = new Progress(out, 100, 10, false, now::get);
        assertEquals(100, p.remaining(), 1e-9);
        now.set(20_000_000_000L); // 20 s for the first 10 planned seconds: twice as slow as planned
        p.step(10, "first");
        assertEquals(180, p.remaining(), 1e-6);
        p.status("invisible when not on a terminal");
        now.set(65_000_000_000L);
        p.step(40, "second");
        assertEquals(65, p.remaining(), 1e-6);
        assertEquals(String.format("[ 1/10 0:20 elapsed, ETA 3:00]  first%n[ 2/10 1:05 elapsed, ETA 1:05]  second%n"),
                bytes.toString(StandardCharsets.UTF_8));
    }

    @Test
    void clock() {
        assertEquals("0:00", Progress.clock(0.2));
        assertEquals("4:59", Progress.clock(299));
        assertEquals("1:00:01", Progress.clock(3601));
    }
}
