import datetime

from resobj import objects
from resobj.tests import samples
from resobj.tests.samples import compute_node as samples_compute_node

NOW = datetime.datetime(2026, 11, 21, 12, 0, 0,
                        tzinfo=datetime.timezone.utc)


@samples.sample('Service')
def service():
    objects.register_all()
    return objects.Service(
        id=7, uuid='a4f3b9e2-5c1d-4e8f-9b7a-6d2c1e0f3a5b', host='compute-1',
        binary='resobj-compute', topic='compute', report_count=42,
        disabled=True, disabled_reason='maintenance', last_seen_up=NOW,
        forced_down=False, version=1, created_at=NOW, updated_at=NOW,
        deleted_at=None, deleted=False,
        compute_node=samples_compute_node.compute_node())


@samples.sample('ServiceList')
def service_list():
    objects.register_all()
    return objects.ServiceList(objects=[service()])
