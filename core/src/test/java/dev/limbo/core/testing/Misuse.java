package dev.limbo.core.testing;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Locale;

import org.junit.jupiter.api.function.Executable;

/** Assertions shared by the modules' misuse catalogues. */
public final class Misuse {

    private Misuse() {
    }

    /** Asserts that {@code call} throws {@code type} with a message that mentions every one of {@code words}. */
    public static <T extends Throwable> T rejects(final Class<T> type, final Executable call, final String... words) {
        final T e = assertThrows(type, call);
        final String message = String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT);
        for (final String w : words) {
            assertTrue(message.contains(w.toLowerCase(Locale.ROOT)),
                    () -> "message \"" + e.getMessage() + "\" does not mention \"" + w + "\"");
        }
        return e;
    }
}
