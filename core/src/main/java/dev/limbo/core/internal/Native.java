package dev.limbo.core.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Locale;

/**
 * Every native call Limbo makes, as hand-written {@link Linker} downcall handles (jextract is not
 * part of our build).
 *
 * <p>The memory-management calls ({@code mmap}, {@code munmap}, {@code madvise}) capture
 * {@code errno} and turn a failure into an exception whose message carries the call, its
 * arguments, the errno value, its name and {@code strerror}'s text, as does {@code membarrier}
 * (through {@code syscall}, the heavy side of the epoch schemes' asymmetric fence). {@code sysconf} and
 * {@code getrlimit} read the page size, physical memory and the address-space limit. {@code malloc}/{@code free}
 * exist only as a benchmark baseline; they pass pointers as {@code long} and are linked as
 * {@linkplain Linker.Option#critical(boolean) critical} so the baseline pays no thread-state
 * transition, which is the fairest comparison we can give it.
 *
 * <p>All constants are the Linux values (x86-64 and AArch64 agree on every one used here, except
 * the membarrier system call number, chosen by {@code os.arch}).
 * {@link #AVAILABLE} is false elsewhere, and callers fall back to {@link Arena}-allocated memory.
 */
public final class Native {

    /** True when the platform is Linux and the calls below are linked. */
    public static final boolean AVAILABLE =
            System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux");

    public static final int PROT_READ = 1;
    public static final int PROT_WRITE = 2;
    public static final int MAP_PRIVATE = 0x02;
    public static final int MAP_ANONYMOUS = 0x20;
    public static final int MAP_NORESERVE = 0x4000;
    public static final int MADV_DONTNEED = 4;
    /** madvise(2): leave the range out of core dumps (Linux 3.4+). */
    public static final int MADV_DONTDUMP = 16;
    /** getrlimit(2) resource: the process's address-space limit ({@code ulimit -v}). */
    private static final int RLIMIT_AS = 9;
    /** rlim_t's "no limit". */
    private static final long RLIM_INFINITY = -1L;
    /** membarrier(2) commands. */
    private static final int MEMBARRIER_CMD_QUERY = 0;
    private static final int MEMBARRIER_CMD_PRIVATE_EXPEDITED = 1 << 3;
    private static final int MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED = 1 << 4;
    private static final int SC_PAGESIZE = 30;
    private static final int SC_PHYS_PAGES = 85;
    private static final long MAP_FAILED = -1L;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO =
            CAPTURE_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    private static final MethodHandle MMAP;
    private static final MethodHandle MUNMAP;
    private static final MethodHandle MADVISE;
    private static final MethodHandle SYSCONF;
    private static final MethodHandle STRERROR;
    private static final MethodHandle MALLOC;
    private static final MethodHandle FREE;
    private static final MethodHandle SYSCALL;
    /** {@link #SYSCALL} without errno capture: no capture segment, so no allocation per call. */
    private static final MethodHandle SYSCALL_NO_ERRNO;
    private static final MethodHandle GETRLIMIT;
    /** The membarrier system call number of this architecture, or -1 where unknown. */
    private static final long SYS_MEMBARRIER = switch (System.getProperty("os.arch", "")) {
        case "amd64", "x86_64" -> 324L;
        case "aarch64" -> 283L;
        default -> -1L;
    };

