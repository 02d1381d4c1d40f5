"""Round-trip cost of a populated ComputeNode with 8 PCI pools.

Measures obj_to_primitive() + ResobjObject.obj_from_primitive() (and each
half) in CPU time, best of several repeats, so other load on the machine
matters less. Also reports how much of the round trip is spent in
obj_what_changed(), the part oslo.versionedobjects makes expensive.

    python bench/roundtrip.py [--number N] [--repeat R] [--stock]

--stock measures with oslo.versionedobjects' own obj_attr_is_set and
obj_what_changed instead of resobj's, for the ratio.

Prints one line per measurement; bench/README.md records the figures.
"""

import argparse
import cProfile
import pstats
import time
import timeit

from resobj.objects._ovo import base as ovo_base
from resobj.objects import base
from resobj.tests.samples import compute_node as samples


def best(fn, number, repeat):
    timer = timeit.Timer(fn, timer=time.process_time)
    return min(timer.repeat(repeat=repeat, number=number)) / number * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--number', type=int, default=500)
    parser.add_argument('--repeat', type=int, default=7)
    parser.add_argument('--stock', action='store_true')
    args = parser.parse_args()
    if args.stock:
        for name in ('obj_attr_is_set', 'obj_what_changed'):
            delattr(base.ResobjObject, name)
        assert base.ResobjObject.obj_what_changed is \
            ovo_base.VersionedObject.obj_what_changed
    print('implementation: %s' % ('oslo.versionedobjects' if args.stock
                                  else 'resobj'))

    node = samples.compute_node(pools=8)
    node.obj_reset_changes(recursive=True)
    primitive = node.obj_to_primitive()
    assert len(primitive['resobj_object.data']['pci_device_pools'][
        'resobj_object.data']['objects']) == 8

    to_us = best(node.obj_to_primitive, args.number, args.repeat)
    from_us = best(lambda: base.ResobjObject.obj_from_primitive(primitive),
                   args.number, args.repeat)
    both_us = best(lambda: base.ResobjObject.obj_from_primitive(
        node.obj_to_primitive()), args.number, args.repeat)
    print('obj_to_primitive:            %8.1f us' % to_us)
    print('obj_from_primitive:          %8.1f us' % from_us)
    print('round trip (to + from):      %8.1f us' % both_us)

    profile = cProfile.Profile()
    profile.enable()
    for _ in range(args.number):
        base.ResobjObject.obj_from_primitive(node.obj_to_primitive())
    profile.disable()
    stats = pstats.Stats(profile)
    total = stats.total_tt
    changed = sum(v[3] for k, v in stats.stats.items()
                  if k[2] == 'obj_what_changed')
    print('share in obj_what_changed:   %8.1f %%' % (100.0 * changed / total))


if __name__ == '__main__':
    main()
