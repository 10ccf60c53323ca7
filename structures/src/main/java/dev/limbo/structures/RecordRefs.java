package dev.limbo.structures;

import dev.limbo.core.Words;

/**
 * Reference counts of records that several holders keep alive (EllenBst's info records,
 * BrownAbTree's SCX records): the count word is at offset 0; the holder that drops it to 0 retires
 * the record, so a count never rises from 0.
 */
final class RecordRefs {

    private RecordRefs() {
    }

    /**
     * Increments the count of {@code record} unless it is 0 (retired): increment-if-not-zero with
     * a volatile CAS loop. Returns whether it did.
     */
    static boolean acquire(final long record) {
        long c = Words.la(record); // acquire load of the count
        while (c != 0) {
            final long w = Words.cae(record, c, c + 1); // volatile
            if (w == c) {
                return true;
            }
            c = w;
        }
        return false;
    }
}
