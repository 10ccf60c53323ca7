package dev.limbo.core;

import static dev.limbo.core.testing.Misuse.rejects;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.limbo.core.internal.Native;
import dev.limbo.core.testing.ForkedJvm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Start-up of a region says what to do when it fails (the limit that refused the reservation, and
 * the property to lower), the default commit limit heeds the cgroup's memory limit (v1 and v2), and
 * regions stay out of core dumps unless asked.
 */
class RegionStartupTest {

    private static final long PAGE = Native.pageSize();

    @TempDir
    Path dir;

    private Path write(final String relative, final String content) throws IOException {
        final Path file = dir.resolve(relative);
        Files.createDirectories(file.getParent());
        Files.writeString(file, content);
        return file;
    }

    private long limit() {
        return Region.cgroupMemoryLimit(dir.resolve("proc/self/cgroup"), dir.resolve("sys/fs/cgroup"));
    }

    // ---------------------------------------------------------------- cgroup memory limit

    @Test
    void cgroupV2LimitIsTheLowestMemoryMaxOnThePathToTheRoot() throws IOException {
        write("proc/self/cgroup", "0::/user.slice/app.scope\n");
        write("sys/fs/cgroup/user.slice/memory.max", "max\n");
        write("sys/fs/cgroup/user.slice/app.scope/memory.max", "536870912\n");
        assertEquals(512L << 20, limit());
        write("sys/fs/cgroup/user.slice/memory.max", "268435456\n"); // the parent's limit binds too
        assertEquals(256L << 20, limit());
    }

    @Test
    void cgroupV2WithoutALimitGivesNone() throws IOException {
        write("proc/self/cgroup", "0::/\n");
        assertEquals(Long.MAX_VALUE, limit()); // the root cgroup has no memory.max
        write("sys/fs/cgroup/memory.max", "max\n");
        assertEquals(Long.MAX_VALUE, limit());
    }

    @Test
    void cgroupV1LimitIsReadFromTheMemoryControllersHierarchy() throws IOException {
        write("proc/self/cgroup", "5:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n");
        write("sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", "1073741824\n");
        write("sys/fs/cgroup/cpu,cpuacct/docker/abc/memory.limit_in_bytes", "4096\n"); // not the memory controller
        assertEquals(1L << 30, limit());
        write("sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", "9223372036854771712\n"); // v1's unlimited
        assertEquals(Long.MAX_VALUE, limit());
    }

    @Test
    void cgroupV1InAContainerFindsTheLimitMountedAtTheRoot() throws IOException {
        // Without a cgroup namespace the path is the host's, absent inside the container, whose own
        // cgroup is mounted as the hierarchy's root.
        write("proc/self/cgroup", "4:memory:/kubepods/pod1/abc\n");
        write("sys/fs/cgroup/memory/memory.limit_in_bytes", "2147483648\n");
        assertEquals(2L << 30, limit());
    }

    @Test
    void hybridHierarchiesGiveTheLowerLimit() throws IOException {
        write("proc/self/cgroup", "4:memory:/a\n0::/b\n");
        write("sys/fs/cgroup/memory/a/memory.limit_in_bytes", "1073741824\n");
        write("sys/fs/cgroup/b/memory.max", "805306368\n");
        assertEquals(768L << 20, limit());
    }

    @Test
    void unreadableOrMalformedCgroupFilesAreNoLimit() throws IOException {
        assertEquals(Long.MAX_VALUE, limit()); // no /proc/self/cgroup
        write("proc/self/cgroup", "garbage\n0::relative\n1:memory:/../../etc\n0::/x\n");
        write("sys/fs/cgroup/x/memory.max", "lots\n");
        write("etc/memory.limit_in_bytes", "4096\n"); // outside the hierarchy: never read
        assertEquals(Long.MAX_VALUE, limit());
    }

    @Test
    void theDefaultCommitLimitIsAtMostPhysicalMemory() {
        assertTrue(Region.defaultCommitLimit() <= Native.physicalMemory());
        assertTrue(Region.defaultCommitLimit() > 0);
    }

    // ---------------------------------------------------------------- reservation failures

    @Test
    void aReservationRefusedUnderAnAddressSpaceLimitNamesTheLimitAndTheSizeProperty() {
        final String m = Region.reservationFailure(64L << 30, "mmap(...) failed: ENOMEM: Cannot allocate memory",
                4L << 30, "0");
        for (final String word : List.of("64 GiB", "ENOMEM", "RLIMIT_AS", "ulimit -v", "4 GiB",
                "-D" + Region.SIZE_PROPERTY, "-D" + Region.SIZE_PROPERTY + "=1g")) {
            assertTrue(m.contains(word), () -> "no \"" + word + "\" in: " + m);
        }
        assertFalse(m.contains("overcommit_memory=2"), m);
    }

