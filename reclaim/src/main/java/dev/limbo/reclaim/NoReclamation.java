package dev.limbo.reclaim;

import dev.limbo.reclaim.internal.BlockBag;

/**
 * Scheme {@code none}: never frees a retired node. The baseline that every scheme's overhead is
 * measured against (DEBRA §7's "None"); it leaks by design, so use it only for benchmarks.
 *
 * <pre>{@code
 * Implementation notes
 *
 * Algorithm: none. A guard is a nesting counter; protect is an acquire load; retire counts.
 * Invariants: none beyond the guard's nesting count. Garbage bound: none (every retired node leaks
 * until the process ends; close() does not free them either, since they are not tracked).
 * Memory ordering: (1) protect's acquire load pairs with the release or CAS that published the
 * node, so its initialization is visible.
 * Linearization points: protect and protectIfEqual - the acquire load (1); retire - the count of
 * the guard's retired records; pin and unpin have no shared effect (a nesting count), and flush
 * none at all.
 * Progress: every operation is wait-free.
 * Safety: trivially safe, since nothing is ever freed; ABA cannot occur on retired nodes either.
 * }</pre>
 */
final class NoReclamation extends ReclaimDomain {

    NoReclamation(final Builder b) {
        super(b);
    }

    @Override
    Guard newGuard(final int id) {
        return new NoGuard(this, id);
    }

    @Override
    void flush(final Guard g) {
        // nothing is ever reclaimed
    }

    @Override
    void abandon(final Guard g) {
        // nothing is tracked
    }

    @Override
    void drainRetired(final Guard g, final BlockBag target) {
        // nothing is tracked
    }

    @Override
    long advances() {
        return 0;
    }

    /** None: nothing is ever freed. */
    @Override
    long garbageBound(final int n) {
        return Long.MAX_VALUE;
    }

    private static final class NoGuard extends Guard {

        NoGuard(final ReclaimDomain domain, final int id) {
            super(domain, id);
        }

        @Override
        void enter() {
        }

        @Override
        void exit() {
        }

        @Override
        public long protect(final int slot, final long address) {
            return sectionProtect(slot, address); // (1), then the poll
        }

        @Override
        public boolean protectIfEqual(final int slot, final long address, final long expected) {
            return sectionProtectIfEqual(slot, address, expected); // (1), then the poll
        }

        @Override
        public void retire(final long ptr) {
            noteRetire(ptr);
        }
    }
}
