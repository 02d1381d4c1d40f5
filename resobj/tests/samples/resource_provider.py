import datetime

from resobj import objects
from resobj.tests import samples

NOW = datetime.datetime(2026, 11, 21, 12, 0, 0,
                        tzinfo=datetime.timezone.utc)
ROOT = '9a3e5c1f-2b4d-4f6a-8c0e-1d2f3a4b5c6d'
CHILD = '4e6f8a0b-1c2d-4e3f-9a5b-7c8d9e0f1a2b'


@samples.sample('ResourceProvider')
def resource_provider():
    # A root: every version can carry it (a child cannot go to 1.0).
    objects.register_all()
    return objects.ResourceProvider(
        id=11, uuid=ROOT, name='compute-1.example.org', generation=7,
        parent_provider_uuid=None, root_provider_uuid=ROOT,
        created_at=NOW, updated_at=NOW)


def child_provider():
    objects.register_all()
    return objects.ResourceProvider(
        id=12, uuid=CHILD, name='compute-1.example.org_gpu0',
        generation=2, parent_provider_uuid=ROOT, root_provider_uuid=ROOT,
        created_at=NOW, updated_at=None)


@samples.sample('ResourceProviderList')
def resource_provider_list():
    objects.register_all()
    return objects.ResourceProviderList(objects=[resource_provider()])
