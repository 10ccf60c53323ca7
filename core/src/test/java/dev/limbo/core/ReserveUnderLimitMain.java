package dev.limbo.core;

/**
 * Run in a forked JVM by {@link RegionStartupTest} under an address-space limit too small for the
 * default region: touches the global region twice and prints what each attempt threw (and its
 * cause), on lines starting with {@code FIRST: } and {@code SECOND: }. Exits 0, or 2 if the region was reserved.
 */
public final class ReserveUnderLimitMain {

    private ReserveUnderLimitMain() {
    }

    public static void main(final String[] args) {
        for (final String attempt : new String[] {"FIRST: ", "SECOND: "}) {
            try {
                System.out.println("reserved " + Words.SEGMENT.byteSize() + " bytes");
                System.exit(2);
            } catch (final Throwable e) {
                System.out.println(attempt + e + (e.getCause() == null ? "" : " <- " + e.getCause()));
            }
        }
        System.exit(0);
    }
}
