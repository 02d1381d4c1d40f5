import datetime

from resobj import objects
from resobj.tests import samples

NOW = datetime.datetime(2026, 11, 21, 12, 0, 0,
                        tzinfo=datetime.timezone.utc)


@samples.sample('Flavor')
def flavor():
    objects.register_all()
    return objects.Flavor(
        id=3, flavorid='m1.medium', name='medium', memory_mb=4096, vcpus=2,
        root_gb=40, ephemeral_gb=10, swap=512, rxtx_factor=1.5,
        extra_specs={'hw:cpu_policy': 'dedicated',
                     'hw:mem_page_size': 'large'},
        is_public=False, disabled=False, description='pinned CPUs',
        created_at=NOW, updated_at=NOW, deleted_at=None, deleted=False)


@samples.sample('FlavorList')
def flavor_list():
    objects.register_all()
    return objects.FlavorList(objects=[flavor()])
