package dev.limbo.structures;

import dev.limbo.core.Words;
import dev.limbo.stress.WordSlots;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.JJJ_Result;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * Node publication in the linked structures: a thread fills a fresh node's fields with plain stores
 * and links it with a volatile CAS of a link word ({@link TreiberStack}'s push (1),
 * {@link HarrisMichaelList}'s insert (4), {@link MichaelScottQueue}'s enqueue (1)); a thread that
 * reads the link with an acquire load (what {@code Guard.protect} does under the epoch schemes) and
 * finds the node then reads its fields with plain loads through the pointer it read, as
 * {@link HarrisMichaelList}'s (3) and {@link TreiberStack}'s (3) do. Seeing the node implies seeing
 * its initialization.
 *
 * <p>A protocol model over region words: each state's node is a fresh {@link WordSlots} slot whose
 * key and value words (at +{@value #KEY} and +{@value #VALUE}, inside the slot's padding) start
 * zeroed; the head word starts empty (0). Result (saw, key, value): saw 1 if the reader found the
 * node (then key and value are what it read), 0 if it found the empty head (then 0, 0).
 *
 * <p>The broken twins drop one side of the edge: {@link BrokenOpaqueLink} links with an opaque store
 * (no release), {@link BrokenPlainRead} reads the head with a plain load (no acquire). x86 keeps
 * stores in order and loads in order (TSO), so the hardware cannot show the uninitialized node; only
 * the JIT compiler could, by moving the plain field accesses across the link access. The reader's
 * field loads depend on the pointer it read, which leaves the compiler little room; on x86 the
 * outcome was not observed in our runs. Arm or POWER hardware may show it for the opaque link.
 * The outcome is marked ACCEPTABLE_INTERESTING there so that the suite does not fail on it.
 */
public final class NodePublicationTest {

    /** Offset of the node's key word within its slot. */
    static final long KEY = 8;
    /** Offset of the node's value word within its slot. */
    static final long VALUE = 16;
    /** The key actor 1 writes. */
    static final long K = 7;
    /** The value actor 1 writes. */
    static final long V = 42;

    private NodePublicationTest() {
    }

    /** A state: a fresh node with zeroed fields, an empty head word. */
    abstract static class Base {
        final long node = WordSlots.word(0);
        final long head = WordSlots.word(0);

        Base() {
            Words.sp(node + KEY, 0); // jcstress publishes the state safely
            Words.sp(node + VALUE, 0);
        }

        /** Initializes the node's fields as push/insert do, with plain stores. */
        final void init() {
            Words.sp(node + KEY, K);
            Words.sp(node + VALUE, V);
        }

        /** Records what a reader that loaded {@code h} from the head sees. */
        final void observe(final long h, final JJJ_Result r) {
            if (h == 0) {
                r.r1 = 0;
                return;
            }
            r.r1 = h == node ? 1 : 9;
            r.r2 = Words.lp(h + KEY); // through the pointer read, as the structures do
            r.r3 = Words.lp(h + VALUE);
        }
    }

    /** As the structures do it: plain initialization, CAS link; acquire load of the head, plain field loads. */
    @JCStressTest
    @Description("sp(n.key); sp(n.value); cas(head, 0, n) || h = la(head); lp(h.key); lp(h.value): a linked node is initialized")
    @Outcome(id = "0, 0, 0", expect = ACCEPTABLE, desc = "reader ran before the link")
    @Outcome(id = "1, 7, 42", expect = ACCEPTABLE, desc = "reader found the node, initialized")
    @Outcome(id = {"1, 0, 0", "1, 7, 0", "1, 0, 42"}, expect = FORBIDDEN,
            desc = "reader found the node with uninitialized fields: CAS/acquire publication broken")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class CasLinkAcquireRead extends Base {
        @Actor
        public void insert() {
            init();
            Words.cas(head, 0, node);
        }

        @Actor
        public void reader(final JJJ_Result r) {
            observe(Words.la(head), r);
        }
    }

    /**
     * BROKEN on purpose: the link is an opaque store, which orders nothing before it; the field stores
     * may sink below it. x86 hardware cannot show it (TSO); the compiler may, though it did not in our
     * runs.
     */
    @JCStressTest
    @Description("BROKEN (x86 cannot show it: TSO keeps stores in order; only the JIT could, and did not in our runs): "
            + "sp(n.key); sp(n.value); opaqueStore(head, n) || h = la(head); lp(h.key); lp(h.value): "
            + "the opaque link does not publish the fields, a reader may see the node uninitialized")
    @Outcome(id = "0, 0, 0", expect = ACCEPTABLE, desc = "reader ran before the link")
    @Outcome(id = "1, 7, 42", expect = ACCEPTABLE, desc = "reader found the node, initialized")
    @Outcome(id = {"1, 0, 0", "1, 7, 0", "1, 0, 42"}, expect = ACCEPTABLE_INTERESTING,
            desc = "reader found the node with uninitialized fields: the opaque link does not publish them")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class BrokenOpaqueLink extends Base {
        @Actor
        public void insert() {
            init();
            Words.opaqueStore(head, node);
        }

        @Actor
        public void reader(final JJJ_Result r) {
            observe(Words.la(head), r);
        }
    }

    /**
     * BROKEN on purpose: the head is read with a plain load, which orders nothing after it (only the
     * address dependency of the field loads on it, which Java does not promise to keep). x86 hardware
     * cannot show it (TSO); the compiler may, though it did not in our runs.
     */
    @JCStressTest
    @Description("BROKEN (x86 cannot show it: TSO keeps loads in order; only the JIT could, and did not in our runs): "
            + "sp(n.key); sp(n.value); cas(head, 0, n) || h = lp(head); lp(h.key); lp(h.value): "
            + "the plain head load acquires nothing, a reader may see the node uninitialized")
    @Outcome(id = "0, 0, 0", expect = ACCEPTABLE, desc = "reader ran before the link")
    @Outcome(id = "1, 7, 42", expect = ACCEPTABLE, desc = "reader found the node, initialized")
    @Outcome(id = {"1, 0, 0", "1, 7, 0", "1, 0, 42"}, expect = ACCEPTABLE_INTERESTING,
            desc = "reader found the node with uninitialized fields: the plain head load acquires nothing")
    @Outcome(expect = FORBIDDEN, desc = "a value nobody wrote")
    @State
    public static class BrokenPlainRead extends Base {
        @Actor
        public void insert() {
            init();
            Words.cas(head, 0, node);
        }

        @Actor
        public void reader(final JJJ_Result r) {
            observe(Words.lp(head), r);
        }
    }
}
