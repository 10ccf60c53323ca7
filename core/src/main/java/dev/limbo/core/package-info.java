/**
 * Limbo's foundation: the off-heap {@link dev.limbo.core.Region}, word access by mode
 * ({@link dev.limbo.core.Words}), record layouts ({@link dev.limbo.core.Layouts}), dense
 * participant ids ({@link dev.limbo.core.Participants}) with padded per-thread slots
 * ({@link dev.limbo.core.PerThreadSlots}), and striped counters
 * ({@link dev.limbo.core.StripedCounter}).
 *
 * <h2>Pointers</h2>
 * A pointer is a {@code long} offset into the global region; 0 is null. Records are described by
 * {@code …Layout} classes whose field offsets are derived from a {@link java.lang.foreign.MemoryLayout}.
 * Low bits left free by a record's alignment may carry marks; strip them before dereferencing.
 *
 * <h2>Access modes</h2>
 * All atomic access to region words goes through the helpers of {@link dev.limbo.core.Words},
 * named by mode (JCTools' scheme, with JDK 9 mode names). The one exception is
 * {@link dev.limbo.core.Region} itself, which reaches its header words (the claim pointer and the
 * committed-bytes counter, {@link dev.limbo.core.RegionHeaderLayout}) through its own VarHandle on
 * its segment, since a region other than the global one is not the segment {@code Words} uses.
 * No other class calls VarHandle access modes on a region directly.
 * <table>
 *   <caption>Helpers and what they guarantee</caption>
 *   <tr><th>helper</th><th>mode</th><th>guarantee</th></tr>
 *   <tr><td>{@code lp / sp}</td><td>plain</td><td>none beyond single-thread program order; 8-byte
 *       aligned words are not torn on 64-bit JVMs</td></tr>
 *   <tr><td>{@code opaqueLoad / opaqueStore}</td><td>opaque</td><td>atomic and coherent per word
 *       (a thread never sees a word go back in time); no ordering with other words</td></tr>
 *   <tr><td>{@code la}</td><td>acquire</td><td>no later access moves before it</td></tr>
 *   <tr><td>{@code sr}</td><td>release</td><td>no earlier access moves after it. A release store
 *       read by an acquire load forms a happens-before edge (message passing)</td></tr>
 *   <tr><td>{@code lv / sv}</td><td>volatile</td><td>acquire/release plus one total order over all
 *       volatile accesses; a volatile store followed by a volatile load of another word is not
 *       reordered (Dekker)</td></tr>
 *   <tr><td>{@code cas, casWeak, cae}</td><td>volatile</td><td>atomic read-modify-write;
 *       {@code casWeak} may fail spuriously, {@code cae} returns the witness</td></tr>
 *   <tr><td>{@code xadd, xchg}</td><td>volatile</td><td>atomic get-and-add, get-and-set</td></tr>
 *   <tr><td>{@code fullFence}</td><td>fence</td><td>orders every earlier access before every later
 *       one, including store→load, which acquire/release never orders</td></tr>
 *   <tr><td>{@code acquireFence, releaseFence, loadLoadFence, storeStoreFence}</td><td>fence</td>
 *       <td>the corresponding one-directional orderings</td></tr>
 * </table>
 *
 * <h2>Documenting ordering</h2>
 * Each non-plain access in a lock-free class carries a comment {@code // (n) mode; pairs with (m, k)}
 * numbered within its file, naming the accesses it synchronizes with. Every release store names the
 * acquire load that reads it.
 */
package dev.limbo.core;