    static {
        if (AVAILABLE) {
            final SymbolLookup libc = LINKER.defaultLookup();
            final Linker.Option errno = Linker.Option.captureCallState("errno");
            final Linker.Option critical = Linker.Option.critical(false);
            final ValueLayout.OfLong pointer = ValueLayout.JAVA_LONG; // 64-bit ABIs only
            MMAP = LINKER.downcallHandle(libc.find("mmap").orElseThrow(),
                    FunctionDescriptor.of(pointer, pointer, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT,
                            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG), errno);
            MUNMAP = LINKER.downcallHandle(libc.find("munmap").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, pointer, ValueLayout.JAVA_LONG), errno);
            MADVISE = LINKER.downcallHandle(libc.find("madvise").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, pointer, ValueLayout.JAVA_LONG,
                            ValueLayout.JAVA_INT), errno);
            SYSCONF = LINKER.downcallHandle(libc.find("sysconf").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
            STRERROR = LINKER.downcallHandle(libc.find("strerror").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
            MALLOC = LINKER.downcallHandle(libc.find("malloc").orElseThrow(),
                    FunctionDescriptor.of(pointer, ValueLayout.JAVA_LONG), critical);
            FREE = LINKER.downcallHandle(libc.find("free").orElseThrow(),
                    FunctionDescriptor.ofVoid(pointer), critical);
            SYSCALL = LINKER.downcallHandle(libc.find("syscall").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT,
                            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT), errno, Linker.Option.firstVariadicArg(1));
            SYSCALL_NO_ERRNO = LINKER.downcallHandle(libc.find("syscall").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT,
                            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT), Linker.Option.firstVariadicArg(1));
            GETRLIMIT = LINKER.downcallHandle(libc.find("getrlimit").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
        } else {
            MMAP = MUNMAP = MADVISE = SYSCONF = STRERROR = MALLOC = FREE = GETRLIMIT = null;
            SYSCALL = SYSCALL_NO_ERRNO = null;
        }
    }

    /**
     * True when {@link #membarrier()} works: Linux on x86-64 or AArch64 with a kernel (4.14+) that
     * supports {@code MEMBARRIER_CMD_PRIVATE_EXPEDITED}, and this process registered for it.
     */
    public static final boolean MEMBARRIER = registerMembarrier();

    private Native() {
    }

    /**
     * {@code mmap(NULL, bytes, prot, flags, -1, 0)} of anonymous memory.
     *
     * @return the address of the mapping
     * @throws NativeCallException with errno when the kernel refuses
     */
    public static long mmapAnonymous(final long bytes, final int prot, final int flags) {
        requireAvailable();
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment state = arena.allocate(CAPTURE_LAYOUT);
            final long address = (long) MMAP.invokeExact(state, 0L, bytes, prot, flags | MAP_ANONYMOUS, -1, 0L);
            if (address == MAP_FAILED) {
                throw failure(String.format("mmap(NULL, %d, 0x%x, 0x%x, -1, 0)", bytes, prot, flags | MAP_ANONYMOUS),
                        errno(state));
            }
            return address;
        } catch (final NativeCallException e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException("mmap downcall failed", t);
        }
    }

    /** {@code munmap(address, bytes)}. */
    public static void munmap(final long address, final long bytes) {
        requireAvailable();
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment state = arena.allocate(CAPTURE_LAYOUT);
            if ((int) MUNMAP.invokeExact(state, address, bytes) != 0) {
                throw failure(String.format("munmap(0x%x, %d)", address, bytes), errno(state));
            }
        } catch (final NativeCallException e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException("munmap downcall failed", t);
        }
    }

    /** {@code madvise(address, bytes, advice)}. */
    public static void madvise(final long address, final long bytes, final int advice) {
        requireAvailable();
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment state = arena.allocate(CAPTURE_LAYOUT);
            if ((int) MADVISE.invokeExact(state, address, bytes, advice) != 0) {
                throw failure(String.format("madvise(0x%x, %d, %d)", address, bytes, advice), errno(state));
            }
        } catch (final NativeCallException e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException("madvise downcall failed", t);
        }
    }

    /** The OS page size, {@code sysconf(_SC_PAGESIZE)}; 4096 where native calls are unavailable. */
    public static long pageSize() {
        return AVAILABLE ? sysconf(SC_PAGESIZE) : 4096L;
    }

    /** Physical memory in bytes, or {@link Long#MAX_VALUE} where it cannot be read. */
    public static long physicalMemory() {
        if (!AVAILABLE) {
            return Long.MAX_VALUE;
        }
        final long pages = sysconf(SC_PHYS_PAGES);
        return pages <= 0 ? Long.MAX_VALUE : pages * pageSize();
    }

    /**
     * The soft address-space limit of this process ({@code getrlimit(RLIMIT_AS)}, what
     * {@code ulimit -v} sets) in bytes, or {@link Long#MAX_VALUE} if there is none or it cannot be
     * read.
     */
    public static long addressSpaceLimit() {
        if (!AVAILABLE) {
            return Long.MAX_VALUE;
        }
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment rlimit = arena.allocate(2 * Long.BYTES, Long.BYTES); // {rlim_cur, rlim_max}
            if ((int) GETRLIMIT.invokeExact(RLIMIT_AS, rlimit) != 0) {
                return Long.MAX_VALUE;
            }
            final long current = rlimit.get(ValueLayout.JAVA_LONG, 0);
            return current == RLIM_INFINITY || current < 0 ? Long.MAX_VALUE : current;
        } catch (final Throwable t) {
            throw new IllegalStateException("getrlimit downcall failed", t);
        }
    }

    private static long sysconf(final int name) {
        try {
            return (long) SYSCONF.invokeExact(name);
        } catch (final Throwable t) {
            throw new IllegalStateException("sysconf downcall failed", t);
        }
    }

    /** glibc {@code malloc}; a benchmark baseline. Returns 0 on failure. */
    public static long malloc(final long bytes) {
        try {
            return (long) MALLOC.invokeExact(bytes);
        } catch (final Throwable t) {
            throw new IllegalStateException("malloc downcall failed", t);
        }
    }

    /** glibc {@code free}; a benchmark baseline. */
    public static void free(final long address) {
        try {
            FREE.invokeExact(address);
        } catch (final Throwable t) {
            throw new IllegalStateException("free downcall failed", t);
        }
    }

    /**
     * {@code membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0)}: when it returns, every thread of
     * this process that was running has executed a full memory barrier, and every other thread will
     * pass a context switch (itself a full barrier) before it runs again. This is the heavy side of
     * an asymmetric Dekker fence: the frequent side then needs only program order.
     *
     * @throws IllegalStateException    if {@link #MEMBARRIER} is false
     * @throws NativeCallException with errno when the kernel refuses
     */
    public static void membarrier() {
        if (!MEMBARRIER) {
            throw new IllegalStateException("membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) is not available on "
                    + System.getProperty("os.name") + "/" + System.getProperty("os.arch"));
        }
        final long result = membarrierCall(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
        if (result < 0) {
            throw failure("membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0)", (int) -result);
        }
    }

    private static boolean registerMembarrier() {
        if (!AVAILABLE || SYS_MEMBARRIER < 0) {
            return false;
        }
        try {
            final long supported = membarrierCall(MEMBARRIER_CMD_QUERY);
            final int needed = MEMBARRIER_CMD_PRIVATE_EXPEDITED | MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED;
            return supported >= 0 && (supported & needed) == needed
                    && membarrierCall(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
        } catch (final IllegalStateException unlinked) {
            return false; // the probe must not take mmap and madvise down with it
        }
    }

    /**
     * The raw call: its result, or -errno on failure. The epoch schemes' heavy barrier calls it on
     * their hot path, so it first calls without errno capture (no arena, no capture segment: no
     * heap allocation); only a failed call (-1) is repeated with capture to read errno. Every
     * membarrier command used here is idempotent, and a failure is deterministic (an unsupported
     * or unregistered command), so the repeat fails the same way.
     */
    private static long membarrierCall(final int cmd) {
        final long fast;
        try {
            fast = (long) SYSCALL_NO_ERRNO.invokeExact(SYS_MEMBARRIER, cmd, 0, 0);
        } catch (final Throwable t) {
            throw new IllegalStateException("membarrier downcall failed", t);
        }
        if (fast != -1) {
            return fast;
        }
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment state = arena.allocate(CAPTURE_LAYOUT);
            final long result = (long) SYSCALL.invokeExact(state, SYS_MEMBARRIER, cmd, 0, 0);
            return result == -1 ? -errno(state) : result;
        } catch (final Throwable t) {
            throw new IllegalStateException("membarrier downcall failed", t);
        }
    }

    private static int errno(final MemorySegment state) {
        return (int) ERRNO.get(state, 0L);
    }

    static NativeCallException failure(final String call, final int errno) {
        return new NativeCallException(call, errno, describe(errno));
    }

    /** "ENOMEM: Cannot allocate memory", from {@code strerror} plus a name for common codes. */
    static String describe(final int errno) {
        final String name = switch (errno) {
            case 1 -> "EPERM";
            case 9 -> "EBADF";
            case 11 -> "EAGAIN";
            case 12 -> "ENOMEM";
            case 13 -> "EACCES";
            case 22 -> "EINVAL";
            default -> "errno " + errno;
        };
        try {
            final MemorySegment text = (MemorySegment) STRERROR.invokeExact(errno);
            return name + ": " + text.reinterpret(256).getString(0);
        } catch (final Throwable t) {
            return name;
        }
    }

    private static void requireAvailable() {
        if (!AVAILABLE) {
            throw new IllegalStateException("native memory calls are only linked on Linux (os.name="
                    + System.getProperty("os.name") + ")");
        }
    }
}
