package dev.limbo.core;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A reap that loses the release race returns while the winner still runs the release hooks;
 * {@link Participants#awaitReleases()} waits for them, and returns at once inside a hook.
 */
@Timeout(120)
@SuppressWarnings("try") // the hook is registered for the length of the try block
class ParticipantsAwaitReleasesTest {

    @Test
    void awaitReleasesWaitsForHooksRunningOnAnotherThread() throws Exception {
        final AtomicInteger deadId = new AtomicInteger(-1);
        final CountDownLatch inHook = new CountDownLatch(1);
        final CountDownLatch letGo = new CountDownLatch(1);
        final AtomicBoolean adopted = new AtomicBoolean();
        final AtomicBoolean nestedReturned = new AtomicBoolean();
        try (AutoCloseable hook = Participants.onRelease(id -> {
            if (id == deadId.get() && Thread.currentThread().getName().equals("releaser")) {
                Participants.awaitReleases(); // inside a hook: must not wait for itself
                nestedReturned.set(true);
                inHook.countDown();
                try {
                    letGo.await(60, TimeUnit.SECONDS); // the releaser is slow (preempted, say)
                } catch (final InterruptedException e) {
                    throw new AssertionError(e);
                }
                adopted.set(true);
            }
        })) {
            final Thread dead = Thread.ofPlatform().start(() -> deadId.set(Participants.current()));
            dead.join();
            final Thread releaser = Thread.ofPlatform().name("releaser").start(Participants::reapTerminated);
            assertTrue(inHook.await(60, TimeUnit.SECONDS), "the releaser never ran the hook");
            assertTrue(nestedReturned.get());
            Participants.reapTerminated(); // loses the race for deadId and returns at once
            final AtomicBoolean sawAdopted = new AtomicBoolean();
            final Thread waiter = Thread.ofPlatform().start(() -> {
                Participants.awaitReleases();
                sawAdopted.set(adopted.get());
            });
            assertFalse(adopted.get());
            letGo.countDown();
            waiter.join();
            releaser.join();
            assertTrue(sawAdopted.get(), "awaitReleases returned before the hooks had run");
            assertTrue(adopted.get());
        }
    }
}
