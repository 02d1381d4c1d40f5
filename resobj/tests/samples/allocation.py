from resobj import objects
from resobj.tests import samples


@samples.sample('Allocation')
def allocation():
    objects.register_all()
    return objects.Allocation(
        resource_provider_uuid='5b0c4d1e-8f2a-4c3b-9d7e-1a2b3c4d5e6f',
        resource_class='VCPU',
        consumer_uuid='9e8d7c6b-5a49-4382-9170-6f5e4d3c2b1a',
        project_id='p-42', user_id='u-7', consumer_type='INSTANCE', used=4,
        consumer_generation=3)


@samples.sample('AllocationList')
def allocation_list():
    objects.register_all()
    memory = allocation()
    memory.resource_class, memory.used = 'MEMORY_MB', 8192
    return objects.AllocationList(objects=[allocation(), memory])
