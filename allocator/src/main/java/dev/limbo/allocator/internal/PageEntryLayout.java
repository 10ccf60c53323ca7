package dev.limbo.allocator.internal;

import dev.limbo.core.Layouts;

import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * One entry of the {@link PageMap}: what the allocator knows about one page (one superblock-sized
 * unit of the region). Entries are out of band, so reading a neighbour's header or footer never
 * touches memory the allocator does not manage (thesis §7.4).
 *
 * <pre>
 *  0 owner(8)   who owns the page's blocks: kind:2 | allocator:16 | sizeClass:8 | descriptor:32
 *               (see {@link PageMap}); release-stored before any block escapes, acquire-loaded by free
 *  8 header(8)  pages in the run that starts here (best-fit map header, thesis Listing 7.1)
 * 16 footer(8)  first page of the run that ends here (best-fit map footer)
 * 24 flags(8)   COMMITTED | DIRTY, written only by the page's current owner
 * </pre>
 */
public final class PageEntryLayout {

    public static final StructLayout LAYOUT = Layouts.padded("PageEntry", 32,
            ValueLayout.JAVA_LONG.withName("owner"),
            ValueLayout.JAVA_LONG.withName("header"),
            ValueLayout.JAVA_LONG.withName("footer"),
            ValueLayout.JAVA_LONG.withName("flags"));

    public static final long SIZE = LAYOUT.byteSize();
    public static final long OWNER = Layouts.offsetOf(LAYOUT, "owner");
    public static final long HEADER = Layouts.offsetOf(LAYOUT, "header");
    public static final long FOOTER = Layouts.offsetOf(LAYOUT, "footer");
    public static final long FLAGS = Layouts.offsetOf(LAYOUT, "flags");

    private PageEntryLayout() {
    }
}
