package dev.limbo.stress;

import dev.limbo.core.Region;
import dev.limbo.core.Words;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Hands out padded 8-byte test words in the {@linkplain Region#global() global region} for the
 * jcstress tests, whose {@code @State} objects address memory through {@link Words}.
 *
 * <p>jcstress creates state objects by the thousand and claimed space is never returned, so one
 * {@value #BLOCK_BYTES}-byte block is claimed and committed once per VM (lazily, on the first
 * {@link #word()}) and slots of {@value #SLOT_BYTES} bytes, each holding one word at its start, are
 * handed out round-robin over it. The ring holds {@value #SLOTS} slots: a jcstress batch keeps at
 * most a few ten thousand states alive at once (stride size times stride count, a few words each),
 * so two live states never share a slot in practice. Each word gets its own slot, two cache lines
 * apart from any other, so the words of one state never share a line either.
 */
public final class WordSlots {

    /** Bytes per slot: a word and padding up to two 64-byte cache lines (adjacent-line prefetch). */
    static final long SLOT_BYTES = 128;
    /** Bytes of the block the slots are cut from. */
    static final long BLOCK_BYTES = 64L << 20;
    /** Slots in the ring. */
    static final long SLOTS = BLOCK_BYTES / SLOT_BYTES;

    private static final AtomicLong NEXT = new AtomicLong();

    private WordSlots() {
    }

    /**
     * A fresh word, zeroed with a plain store: jcstress publishes each state to its actors safely,
     * so the zero is visible to them.
     *
     * @return the word's offset in the global region
     */
    public static long word() {
        return word(0L);
    }

    /**
     * A fresh word holding {@code value}, written with a plain store: jcstress publishes each state
     * to its actors safely, so the value is visible to them.
     *
     * @return the word's offset in the global region
     */
    public static long word(final long value) {
        final long offset = Block.BASE + (NEXT.getAndIncrement() & (SLOTS - 1)) * SLOT_BYTES;
        Words.sp(offset, value);
        return offset;
    }

    /** The block, claimed and committed on first use (class initialization makes that once). */
    private static final class Block {
        static final long BASE;

        static {
            final Region region = Region.global();
            final long base = region.claim(BLOCK_BYTES, Math.max(region.pageSize(), SLOT_BYTES));
            region.commit(base, BLOCK_BYTES);
            BASE = base;
        }
    }
}
