package dev.limbo.bench.index;

/** An {@link IndexAdapter} over an ordered map: it also scans key ranges. */
public interface OrderedAdapter extends IndexAdapter {

    /**
     * Visits, in ascending key order, the first {@code scan.length()} entries with keys
     * {@code >= from} (fewer at the end of the key space), adding their values into {@code scan}.
     *
     * @return the number of entries visited
     */
    long scan(long from, RangeScan scan);
}
