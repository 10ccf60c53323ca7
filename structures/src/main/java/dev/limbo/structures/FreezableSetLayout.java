package dev.limbo.structures;

/**
 * The records of {@link LiuZhangSpearHashMap}: every record has {@link #RECORD_BYTES} bytes and one
 * of three layouts.
 *
 * <pre>
 * Table (the paper's HNode):
 *   0 mask(8)     buckets - 1, immutable (buckets is a power of two)
 *   8 levels(8)   depth of the directory below root, immutable (at least 1)
 *  16 pred(8)     the predecessor table while its buckets are being migrated, else 0
 *  24 root(8)     the directory's top segment; bit 1 (DEAD) once the table is retired
 *  32 gen(8)      generation: its pred's plus one, immutable
 *
 * Segment (the bucket array as a radix tree of records):
 *   0 .. 127      16 words: child segments (level above 0) or bucket words (level 0); the rest unused
 *
 * Bucket word (level-0 segment slot): 0 (not initialized yet), or a chain pointer or EMPTY (4),
 *   with FROZEN (bit 0) and DEAD (bit 1) as marks.
 *
 * Chain record (the paper's FSet node: an immutable set, copied on every update):
 *   0 next(8)     the next record of the bucket's chain, 0 at the end
 *   8 count(8)    pairs in this record, 1..14
 *  16 pairs       up to 14 (key(8), value(8)) pairs
 * </pre>
 */
final class FreezableSetLayout {

    /** The size of every record: with the domain's 8-byte trailer, 256 bytes, an allocator size class. */
    static final long RECORD_BYTES = 248;

    /** Table: buckets - 1. */
    static final long MASK = 0;
    /** Table: directory levels below the root link. */
    static final long LEVELS = 8;
    /** Table: the predecessor table (link). */
    static final long PRED = 16;
    /** Table: the top segment (link). */
    static final long ROOT = 24;
    /** Table: the generation. */
    static final long GEN = 32;

    /** log2 of the words per segment. */
    static final int FANOUT_BITS = 4;
    /** Words per segment. */
    static final int FANOUT = 1 << FANOUT_BITS;

    /** Chain record: the next record (link). */
    static final long NEXT = 0;
    /** Chain record: pairs held. */
    static final long COUNT = 8;
    /** Chain record: offset of the first pair. */
    static final long PAIRS = 16;
    /** Chain record: pairs per record. */
    static final int CAPACITY = (int) ((RECORD_BYTES - PAIRS) / (2 * Long.BYTES));

    private FreezableSetLayout() {
    }
}
