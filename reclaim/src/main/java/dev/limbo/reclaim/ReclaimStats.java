package dev.limbo.reclaim;

/**
 * A snapshot of a {@link ReclaimDomain}'s counters. Counters of running threads are read racily,
 * so the snapshot is exact only when the domain is quiescent.
 *
 * @param scheme   the scheme id ({@code debra}, {@code hp}, ...)
 * @param retired  nodes retired so far
 * @param freed    retired nodes handed on to the pool (safe to reuse)
 * @param inLimbo  {@code retired - freed}: nodes waiting for a grace period, a scan or amortized
 *                 free (for {@code none}, every retired node: it leaks)
 * @param advances epoch advances (epoch schemes), token receipts (Token-EBR: turns, each a local
 *                 epoch of the paper, counted over all threads), or 0
 * @param scans    completed scans: passes that read every participant's announcement (epoch schemes:
 *                 each scan of {@code ebr} and of {@code flush()}, and each of {@code debra}'s
 *                 incremental passes, spread over many pins, once it reaches the last thread) or
 *                 every hazard slot ({@code hp}: each scan). A scan that stops at a thread that
 *                 blocks the epoch's advance is not counted. Token-EBR: passes of the token made
 *                 by another thread on behalf of an idle holder (or of one that left the ring).
 * @param pooled   free records cached in the pool's shared stack (per-thread bags not counted)
 * @param fenceFallbacks heavy barriers ({@code membarrier}) that failed at run time and made an
 *                 epoch domain in asymmetric mode fall back to a fence per pin: 0 or 1
 * @param restarts read phases restarted ({@link Restart} thrown): by neutralization, or by the
 *                 builder's restart injection
 * @param neutralizations threads marked neutralized ({@code debra+}: suspects that held the epoch
 *                 back while the scanner's limbo bag was over its threshold; also tests' marks)
 * @param retries  CAS retries in the scheme's own shared structures: {@code stampit}'s stamp queue
 *                 (failed CASes, restarted walks and helping steps in its push and remove); 0 for
 *                 the others
 */
public record ReclaimStats(String scheme, long retired, long freed, long inLimbo, long advances, long scans,
                           long pooled, long fenceFallbacks, long restarts,
                           long neutralizations, long retries) {
}
