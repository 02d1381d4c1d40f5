from hypothesis import strategies as st

from resobj import objects
from resobj.tests import samples

# Below 1.1 UsageList sums the rows of one class over consumer types, so
# its objects are compared by their sums per class after that backport;
# test_usage checks the sums.
samples.converted('UsageList', 'objects',
                  key=lambda usages: usages.as_dict(), before='1.1')


@samples.strategy('Usage', 'consumer_type')
def _consumer_types():
    return st.sampled_from(['unknown', 'all', 'INSTANCE', 'MIGRATION'])


def usage(resource_class='VCPU', amount=12, consumer_type='INSTANCE',
          consumer_count=3):
    objects.register_all()
    return objects.Usage(resource_class=resource_class, usage=amount,
                         consumer_type=consumer_type,
                         consumer_count=consumer_count)


@samples.sample('Usage')
def sample_usage():
    return usage()


@samples.sample('UsageList')
def usage_list():
    objects.register_all()
    # Two VCPU rows of different types: the 1.0 primitive sums them.
    return objects.UsageList(resource_provider_generation=7, objects=[
        usage(),
        usage('MEMORY_MB', 24576),
        usage('VCPU', 2, consumer_type='unknown', consumer_count=1)])