    @Test
    void aReservationRefusedUnderStrictOvercommitNamesTheSysctlAndTheSizeProperty() {
        final String m = Region.reservationFailure(64L << 30, "ENOMEM", Long.MAX_VALUE, "2");
        for (final String word : List.of("vm.overcommit_memory=2", "CommitLimit", "-D" + Region.SIZE_PROPERTY,
                "vm.overcommit_memory=0")) {
            assertTrue(m.contains(word), () -> "no \"" + word + "\" in: " + m);
        }
        assertFalse(m.contains("RLIMIT_AS) is"), m);
    }

    @Test
    void aReservationRefusedWithoutEitherLimitSaysTheAddressSpaceRanOut() {
        final String m = Region.reservationFailure(1L << 60, "ENOMEM", Long.MAX_VALUE, "0");
        assertTrue(m.contains("address space itself"), m);
        assertTrue(m.contains("-D" + Region.SIZE_PROPERTY), m);
    }

    @Test
    void theOvercommitModeIsReadTrimmedOrNullWhenUnreadable() throws IOException {
        assertEquals("2", Region.overcommitMode(write("overcommit_memory", "2\n")));
        assertEquals(null, Region.overcommitMode(dir.resolve("missing")));
    }

    @Test
    void theGlobalRegionUnderATooSmallAddressSpaceLimitThrowsAnErrorThatSaysWhatToDo() throws Exception {
        // 4 GiB of address space is enough for a small JVM, and far too little for the 64 GiB region.
        final ForkedJvm.Result r = ForkedJvm.run("export MALLOC_ARENA_MAX=2; ulimit -v 4194304",
                List.of("-Xmx64m", "-XX:ReservedCodeCacheSize=32m", "-XX:CompressedClassSpaceSize=64m",
                        "-XX:+UseSerialGC", "-Xss1m", "-XX:TieredStopAtLevel=1"),
                ReserveUnderLimitMain.class, 60);
        assertEquals(0, r.exitCode(), () -> "forked JVM:\n" + r.output());
        final String first = r.output().lines().filter(l -> l.startsWith("FIRST: ")).findFirst()
                .orElseThrow(() -> new AssertionError("no FIRST line:\n" + r.output()));
        assertTrue(first.contains(OffHeapOutOfMemoryError.class.getName()), first);
        for (final String word : List.of("RLIMIT_AS", "ulimit -v", "4 GiB", "-D" + Region.SIZE_PROPERTY + "=1g")) {
            assertTrue(first.contains(word), () -> "no \"" + word + "\" in: " + first);
        }
        assertFalse(first.contains("ExceptionInInitializerError"), first);
        // A later access fails with NoClassDefFoundError (the JVM does not run a failed class
        // initializer again); its cause still carries the message.
        final String second = r.output().lines().filter(l -> l.startsWith("SECOND: ")).findFirst()
                .orElseThrow(() -> new AssertionError("no SECOND line:\n" + r.output()));
        assertTrue(second.contains("-D" + Region.SIZE_PROPERTY), second);
    }

    // ---------------------------------------------------------------- core dumps

    /** The VmFlags of the mapping that starts at {@code address}, from /proc/self/smaps. */
    private static String vmFlags(final long address) throws IOException {
        final List<String> lines = Files.readAllLines(Path.of("/proc/self/smaps"));
        final String start = Long.toHexString(address) + "-";
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith(start)) {
                for (int j = i + 1; j < lines.size(); j++) {
                    if (lines.get(j).startsWith("VmFlags:")) {
                        return lines.get(j);
                    }
                }
            }
        }
        throw new AssertionError("no mapping at 0x" + Long.toHexString(address) + " in /proc/self/smaps");
    }

    @Test
    void regionsStayOutOfCoreDumpsUnlessAsked() throws IOException {
        try (Region excluded = Region.reserve(16 * PAGE, 4 * PAGE);
             Region included = Region.reserve(16 * PAGE, 4 * PAGE, true)) {
            assertTrue(excluded.excludedFromCoreDumps());
            assertTrue(vmFlags(excluded.address()).contains(" dd"), vmFlags(excluded.address()));
            assertFalse(included.excludedFromCoreDumps());
            assertFalse(vmFlags(included.address()).contains(" dd"), vmFlags(included.address()));
        }
        assertTrue(Region.global().excludedFromCoreDumps(), "the global region, by default");
    }

    @Test
    void aCoreDumpPropertyThatIsNotAFlagIsRejectedNamingIt() {
        rejects(IllegalArgumentException.class, () -> Region.flag(Region.CORE_DUMP_PROPERTY, "maybe", false),
                Region.CORE_DUMP_PROPERTY, "maybe", "true or false");
        assertTrue(Region.flag(Region.CORE_DUMP_PROPERTY, " TRUE ", false));
        assertFalse(Region.flag(Region.CORE_DUMP_PROPERTY, null, false));
    }
}
