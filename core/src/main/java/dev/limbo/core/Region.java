package dev.limbo.core;

import dev.limbo.core.internal.Native;
import dev.limbo.core.internal.NativeCallException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * A contiguous range of reserved virtual memory in which off-heap pointers are {@code long}
 * offsets; offset 0 is null and the first page (the {@link RegionHeaderLayout header}) is never
 * handed out.
 *
 * <p>The process uses one {@link #global() global region}; {@link Words} reads and writes it
 * through a {@code static final} segment, so every access is bounds-checked against the region and
 * a stale or wild offset can read garbage but can never crash the JVM. Further regions can be
 * {@linkplain #reserve reserved} (tests do), and {@linkplain #close() released}.
 *
 * <h2>Lifecycle of memory</h2>
 * <ol>
 *   <li><b>reserve</b>: on Linux, {@code mmap(PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE)}.
 *       Nothing is backed yet, and the reservation works under the kernel's default overcommit
 *       policy ({@code vm.overcommit_memory=0}). Under strict accounting (mode 2), or an
 *       address-space limit ({@code RLIMIT_AS}, {@code ulimit -v}) below the size, the kernel
 *       refuses it; the {@link OffHeapOutOfMemoryError} names the limit that refused and says to
 *       lower {@value #SIZE_PROPERTY}. The mapping stays readable and writable throughout, so no
 *       access can fault: an untouched or decommitted page reads as zeros. It is left out of core
 *       dumps ({@code madvise(MADV_DONTDUMP)}) unless {@value #CORE_DUMP_PROPERTY}{@code =true}:
 *       a dump of a 64 GiB region would be mostly zeros, and the data may be private.</li>
 *   <li><b>claim</b>: a lock-free bump pointer hands out never-returned address space (the
 *       allocator's superblocks and tables). Exhaustion raises {@link OffHeapOutOfMemoryError}.</li>
 *   <li><b>commit</b>: charges bytes against the commit limit ({@value #COMMIT_LIMIT_PROPERTY},
 *       default: physical memory, or the memory limit of the process's cgroup where that is lower,
 *       so that a container gets {@link OffHeapOutOfMemoryError} rather than a visit from the OOM
 *       killer); the kernel backs each page on first touch.</li>
 *   <li><b>decommit</b>: {@code madvise(MADV_DONTNEED)} returns the pages to the OS (they read as
 *       zeros afterwards) and releases their charge.</li>
 *   <li><b>release</b>: {@link #close()} invalidates the segment, then {@code munmap}s.</li>
 * </ol>
 *
 * <p>Elsewhere than Linux the region is a zeroed {@link Arena#ofShared() shared arena} allocation
 * (default {@value #FALLBACK_DEFAULT_SIZE} bytes), and decommit zero-fills instead of returning
 * pages.
 *
 * <p>Callers pair {@link #commit} and {@link #decommit} for the same ranges; the region trusts the
 * pairing and checks only bounds and alignment.
 *
 * <pre>{@code
 * Implementation notes (the lock-free claim and the commit charge)
 *
 * Algorithm: a bump pointer (brk, in the header's second 128-byte slot) advanced by CAS over one
 * reserved mapping; no paper. The commit charge is a shared counter of committed bytes (the third
 * slot), charged and undone with get-and-add.
 *
 * Invariants:
 *  - pageSize <= brk <= size, and brk never decreases: [pageSize, brk) is claimed, the rest not.
 *  - Each claim [start, end) lies inside the [brk, end) range that its own successful CAS (4)
 *    moved brk across, so claims never overlap; the alignment gap [brk, start) is never handed out.
 *  - committed = the bytes of successful commits minus those of decommits, except between a
 *    refused commit's charge (6) and its undo (7).
 * Non-invariants: committed may pass commitLimit for that moment, so a commit racing with a
 *  refused one near the limit may be refused too, although the two would fit one after the
 *  other. The region does not check that decommits match commits (callers pair them), except
 *  that a decommit of more bytes than are committed in all is refused.
 *
 * Linearization points: claim - its successful CAS (4), or, when the region is exhausted, the load
 * (2) that saw too little room; commit - its get-and-add (6) (refused: the (6) whose result
 * passed the limit); decommit - its get-and-add (8), after madvise returned the pages;
 * claimedBytes and committedBytes - their loads (3), (5).
 *
 * Progress: claim is lock-free (its CAS fails only because another claim succeeded); commit and
 * decommit are wait-free, apart from decommit's madvise system call.
 *
 * Memory ordering (numbers as in the code):
 *  (1) release store of the initial brk, after the plain stores of the other header words; pairs
 *      with (2), (3): a thread that reads brk sees the header.
 *  (2) volatile load of brk in claim and (4) its CAS (volatile); pair with each other across
 *      claimers. They hand out address space only: a claimer writes and publishes the claimed
 *      memory by its own means.
 *  (3) acquire load of brk (claimedBytes, and the bound of checkPageRange); pairs with (1), (4).
 *  (5) opaque loads of committed: a statistic, and decommit's check that the count covers the
 *      range (a range that was committed counts until its own (8), so the check never refuses a
 *      paired decommit); (6), (7), (8) get-and-adds of committed: atomic, and ordering nothing else.
 *
 * Reclamation and ABA: claimed space never goes back to the bump pointer, so brk takes each value
 * at most once and the CAS (4) cannot succeed on a stale value. Decommitted pages stay mapped and
 * read as zeros, so a stale access reads zeros and never faults; close() invalidates the segment
 * (later accesses throw) before it unmaps.
 * }</pre>
 */
public final class Region implements AutoCloseable {

    /** System property: bytes of address space the global region reserves (suffixes k, m, g, t). */
    public static final String SIZE_PROPERTY = "limbo.region.size";
    /** System property: the most bytes the global region may have committed at once. */
    public static final String COMMIT_LIMIT_PROPERTY = "limbo.region.commitLimit";
    /** System property: {@code true} keeps regions in core dumps ({@code false}, the default, leaves them out). */
    public static final String CORE_DUMP_PROPERTY = "limbo.region.coreDump";
    /** Default reservation on Linux: 64 GiB of address space, none of it backed until touched. */
    public static final long DEFAULT_SIZE = 64L << 30;
    /** Default size where {@code mmap} is unavailable and the whole region is allocated up front. */
    public static final long FALLBACK_DEFAULT_SIZE = 256L << 20;

    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle().withInvokeExactBehavior();

    private final MemorySegment segment;
    private final Arena arena;
    private final long address;
    private final long size;
    private final long pageSize;
    private final long commitLimit;
    private final boolean mapped;
    private final boolean global;
    private final boolean excludedFromCoreDumps;

    private Region(final long size, final long commitLimit, final boolean global, final boolean coreDump) {
        final long pageSize = Native.pageSize();
        if (size < 2 * pageSize) {
            throw new IllegalArgumentException("region size must be at least two pages (" + 2 * pageSize
                    + " bytes), was " + size + (global ? "; check -D" + SIZE_PROPERTY : ""));
        }
        if (commitLimit <= 0) {
            throw new IllegalArgumentException("commit limit must be positive, was " + commitLimit
                    + (global ? "; check -D" + COMMIT_LIMIT_PROPERTY : ""));
        }
        final long rounded = (size + pageSize - 1) & -pageSize;
        if (rounded < size) {
            throw new IllegalArgumentException("region size " + size + " overflows when rounded up to pages"
                    + (global ? "; check -D" + SIZE_PROPERTY : ""));
        }
        this.pageSize = pageSize;
        this.size = rounded;
        this.commitLimit = commitLimit;
        this.global = global;
        this.mapped = Native.AVAILABLE;
        this.arena = global ? Arena.global() : Arena.ofShared();
        if (mapped) {
            try {
                this.address = Native.mmapAnonymous(rounded, Native.PROT_READ | Native.PROT_WRITE,
                        Native.MAP_PRIVATE | Native.MAP_NORESERVE);
            } catch (final NativeCallException e) {
                if (!global) {
                    arena.close();
                }
                throw new OffHeapOutOfMemoryError(reservationFailure(rounded, e.getMessage(),
                        Native.addressSpaceLimit(), overcommitMode(Path.of("/proc/sys/vm/overcommit_memory"))));
            }
            this.excludedFromCoreDumps = !coreDump && excludeFromCoreDumps(address, rounded);
            this.segment = MemorySegment.ofAddress(address).reinterpret(rounded, arena, null);
        } else {
            this.excludedFromCoreDumps = false;
            this.segment = arena.allocate(rounded, pageSize);
            this.address = segment.address();
        }
        LONG.set(segment, RegionHeaderLayout.MAGIC_OFFSET, RegionHeaderLayout.MAGIC);
        LONG.set(segment, RegionHeaderLayout.SIZE_OFFSET, rounded);
        LONG.set(segment, RegionHeaderLayout.PAGE_SIZE_OFFSET, pageSize);
        LONG.set(segment, RegionHeaderLayout.COMMITTED_OFFSET, 0L);
        // (1) release-store of the initial brk; pairs with the volatile loads (2) in claim().
        LONG.setRelease(segment, RegionHeaderLayout.BRK_OFFSET, pageSize);
    }

    /** The process-wide region, reserved on first use with the sizes the system properties give. */
    public static Region global() {
        return Global.REGION;
    }

    /**
     * Reserves a new region of {@code size} bytes (rounded up to pages) that may commit at most
     * {@code commitLimit} bytes. Release it with {@link #close()}.
     *
     * @throws IllegalArgumentException if a size is smaller than two pages, not positive, or too large
     *                                  to round up to whole pages
     * @throws OffHeapOutOfMemoryError  if the OS refuses the reservation
     */
    public static Region reserve(final long size, final long commitLimit) {
        return reserve(size, commitLimit, flag(CORE_DUMP_PROPERTY, System.getProperty(CORE_DUMP_PROPERTY), false));
    }

    /** {@link #reserve(long, long)}, kept in core dumps if {@code coreDump}. */
    static Region reserve(final long size, final long commitLimit, final boolean coreDump) {
        return new Region(size, commitLimit, false, coreDump);
    }

    /** The whole region as a segment; offsets into it are Limbo's pointers. */
    public MemorySegment segment() {
        return segment;
    }

    /** Reserved bytes. */
    public long size() {
        return size;
    }

    /** The OS page size. */
    public long pageSize() {
        return pageSize;
    }

    /** The most bytes that may be committed at once. */
    public long commitLimit() {
        return commitLimit;
    }

    /**
     * Whether the region is left out of core dumps: true on Linux unless
     * {@value #CORE_DUMP_PROPERTY}{@code =true}, or the kernel refused {@code MADV_DONTDUMP}
     * (before 3.4).
     */
    public boolean excludedFromCoreDumps() {
        return excludedFromCoreDumps;
    }

    /** The native address of offset 0 (for diagnostics). */
    public long address() {
        return address;
    }

    /** Bytes of address space claimed so far, including the header page. */
    public long claimedBytes() {
        // (3) acquire-load of brk; pairs with the CAS (4).
        return (long) LONG.getAcquire(segment, RegionHeaderLayout.BRK_OFFSET);
    }

    /** Bytes currently committed. */
    public long committedBytes() {
        // (5) opaque load of the counter; pairs with the get-and-adds (6, 7, 8). A statistic only.
        return (long) LONG.getOpaque(segment, RegionHeaderLayout.COMMITTED_OFFSET);
    }

    /**
     * Claims {@code bytes} of never-before-used address space aligned to {@code alignment}. Claimed
     * space is never returned to the bump pointer; owners recycle it themselves. Lock-free.
     *
     * @return the offset of the claimed range
     * @throws IllegalArgumentException if {@code bytes} is not positive or {@code alignment} is not a
     *                                  positive power of two
     * @throws OffHeapOutOfMemoryError  if the region's address space is used up
     */
    public long claim(final long bytes, final long alignment) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("claim size must be positive, was " + bytes);
        }
        if (alignment <= 0 || Long.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("claim alignment must be a power of two, was " + alignment);
        }
        final MemorySegment segment = this.segment;
        for (;;) {
            // (2) volatile load of brk; pairs with the CAS (4) of other claimers.
            final long brk = (long) LONG.getVolatile(segment, RegionHeaderLayout.BRK_OFFSET);
            final long start = (brk + alignment - 1) & -alignment;
            final long end = start + bytes;
            if (start < brk || end < start || end > size) {
                throw new OffHeapOutOfMemoryError(String.format(Locale.ROOT,
                        "off-heap region exhausted: claiming %s (aligned to %d) with %s of %s already claimed; "
                                + "raise -D%s (now %s)",
                        bytes(bytes), alignment, bytes(brk), bytes(size), SIZE_PROPERTY, bytes(size)));
            }
            // (4) CAS of brk; pairs with loads (2, 3). Success hands [start, end) to this caller alone.
            if ((boolean) LONG.compareAndSet(segment, RegionHeaderLayout.BRK_OFFSET, brk, end)) {
                return start;
            }
        }
    }

    /**
     * Charges {@code [offset, offset + bytes)} against the commit limit. The kernel backs each page
     * on first touch.
     *
     * @throws IllegalArgumentException if the range is not page-aligned or not inside claimed space
     * @throws OffHeapOutOfMemoryError  if committing would pass the commit limit
     */
    public void commit(final long offset, final long bytes) {
        checkPageRange("commit", offset, bytes);
        // (6) get-and-add of the committed counter; pairs with the load (5).
        final long after = (long) LONG.getAndAdd(segment, RegionHeaderLayout.COMMITTED_OFFSET, bytes) + bytes;
        if (after > commitLimit) {
            // (7) get-and-add undoing (6).
            final long unused = (long) LONG.getAndAdd(segment, RegionHeaderLayout.COMMITTED_OFFSET, -bytes);
            throw new OffHeapOutOfMemoryError(String.format(Locale.ROOT,
                    "off-heap commit limit reached: committing %s more would make %s of a %s limit; raise -D%s",
                    bytes(bytes), bytes(after), bytes(commitLimit), COMMIT_LIMIT_PROPERTY));
        }
    }

    /**
     * Returns the pages of {@code [offset, offset + bytes)} to the OS and releases their charge. The
     * range stays mapped and reads as zeros.
     *
     * @throws IllegalArgumentException if the range is not page-aligned or not inside claimed space
     * @throws IllegalStateException    if fewer bytes than {@code bytes} are committed, so the range
     *                                  cannot be committed (decommitted twice, or never committed);
     *                                  nothing is returned then. A range that is not committed while
     *                                  enough others are goes unnoticed (the region keeps no
     *                                  per-page record; callers pair commits and decommits)
     */
    public void decommit(final long offset, final long bytes) {
        checkPageRange("decommit", offset, bytes);
        // (5) opaque load of the counter. A committed range counts in it until its own (8), so a
        // caller that pairs commits and decommits always finds at least its bytes.
        final long committed = committedBytes();
        if (bytes > committed) {
            throw new IllegalStateException(String.format(Locale.ROOT,
                    "cannot decommit %s at offset %d: only %s is committed in all, so this range is not "
                            + "(decommitted twice, or never committed)", bytes(bytes), offset, bytes(committed)));
        }
        if (mapped) {
            Native.madvise(address + offset, bytes, Native.MADV_DONTNEED);
        } else {
            segment.asSlice(offset, bytes).fill((byte) 0);
        }
        // (8) get-and-add of the committed counter; pairs with the load (5).
        final long unused = (long) LONG.getAndAdd(segment, RegionHeaderLayout.COMMITTED_OFFSET, -bytes);
    }

    /**
     * Releases the region: the segment becomes unusable (accesses throw
     * {@link IllegalStateException}), then the address space is unmapped.
     *
     * @throws IllegalStateException for the global region, which lives as long as the process
     */
    @Override
    public void close() {
        if (global) {
            throw new IllegalStateException("the global region cannot be released; it lives as long as the JVM");
        }
        arena.close();
        if (mapped) {
            Native.munmap(address, size);
        }
    }

    private void checkPageRange(final String what, final long offset, final long bytes) {
        if (bytes <= 0 || ((offset | bytes) & (pageSize - 1)) != 0) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "%s range must be whole pages of %d bytes: offset %d, %d bytes", what, pageSize, offset, bytes));
        }
        if (offset < pageSize || offset + bytes > claimedBytes() || offset + bytes < offset) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "%s range [%d, %d) is outside the claimed part of the region [%d, %d)",
                    what, offset, offset + bytes, pageSize, claimedBytes()));
        }
    }

    @Override
    public String toString() {
        if (!segment.scope().isAlive()) {
            return String.format(Locale.ROOT, "Region[%s reserved, closed]", bytes(size));
        }
        return String.format(Locale.ROOT, "Region[%s reserved, %s claimed, %s committed%s]",
                bytes(size), bytes(claimedBytes()), bytes(committedBytes()), mapped ? "" : ", arena fallback");
    }

    /** Parses a byte count such as {@code 4096}, {@code 512m} or {@code 64g}. */
    public static long parseBytes(final String text) {
        final String t = text.trim().toLowerCase(Locale.ROOT);
        if (t.isEmpty()) {
            throw new IllegalArgumentException("empty byte count");
        }
        final int shift = switch (t.charAt(t.length() - 1)) {
            case 'k' -> 10;
            case 'm' -> 20;
            case 'g' -> 30;
            case 't' -> 40;
            default -> 0;
        };
        final long n = Long.parseLong(shift == 0 ? t : t.substring(0, t.length() - 1));
        if (n < 0 || n > (Long.MAX_VALUE >> shift)) {
            throw new IllegalArgumentException("byte count out of range: " + text);
        }
        return n << shift;
    }

    static String bytes(final long n) {
        if (n >= (1L << 30) && n % (1L << 30) == 0) {
            return (n >> 30) + " GiB";
        }
        if (n >= (1L << 20)) {
            return String.format(Locale.ROOT, "%.1f MiB", n / (double) (1L << 20));
        }
        return n + " B";
    }

    /**
     * The byte count that {@code value}, the value of system property {@code name}, gives, or
     * {@code fallback} if the property is unset.
     *
     * @throws IllegalArgumentException naming the property and the value, if it is not a byte count
     */
    static long property(final String name, final String value, final long fallback) {
        if (value == null) {
            return fallback;
        }
        try {
            return parseBytes(value);
        } catch (final IllegalArgumentException e) { // NumberFormatException included
            throw new IllegalArgumentException("-D" + name + "=" + value + " is not a byte count (e.g. 64g): "
                    + e.getMessage(), e);
        }
    }

    /** Leaves {@code [address, address + bytes)} out of core dumps; false if the kernel refused. */
    private static boolean excludeFromCoreDumps(final long address, final long bytes) {
        try {
            Native.madvise(address, bytes, Native.MADV_DONTDUMP);
            return true;
        } catch (final NativeCallException e) {
            return false; // a kernel before 3.4: the region stays in core dumps, and works as ever
        }
    }

    /**
     * The message of a refused reservation of {@code bytes}: the mmap error, which limit refused
     * it ({@code addressSpaceLimit}, the RLIMIT_AS soft limit or {@link Long#MAX_VALUE} for none;
     * {@code overcommitMode}, the content of {@code vm.overcommit_memory} or null if unknown), and
     * what to do: lower {@value #SIZE_PROPERTY}, or raise the limit.
     */
    static String reservationFailure(final long bytes, final String error, final long addressSpaceLimit,
                                     final String overcommitMode) {
        final StringBuilder b = new StringBuilder(String.format(Locale.ROOT,
                "cannot reserve %s of address space for the off-heap region: %s. ", bytes(bytes), error));
        final boolean strict = "2".equals(overcommitMode);
        if (addressSpaceLimit != Long.MAX_VALUE) {
            b.append(String.format(Locale.ROOT, "The process's address-space limit (RLIMIT_AS, ulimit -v) is %s, "
                    + "and the JVM itself uses part of it. ", bytes(addressSpaceLimit)));
        }
        if (strict) {
            b.append("The kernel accounts every mapping strictly (vm.overcommit_memory=2), MAP_NORESERVE included, "
                    + "against its CommitLimit (/proc/meminfo). ");
        }
        if (addressSpaceLimit == Long.MAX_VALUE && !strict) {
            b.append("No address-space limit (RLIMIT_AS) and no strict overcommit (vm.overcommit_memory=")
                    .append(overcommitMode == null ? "unknown" : overcommitMode)
                    .append(") is in force, so the address space itself is used up. ");
        }
        b.append("Lower -D").append(SIZE_PROPERTY);
        if (addressSpaceLimit != Long.MAX_VALUE) {
            final long fits = Math.max(64L << 20, Long.highestOneBit(addressSpaceLimit / 4)) & -(1L << 20);
            b.append(String.format(Locale.ROOT, " (for example -D%s=%s)", SIZE_PROPERTY, propertyValue(fits)));
        }
        b.append(addressSpaceLimit != Long.MAX_VALUE ? ", or raise the limit (ulimit -v unlimited)"
                : strict ? ", or allow overcommit (sysctl vm.overcommit_memory=0)" : "");
        return b.toString();
    }

    /** {@code n} bytes, a whole number of MiB, as a value of a byte-count property: {@code 2g}, {@code 512m}. */
    private static String propertyValue(final long n) {
        return n % (1L << 30) == 0 ? (n >> 30) + "g" : (n >> 20) + "m";
    }

    /** The content of {@code vm.overcommit_memory} at {@code file}, trimmed, or null if it cannot be read. */
    static String overcommitMode(final Path file) {
        try {
            return Files.readString(file).trim();
        } catch (final IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * The memory limit of this process's cgroup, or {@link Long#MAX_VALUE} if it has none: the
     * lowest {@code memory.max} (cgroup v2) or {@code memory.limit_in_bytes} (v1) from the
     * process's cgroup up to the root of its hierarchy. The process's cgroups are the lines of
     * {@code procSelfCgroup} ({@code /proc/self/cgroup}: {@code 0::/path} for v2,
     * {@code N:memory,...:/path} for v1's memory controller), under {@code mountRoot}
     * ({@code /sys/fs/cgroup}; v1's memory hierarchy at {@code memory/} below it). Walking up from
     * the process's path finds a container's own limit too when its cgroup is mounted as the root
     * of the hierarchy. Files that are missing or unreadable, values of {@code max} and v1's
     * "unlimited" (2^63 rounded down to a page) are no limit; so is a value that is not a number.
     */
    static long cgroupMemoryLimit(final Path procSelfCgroup, final Path mountRoot) {
        final List<String> lines;
        try {
            lines = Files.readAllLines(procSelfCgroup);
        } catch (final IOException | RuntimeException e) {
            return Long.MAX_VALUE;
        }
        long limit = Long.MAX_VALUE;
        for (final String line : lines) {
            final String[] fields = line.split(":", 3);
            if (fields.length < 3 || !fields[2].startsWith("/")) {
                continue;
            }
            final Path hierarchy;
            final String file;
            if (fields[0].equals("0") && fields[1].isEmpty()) {
                hierarchy = mountRoot;
                file = "memory.max";
            } else if (Arrays.asList(fields[1].split(",")).contains("memory")) {
                hierarchy = mountRoot.resolve("memory");
                file = "memory.limit_in_bytes";
            } else {
                continue;
            }
            final Path own = hierarchy.resolve(fields[2].substring(1)).normalize();
            if (!own.startsWith(hierarchy)) {
                continue; // a path with "..": not a cgroup of this hierarchy
            }
            for (Path dir = own; dir != null && dir.startsWith(hierarchy); dir = dir.getParent()) {
                limit = Math.min(limit, cgroupLimitIn(dir.resolve(file)));
            }
        }
        return limit;
    }

    /** The limit in one cgroup file; {@link Long#MAX_VALUE} for none (see {@link #cgroupMemoryLimit}). */
    private static long cgroupLimitIn(final Path file) {
        final String value;
        try {
            value = Files.readString(file).trim();
        } catch (final IOException | RuntimeException e) {
            return Long.MAX_VALUE;
        }
        try {
            final long n = Long.parseLong(value);
            return n <= 0 || n >= (1L << 62) ? Long.MAX_VALUE : n;
        } catch (final NumberFormatException e) {
            return Long.MAX_VALUE; // "max", or not a number: no limit
        }
    }

    /** The default commit limit: physical memory, or the cgroup's memory limit where that is lower. */
    static long defaultCommitLimit() {
        return Math.min(Native.physicalMemory(),
                cgroupMemoryLimit(Path.of("/proc/self/cgroup"), Path.of("/sys/fs/cgroup")));
    }

    /**
     * The flag that {@code value}, the value of system property {@code name}, gives, or
     * {@code fallback} if the property is unset.
     *
     * @throws IllegalArgumentException naming the property and the value, if it is not
     *                                  {@code true} or {@code false}
     */
    static boolean flag(final String name, final String value, final boolean fallback) {
        if (value == null) {
            return fallback;
        }
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException("-D" + name + "=" + value + " is not true or false");
        };
    }

    private static final class Global {
        static final Region REGION = new Region(
                property(SIZE_PROPERTY, System.getProperty(SIZE_PROPERTY),
                        Native.AVAILABLE ? DEFAULT_SIZE : FALLBACK_DEFAULT_SIZE),
                property(COMMIT_LIMIT_PROPERTY, System.getProperty(COMMIT_LIMIT_PROPERTY), defaultCommitLimit()),
                true, flag(CORE_DUMP_PROPERTY, System.getProperty(CORE_DUMP_PROPERTY), false));
    }
}
