package dev.limbo.reclaim;

import dev.limbo.reclaim.internal.BlockBag;
import dev.limbo.reclaim.internal.BlockSource;

import java.util.Arrays;

/**
 * A reclaimer's screening of a batch of retired records against every published reservation
 * ({@link Guard#reserve}), for the schemes that neutralize: DebraPlus (P4) and
 * NeutralizationBasedReclamation (N4). One per guard; thread-confined.
 *
 * <p>{@link #collect} reads every participant's reservation words once ((R5), acquire loads,
 * {@link ReclaimDomain#collectReservations}) and sorts them: O(n k log(n k)) for n participants of
 * k reservation words each. {@link #split} then walks the batch: a record {@code [p, p + recordBytes)}
 * that contains a reservation (reserve() covers any address inside a record) stays in the batch,
 * the others move to the bag it returns, found by a binary search each.
 */
final class ReservationScreen {

    private final ReclaimDomain domain;
    private final BlockBag kept;
    private final BlockBag clean;
    /** The collected reservations, sorted in [0, count); grows with n. */
    private long[] sorted = new long[0];
    private int count;

    ReservationScreen(final ReclaimDomain domain, final BlockSource blocks) {
        this.domain = domain;
        this.kept = new BlockBag(blocks);
        this.clean = new BlockBag(blocks);
    }

    /** (R5): collects and sorts the reservations of participants {@code 0 .. n - 1}; returns how many. */
    int collect(final int n) {
        final int words = n * domain.slotWords;
        if (sorted.length < words) {
            sorted = new long[words];
        }
        count = domain.collectReservations(sorted, n); // (R5)
        Arrays.sort(sorted, 0, count);
        return count;
    }

    /**
     * Moves every record of {@code batch} that no reservation of the last {@link #collect} names
     * into the returned bag (the caller frees it, which empties it); the reserved records stay in
     * {@code batch}.
     */
    BlockBag split(final BlockBag batch) {
        for (long ptr; (ptr = batch.pop()) != 0; ) {
            (reserved(ptr) ? kept : clean).add(ptr);
        }
        kept.moveAllTo(batch);
        return clean;
    }

    /** Whether one of the collected reservations lies in record [ptr, ptr + recordBytes). */
    private boolean reserved(final long ptr) {
        int lo = 0;
        int hi = count;
        while (lo < hi) { // the first reservation >= ptr
            final int mid = (lo + hi) >>> 1;
            if (sorted[mid] < ptr) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo < count && sorted[lo] - ptr < domain.recordBytes;
    }

    /** Recycles the scratch bags' blocks (departure, teardown); both are empty between screenings. */
    void releaseBlocks() {
        kept.releaseBlocks();
        clean.releaseBlocks();
    }
}
