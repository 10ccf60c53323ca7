package dev.limbo.allocator;

import dev.limbo.allocator.internal.Anchor;
import dev.limbo.allocator.internal.BestFitPageAllocator;
import dev.limbo.allocator.internal.DescriptorLayout;
import dev.limbo.allocator.internal.PageMap;
import dev.limbo.allocator.internal.SizeClasses;
import dev.limbo.core.Words;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Helpers for the allocator's jcstress tests: fresh superblocks of the largest size class, list
 * walks that count where each block of a superblock is, and clean-up that returns a superblock to
 * the page allocator whatever state a test left it in.
 *
 * <p>The tests sit in {@code dev.limbo.allocator} (a split package: the shaded jar is on the class
 * path) to reach the package-private superblock protocol of {@link SuperblockHeap} and the fields of
 * {@link ThreadCache}. They use class {@link #SC} (16 KiB blocks, {@link #MAX} = 4 per 64 KiB
 * superblock), so FULL, PARTIAL and EMPTY transitions happen in nearly every state.
 *
 * <p>Why fresh superblocks come from {@code fillFromNew} and not from {@code fill}: jcstress runs the
 * arbiters and constructors of one batch concurrently on its actor threads (each takes half of the
 * states), so a constructor's {@code fill} could pop the descriptor of a state whose arbiter has not
 * run yet and take its blocks, which that arbiter would then report as lost.
 * {@code fillFromNew} is private; a private lookup reaches it (everything is in the unnamed module).
 */
final class Superblocks {

    /** The size class under test: the largest, 16384-byte blocks. */
    static final int SC = SizeClasses.COUNT;
    static final int SIZE = SizeClasses.size(SC);
    /** Blocks per superblock: 4 with the default 64 KiB page. */
    static final int MAX = (int) (PageMap.PAGE / SIZE);

    /** Flag: a block is in two places. */
    static final int DUP = 1;
    /** Flag: a block is in no place. */
    static final int LOST = 2;
    /** Flag: a list link leaves the superblock, is misaligned, or a list does not end. */
    static final int MALFORMED = 4;
    /** Flag: a state field contradicts a count (e.g. FULL with free blocks, remote head not ABANDONED). */
    static final int BAD_STATE = 8;

    private static final MethodHandle FILL_FROM_NEW;

