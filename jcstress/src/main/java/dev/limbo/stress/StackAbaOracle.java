package dev.limbo.stress;

import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The sequential oracle of the stack ABA tests ({@code PartialStackAbaTest}, {@code
 * BlockStackAbaTest}): a stack a, b, c (1, 2, 3; a on top), actor 1 pops once, actor 2 pops x, pops
 * y and pushes x back, and optionally actor 3 pops once. A result is (actor 1's pop, 10 * x + y,
 * actor 3's pop or 0, the rest top first as digits, or -1 for a cycle).
 */
public final class StackAbaOracle {

    /** Results (r1, r2, 0, rest) of the 4 sequential orders of the two-actor tests, encoded by {@link #key}. */
    private static final Set<Long> LINEARIZABLE_2 = linearizable(false);
    /** Results (r1, r2, r3, rest) of the 20 sequential orders of the three-actor test. */
    private static final Set<Long> LINEARIZABLE_3 = linearizable(true);

    private static long key(final int r1, final int r2, final int r3, final long rest) {
        return ((r1 * 100L + r2) * 10 + r3) * 10_000_000L + rest;
    }

    /**
     * Simulates every order of actor 1's pop (P1), actor 3's pop (P3, if {@code withActor3}) and actor
     * 2's pop, pop, push on a sequential stack a, b, c.
     */
    private static Set<Long> linearizable(final boolean withActor3) {
        final Set<Long> set = new HashSet<>();
        final int slots = withActor3 ? 5 : 4;
        for (int p1 = 0; p1 < slots; p1++) {
            for (int p3 = withActor3 ? 0 : -1; p3 < (withActor3 ? slots : 0); p3++) {
                if (p1 == p3) {
                    continue;
                }
                final ArrayDeque<Integer> stack = new ArrayDeque<>(List.of(1, 2, 3)); // head = top
                int r1 = 0;
                int r3 = 0;
                int x = 0;
                int y = 0;
                int step = 0;
                for (int slot = 0; slot < slots; slot++) {
                    if (slot == p1) {
                        r1 = stack.isEmpty() ? 0 : stack.pop();
                    } else if (slot == p3) {
                        r3 = stack.isEmpty() ? 0 : stack.pop();
                    } else if (step++ == 0) {
                        x = stack.isEmpty() ? 0 : stack.pop();
                    } else if (step == 2) {
                        y = stack.isEmpty() ? 0 : stack.pop();
                    } else if (x != 0) {
                        stack.push(x);
                    }
                }
                long rest = 0;
                for (final int v : stack) {
                    rest = rest * 10 + v;
                }
                set.add(key(r1, 10 * x + y, r3, rest));
            }
        }
        return set;
    }

    /**
     * The verdict of a result: 0 linearizable, 1 every element once but not linearizable, 2 an element held
     * twice or lost, a cycle ({@code rest < 0}), or a stranger (letter 9).
     */
    private static int verdict(final Set<Long> linearizable, final int r1, final int r2, final int r3, final long rest) {
        if (rest >= 0 && linearizable.contains(key(r1, r2, r3, rest))) {
            return 0;
        }
        return eachOnce(rest, r1, r2 % 10, r3) ? 1 : 2; // y is held by actor 2; x went back on the stack
    }

    /**
     * Whether a, b and c (1, 2, 3) are each held by one actor or on the stack, exactly once: {@code
     * held} are the letters the actors hold (0 for an empty pop), {@code rest} the stack top first as
     * digits (negative for a cycle). False for a duplicate, a loss, a cycle or a stranger (9).
     */
    public static boolean eachOnce(final long rest, final int... held) {
        if (rest < 0) {
            return false;
        }
        final int[] seen = new int[10];
        for (final int h : held) {
            seen[h]++;
        }
        for (long v = rest; v != 0; v /= 10) {
            seen[(int) (v % 10)]++;
        }
        return seen[1] == 1 && seen[2] == 1 && seen[3] == 1 && seen[9] == 0;
    }

    private StackAbaOracle() {
    }

    /** The verdict of a two-actor result: 0 linearizable, 1 every element once but no sequential order, 2 corrupt. */
    public static int verdict2(final int r1, final int r2, final long rest) {
        return verdict(LINEARIZABLE_2, r1, r2, 0, rest);
    }

    /** The verdict of a three-actor result, as {@link #verdict2}. */
    public static int verdict3(final int r1, final int r2, final int r3, final long rest) {
        return verdict(LINEARIZABLE_3, r1, r2, r3, rest);
    }
}
