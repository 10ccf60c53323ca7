package dev.limbo.reclaim;

import dev.limbo.core.Layouts;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Stamp-it's ordered stamp structure (Pöter and Träff, "A new and five older Concurrent Memory
 * Reclamation Schemes in Comparison (Stamp-it)", §2.6; digest notes/stamp-it.md §3.6): the
 * threads inside a region, as control blocks in a lock-free queue ordered by the stamps they took
 * on entry. {@link StampIt} is the scheme built on it.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Operations (the report's four): push(b) gives block b a stamp larger than every stamp handed
 * out before and links it as the newest member; remove(b) unlinks b and says whether b held the
 * lowest stamp; highest() is the head stamp H (the next stamp to hand out); lowest() is the tail
 * stamp L, a lower bound of the stamps of all members, now and later.
 *
 * State: control blocks in one heap long[] with a 128-byte line each: HEAD (0), TAIL (1) and
 * one per participant id (id + 2), never freed (they are reused by every region entry of the
 * id's thread). A block has a prev word (its link) and a stamp word. HEAD's stamp word is H, TAIL's
 * is L. Link word: version << 23 | index << 2 | pending << 1 | mark: the index of the older
 * neighbour, a 41-bit version that every write of the word increments, the pending bit (the
 * owner's push linked the block but has not confirmed it yet) and the delete mark.
 *
 * Structure: the prev words form a singly linked list HEAD -> newest -> ... -> oldest -> TAIL
 * (the report's authoritative "prev" direction; its list from tail to head, Sundell & Tsigas's
 * doubly linked list, keeps next words as well. Ours has none: next words are hints that speed up
 * finding a block's newer neighbour, and we find it by the walk from HEAD below, which costs the
 * number of members newer than the leaver). Stamps fall strictly from HEAD to TAIL (invariant S).
 *
 * push(b): loop { hp = HEAD.prev (Q1); s = getAndAdd(H, 1) (Q2); b.stamp = s (Q3);
 *     b.prev = hp.index | pending, version + 1 (Q4); CAS HEAD.prev: hp -> b, version + 1 (Q5) };
 *     then clear b's pending bit (Q6). If hp was TAIL (the queue was empty), raise L to s (Q10).
 *     Invariant S: a push links only if HEAD.prev did not change since before its stamp was
 *     taken; every block linked before that read took its stamp before it, so all have smaller
 *     stamps. A push that took stamp s and failed retries with a new stamp: a stamp is used only
 *     by the block that links with it (the push's retries burn stamps).
 * remove(b): mark b.prev (CAS, Q8): its older neighbour is then frozen; b held the lowest stamp
 *     iff that neighbour is TAIL. Then unlink it: walk from HEAD (pred, pw = pred.prev; cur =
 *     pw.index; cw = cur.prev (Q7)); if cw is marked, help: CAS pred.prev: pw -> cw.index (Q8),
 *     restart from HEAD if that fails, done if cur was b; else re-read pred.prev (Q7) and restart
 *     if it is no longer pw (Michael's validation: cw was then read while cur was linked); help
 *     clear cur's pending bit if set (Q8); step on. Reaching TAIL without meeting b means a helper
 *     unlinked b. Whoever's unlinking CAS made a block X the oldest (pw.index was the new TAIL
 *     neighbour) raises L (raiseTail, below).
 * raiseTail(X): X's prev now names TAIL. If X is HEAD the queue is empty: read H (Q12), then bump
 *     HEAD.prev's version by CAS (Q12b); if that succeeds, L := max(L, H read) (Q10). Otherwise a
 *     push linked meanwhile (it raises L itself) or another emptier bumped first (retry). If X is a
 *     block: read X.stamp (Q11), re-read X.prev; if unchanged, L := max(L, X.stamp) (Q10); if
 *     changed, X was marked since and its remover raises L itself, past X.
 *
 * Invariant L (safety): L <= the stamp of every member, and of every block linked later.
 *  - A block's stamp raised into L was read while the block was linked and the oldest (its prev
 *    named TAIL before and after the stamp read, same version): by S every member then had a larger
 *    stamp, and a block linked later a larger one still; a push pending then (stamp taken, not
 *    linked) with a smaller stamp read HEAD.prev before X linked, so its CAS fails and it retries
 *    with a new, larger stamp.
 *  - H raised into L by an emptier: the bump (Q12b) succeeded with the queue empty, so no block was
 *    linked; every pending push that took a stamp below the H it read had read HEAD.prev before the
 *    bump, so its CAS fails and it retries with a stamp >= that H; later pushes take larger ones.
 *  - A push onto an empty queue raises L to its own stamp once linked: by S it is the only and
 *    lowest member, and pending pushes with smaller stamps fail (their HEAD.prev is stale).
 *  L only grows (CAS-max), and each value raised into it is safe from then on, so L is.
 *
 * Pending bit and ABA (blocks are reused on every region entry; the report's 17-bit tags and
 * 2^18-aligned blocks, ours a 41-bit version in an index word, which cannot wrap in practice):
 * every write of a prev word bumps its version, so a CAS whose expected word was read before a
 * block left and came back fails. A walker trusts a prev word cw only if the edge pred -> cur was
 * unchanged (same version) across the read of cw, so cw was read while cur was linked; it CASes
 * only words it so trusts. A block between its push's store (Q4) and its link has a prev word no
 * walker trusts (it is not linked), so no helper changes it and no raiseTail reads its stamp;
 * once linked, its pending bit only says that its owner has not yet confirmed it: a walker clears
 * it, and every CAS on a linked block's prev writes a confirmed word.
 *
 * Linearization points: push: its successful CAS (Q5). remove: the mark (Q8) decides "lowest";
 * the block leaves the member set at the CAS that unlinks it (its own or a helper's). lowest():
 * its load (Q11). highest(): the retire's RMW (Q9).
 *
 * Progress: lock-free. push retries only when HEAD.prev changed (another push linked, an unlink
 * of the newest, or an emptier's bump: each completes an operation or is part of one); remove's
 * mark retries only when an unlink changed b.prev; a walk restarts only after a CAS or a
 * validation failed, each caused by another thread's successful CAS; an emptier retries only
 * after a push or another emptier's bump. The retries (failed CASes and restarts, plus helping
 * steps) are counted (retries(); ReclaimStats.retries()).
 *
 * Memory ordering (all on heap array elements through one VarHandle):
 *  (Q1) volatile load of HEAD.prev; (Q5) the link, a volatile CAS: it publishes (Q3) and (Q4).
 *  (Q2) volatile getAndAdd of H; pairs with (Q9), the retire's getAndAdd(H, 0) (a volatile RMW,
 *      hence a write): a retire's unlink of a node precedes its (Q9); a push whose (Q2) comes after
 *      that (Q9) in H's total order is synchronized with it, so the unlink happens-before every
 *      read of that region. A plain or acquire read of H at (Q9) would give no such edge (a read
 *      synchronizes nothing), and a stamp cached earlier would be stale: jcstress StampOrderTest.
 *  (Q3) opaque store of the block's stamp, (Q4) opaque store of its pending prev word: racy
 *      readers (stale walkers) are validated by versions.
 *  (Q6), (Q8) volatile CASes on prev words; (Q7) volatile loads of prev words.
 *  (Q10) L: a volatile CAS-max; (Q11) acquire loads of L (lowest()) and of block stamps: L's CAS
 *      releases the removals before it, so a reclaimer that reads L >= a node's stamp sees that
 *      node's holders gone. (Q12) volatile load of H; (Q12b) volatile CAS on HEAD.prev.
 * }</pre>
 */
final class StampQueue {

    static final int HEAD = 0;
    static final int TAIL = 1;

    private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class).withInvokeExactBehavior();
    private static final int STRIDE = (int) (Layouts.PADDED / Long.BYTES);
    private static final int PREV = 0;
    private static final int STAMP = 1;

    static final long MARK = 1;
    static final long PENDING = 2;
    private static final int INDEX_SHIFT = 2;
    private static final long INDEX_MASK = (1L << 21) - 1;
    private static final int VERSION_SHIFT = 23;

    private final long[] words;
    private final AtomicLong retries = new AtomicLong();

    /** A queue for participant ids {@code 0 .. ids - 1}: their blocks are {@code id + 2}. */
    StampQueue(final int ids) {
        this.words = new long[(ids + 3) * STRIDE];
        words[base(HEAD) + PREV] = link(TAIL, 0, 0);
        words[base(HEAD) + STAMP] = 1;
        words[base(TAIL) + STAMP] = 1;
    }

    /** The block of participant {@code id}. */
    static int blockOf(final int id) {
        return id + 2;
    }

    // ---------------------------------------------------------------- words

    private static int base(final int block) {
        return (block + 1) * STRIDE; // a leading line keeps HEAD off the array header's line
    }

    static long link(final int block, final long version, final long bits) {
        return version << VERSION_SHIFT | (long) block << INDEX_SHIFT | bits;
    }

    static int index(final long word) {
        return (int) (word >>> INDEX_SHIFT & INDEX_MASK);
    }

    static long version(final long word) {
        return word >>> VERSION_SHIFT;
    }

    /** {@code word} re-targeted at {@code block}, next version, confirmed and unmarked. */
    private static long retarget(final long word, final int block) {
        return link(block, version(word) + 1, 0);
    }

    private long prev(final int block) {
        return (long) WORDS.getVolatile(words, base(block) + PREV); // (Q1), (Q7)
    }

    private boolean casPrev(final int block, final long expected, final long word) {
        return (boolean) WORDS.compareAndSet(words, base(block) + PREV, expected, word); // (Q5), (Q6), (Q8), (Q12b)
    }

    private long stampOf(final int block) {
        return (long) WORDS.getAcquire(words, base(block) + STAMP); // (Q11)
    }

    // ---------------------------------------------------------------- operations

    /** Links {@code block} as the newest member with a new stamp and returns the stamp. */
    long push(final int block) {
        final int b = base(block);
        long failed = 0;
        long hp;
        long s;
        while (true) {
            hp = prev(HEAD); // (Q1)
            s = (long) WORDS.getAndAdd(words, base(HEAD) + STAMP, 1L); // (Q2)
            WORDS.setOpaque(words, b + STAMP, s); // (Q3)
            final long mine = retarget((long) WORDS.getOpaque(words, b + PREV), index(hp)) | PENDING;
            WORDS.setOpaque(words, b + PREV, mine); // (Q4)
            if (casPrev(HEAD, hp, retarget(hp, block))) { // (Q5)
                casPrev(block, mine, retarget(mine, index(mine))); // (Q6): fails if a walker confirmed it first
                break;
            }
            failed++;
        }
        if (index(hp) == TAIL) {
            failed += raiseTo(s); // the only member: its stamp is the lowest
        }
        count(failed);
        return s;
    }

    /**
     * Unlinks {@code block}, a member pushed by the calling thread; returns whether it held the
     * lowest stamp.
     */
    boolean remove(final int block) {
        long failed = 0;
        long w;
        while (true) {
            w = prev(block); // (Q7); confirmed: its owner's push or a walker confirmed it
            if (casPrev(block, w, link(index(w), version(w) + 1, MARK))) { // (Q8)
                break;
            }
            failed++;
        }
        count(failed + unlink(block));
        return index(w) == TAIL;
    }

    /**
     * The walk from HEAD that unlinks the marked {@code block}, helping with every marked block on
     * the way; returns the retries and helping steps it took.
     */
    private long unlink(final int block) {
        long failed = 0;
        restart:
        while (true) {
            int pred = HEAD;
            long pw = prev(HEAD); // (Q7)
            while (true) {
                final int cur = index(pw);
                if (cur == TAIL) {
                    return failed; // a helper unlinked block
                }
                long cw = prev(cur); // (Q7)
                if ((cw & MARK) != 0) {
                    final long unlinked = retarget(pw, index(cw));
                    if (!casPrev(pred, pw, unlinked)) { // (Q8)
                        failed++;
                        continue restart;
                    }
                    if (index(cw) == TAIL) {
                        failed += raiseTail(pred, unlinked);
                    }
                    if (cur == block) {
                        return failed;
                    }
                    failed++; // a helping step
                    pw = unlinked;
                    continue;
                }
                if (prev(pred) != pw) { // (Q7): the validation
                    failed++;
                    continue restart;
                }
                if ((cw & PENDING) != 0) {
                    final long next = retarget(cw, index(cw));
                    if (!casPrev(cur, cw, next)) { // (Q8): its owner confirmed it, or it changed
                        failed++;
                        continue restart;
                    }
                    failed++; // a helping step
                    cw = next;
                }
                pred = cur;
                pw = cw;
            }
        }
    }

    /**
     * The unlinking CAS that wrote {@code word} into {@code block}'s prev made {@code block} the
     * oldest member, or emptied the queue (block is HEAD): raises L. Returns the retries.
     */
    private long raiseTail(final int block, final long word) {
        if (block != HEAD) {
            final long s = stampOf(block); // (Q11)
            return prev(block) == word ? raiseTo(s) : 0; // (Q7): else its remover raises L past it
        }
        long failed = 0;
        long w = word;
        while (true) {
            final long h = (long) WORDS.getVolatile(words, base(HEAD) + STAMP); // (Q12)
            if (casPrev(HEAD, w, link(TAIL, version(w) + 1, 0))) { // (Q12b): pending pushes fail
                return failed + raiseTo(h);
            }
            failed++;
            w = prev(HEAD);
            if (index(w) != TAIL) {
                return failed; // a push linked onto the empty queue: it raises L itself
            }
        }
    }

    /** L := max(L, s) (Q10); returns the failed CASes. */
    private long raiseTo(final long s) {
        long failed = 0;
        for (long l = lowest(); l < s; l = lowest()) {
            if ((boolean) WORDS.compareAndSet(words, base(TAIL) + STAMP, l, s)) { // (Q10)
                break;
            }
            failed++;
        }
        return failed;
    }

    /** The tail stamp L: a node stamped at most L is reachable by no member (Q11). */
    long lowest() {
        return (long) WORDS.getAcquire(words, base(TAIL) + STAMP); // (Q11)
    }

    /**
     * The stamp for a node retired now (the report's highest()): H, read by a volatile RMW (Q9),
     * so that the caller's unlink happens-before every region that takes a stamp above it.
     */
    long highest() {
        return (long) WORDS.getAndAdd(words, base(HEAD) + STAMP, 0L); // (Q9)
    }

    /** The stamp of {@code block} (tests). */
    long stamp(final int block) {
        return stampOf(block);
    }

    /**
     * The stamps of the members from newest to oldest, read by a walk from HEAD; for tests, when
     * the queue is quiescent.
     */
    long[] members() {
        int n = 0;
        for (int b = index(prev(HEAD)); b != TAIL; b = index(prev(b))) {
            n++;
        }
        final long[] stamps = new long[n];
        int i = 0;
        for (int b = index(prev(HEAD)); b != TAIL; b = index(prev(b))) {
            stamps[i++] = stampOf(b);
        }
        return stamps;
    }

    /** CAS retries and helping steps in push and remove so far. */
    long retries() {
        return retries.get();
    }

    private void count(final long failed) {
        if (failed != 0) {
            retries.addAndGet(failed);
        }
    }
}