    static {
        try {
            FILL_FROM_NEW = MethodHandles.privateLookupIn(SuperblockHeap.class, MethodHandles.lookup())
                    .findVirtual(SuperblockHeap.class, "fillFromNew",
                            MethodType.methodType(int.class, ThreadCache.class, int.class));
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private Superblocks() {
    }

    /** Fills {@code cache}'s empty list of class {@link #SC} with all blocks of a new superblock. */
    static int fresh(final LimboAllocator alloc, final ThreadCache cache) {
        try {
            return (int) FILL_FROM_NEW.invokeExact(alloc.heap, cache, SC);
        } catch (final RuntimeException | Error e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    static long desc(final LimboAllocator alloc, final int d) {
        return alloc.heap.descriptors.offset(d);
    }

    static long superblock(final LimboAllocator alloc, final int d) {
        return Words.lp(desc(alloc, d) + DescriptorLayout.SUPERBLOCK);
    }

    static long anchor(final LimboAllocator alloc, final int d) {
        return Words.lv(desc(alloc, d) + DescriptorLayout.ANCHOR);
    }

    /** The block after {@code block} in a list with relative links. */
    static long next(final long block) {
        return block + SIZE + Words.lp(block);
    }

    /** The {@code n} blocks of a list with relative links, from {@code head}. */
    static long[] list(final long head, final int n) {
        final long[] blocks = new long[n];
        long p = head;
        for (int i = 0; i < n; i++) {
            blocks[i] = p;
            if (i < n - 1) {
                p = next(p);
            }
        }
        return blocks;
    }

    /** Index of block {@code p} in superblock {@code sb}, or -1 if {@code p} is not a block of it. */
    static int index(final long sb, final long p) {
        final long off = p - sb;
        if (off < 0 || off >= (long) MAX * SIZE || off % SIZE != 0) {
            return -1;
        }
        return (int) (off / SIZE);
    }

    /** Counts each of {@code blocks} into {@code hits}; MALFORMED if one is not a block of {@code sb}. */
    static int mark(final long sb, final long[] blocks, final int[] hits) {
        for (final long p : blocks) {
            final int i = index(sb, p);
            if (i < 0) {
                return MALFORMED;
            }
            hits[i]++;
        }
        return 0;
    }

    /**
     * Counts the {@code n} blocks of a relative-link list from {@code head} into {@code hits}, walking
     * only inside {@code sb} (a link that leaves it stops the walk with MALFORMED).
     */
    static int markList(final long sb, final long head, final int n, final int[] hits) {
        long p = head;
        for (int i = 0; i < n; i++) {
            final int idx = index(sb, p);
            if (idx < 0) {
                return MALFORMED;
            }
            hits[idx]++;
            if (i < n - 1) {
                p = next(p);
            }
        }
        return 0;
    }

    /**
     * Counts the anchor's free list ({@code count} blocks from {@code avail}) into {@code hits}, and
     * checks that the state agrees with the count (FULL iff 0; never EMPTY while a test holds blocks).
     */
    static int markAnchor(final long sb, final long anchor, final int[] hits) {
        final int count = Anchor.count(anchor);
        final int state = Anchor.state(anchor);
        int flags = 0;
        if ((state == Anchor.FULL) != (count == 0) || state == Anchor.EMPTY || state == 3) {
            flags |= BAD_STATE;
        }
        if (count == 0) {
            return flags;
        }
        if (count > MAX || Anchor.avail(anchor) >= MAX) {
            return flags | MALFORMED;
        }
        return flags | markList(sb, sb + (long) Anchor.avail(anchor) * SIZE, count, hits);
    }

    /**
     * Counts an owner-return remote list (absolute links, 0-terminated) into {@code hits}; returns
     * its length, or -1 if it leaves the superblock or is longer than {@link #MAX} (a cycle).
     */
    static int markRemote(final long sb, final long head, final int[] hits) {
        int n = 0;
        for (long p = head; p != 0 && p != SuperblockHeap.ABANDONED; p = Words.lp(p)) {
            final int idx = index(sb, p);
            if (idx < 0 || n == MAX) {
                return -1;
            }
            hits[idx]++;
            n++;
        }
        return n;
    }

    /** DUP if a block was counted twice or more, LOST if a block was counted 0 times. */
    static int verdict(final int[] hits) {
        int flags = 0;
        for (final int h : hits) {
            if (h > 1) {
                flags |= DUP;
            } else if (h == 0) {
                flags |= LOST;
            }
        }
        return flags;
    }

    /**
     * Returns superblock {@code d} to the page allocator: every block that is not on the anchor's free
     * list is linked and flushed in one {@code flushRun}, which takes the superblock to EMPTY (and, from
     * FULL, retires the descriptor; from PARTIAL the descriptor stays on the partial stack for a later
     * fill or {@link #drainEmpty} to retire). The caller must hold, or have lost, every such block: it
     * gives them all up here. If the anchor's list is itself broken (a broken variant's doing), the
     * superblock is released by force and its descriptor is leaked, since it may sit on a stack.
     */
    static void giveBack(final LimboAllocator alloc, final int d) {
        final long desc = desc(alloc, d);
        Words.sv(desc + DescriptorLayout.REMOTE_HEAD, SuperblockHeap.ABANDONED);
        final long sb = superblock(alloc, d);
        final int[] onList = new int[MAX];
        final int flags = markAnchor(sb, anchor(alloc, d), onList);
        boolean ok = flags == 0;
        for (final int h : onList) {
            ok &= h <= 1;
        }
        if (!ok) {
            forceRelease(alloc, d);
            return;
        }
        long head = 0;
        long tail = 0;
        int n = 0;
        for (int i = 0; i < MAX; i++) {
            if (onList[i] == 0) {
                final long p = sb + (long) i * SIZE;
                if (n == 0) {
                    head = p;
                } else {
                    Words.sp(tail, p - (tail + SIZE));
                }
                tail = p;
                n++;
            }
        }
        if (n > 0) {
            alloc.heap.flushRun(d, head, tail, n, SC);
        }
    }

    /** Marks {@code d} EMPTY and frees its page without retiring the descriptor (which is leaked). */
    static void forceRelease(final LimboAllocator alloc, final int d) {
        final long desc = desc(alloc, d);
        final long sb = superblock(alloc, d);
        Words.sv(desc + DescriptorLayout.ANCHOR, Anchor.pack(Anchor.EMPTY, 0, MAX));
        final long page = sb >>> PageMap.PAGE_SHIFT;
        PageMap.setOwner(page, 0L);
        BestFitPageAllocator.global().free(page, 1);
    }

    /**
     * Retires EMPTY descriptors from the top of the partial stack of {@link #SC}; stops at the first
     * one that is not EMPTY (pushed back) or at an empty stack. For tests in which no actor fills, so
     * that descriptors left there by PARTIAL-to-EMPTY flushes are recycled.
     */
    static void drainEmpty(final LimboAllocator alloc) {
        for (int i = 0; i < 4 * MAX; i++) {
            final int d = alloc.heap.descriptors.popPartial(SC);
            if (d == 0) {
                return;
            }
            if (Anchor.state(anchor(alloc, d)) == Anchor.EMPTY) {
                alloc.heap.descriptors.retire(d);
            } else {
                alloc.heap.descriptors.pushPartial(SC, d);
                return;
            }
        }
    }
}
