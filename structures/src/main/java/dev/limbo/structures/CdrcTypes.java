package dev.limbo.structures;

import dev.limbo.reclaim.rc.Cdrc;
import dev.limbo.reclaim.rc.RcType;

import java.util.HashMap;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * The type ids of the CDRC structures' node kinds, registered once per {@link Cdrc} domain and
 * type, however many structures share the domain (a Lincheck run builds tens of thousands).
 */
final class CdrcTypes {

    /** Per domain (by identity; a dropped domain's entry goes with it), the id of each type registered. */
    private static final Map<Cdrc, Map<RcType, Integer>> IDS = new WeakHashMap<>();

    private CdrcTypes() {
    }

    /** The id of {@code type} in {@code rc}, registering it on first use. */
    static synchronized int id(final Cdrc rc, final RcType type) {
        return IDS.computeIfAbsent(rc, k -> new HashMap<>()).computeIfAbsent(type, rc::register);
    }
}
