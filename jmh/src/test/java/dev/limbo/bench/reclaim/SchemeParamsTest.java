package dev.limbo.bench.reclaim;

import dev.limbo.bench.stampit.StampItScheme;
import dev.limbo.bench.structures.SchemeState;
import dev.limbo.reclaim.Scheme;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.annotations.Param;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The benchmarks' declared {@code scheme} parameters name every scheme, so that running
 * benchmarks.jar directly (without the bench command, which takes the schemes from the enum)
 * measures a scheme added to {@link Scheme} too.
 */
class SchemeParamsTest {

    static List<String> declared(final Class<?> type) throws NoSuchFieldException {
        return List.of(type.getField("scheme").getAnnotation(Param.class).value());
    }

    static List<String> ids() {
        return Arrays.stream(Scheme.values()).map(Scheme::id).toList();
    }

    @Test
    void guardPtrDeclaresEveryScheme() throws Exception {
        assertEquals(ids(), declared(ReclaimGuardPtr.class));
    }

    @Test
    void stampItBenchmarksDeclareEveryScheme() throws Exception {
        assertEquals(ids(), declared(StampItScheme.class));
    }

    @Test
    void structureBenchmarksDeclareTheJdkBaselineAndEveryScheme() throws Exception {
        final List<String> expected = new ArrayList<>(List.of(SchemeState.JDK));
        expected.addAll(ids());
        assertEquals(expected, declared(SchemeState.class));
    }
}
