package dev.limbo.bench.index;

import org.jctools.maps.NonBlockingHashMapLong;

/** JCTools' {@link NonBlockingHashMapLong}: primitive keys, boxed values. */
final class NbhmlAdapter implements IndexAdapter {

    private final NonBlockingHashMapLong<Long> map;

    NbhmlAdapter(final NonBlockingHashMapLong<Long> map) {
        this.map = map;
    }

    @Override
    public long get(final long key) {
        return BoxedMapAdapter.unbox(map.get(key));
    }

    @Override
    public long put(final long key, final long value) {
        return BoxedMapAdapter.unbox(map.put(key, Long.valueOf(value)));
    }

    @Override
    public long remove(final long key) {
        return BoxedMapAdapter.unbox(map.remove(key));
    }

    @Override
    public long offHeapBytes() {
        return 0;
    }

    @Override
    public void close() {
        map.clear();
    }
}
