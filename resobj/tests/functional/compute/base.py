"""Fixtures for tracker tests: nodes, flavors, instances, a shared pool.

Everything is made through objects, as a deployment would; the tests
read the outcome back through objects and the reporting client.
"""

import itertools

from oslo_utils import uuidutils

from resobj.compute import fake_driver
from resobj.compute import report_local
from resobj.compute import tracker as rt
from resobj.db.api import resource_class as rc_db
from resobj.db.api import trait as trait_db
from resobj import objects
from resobj.objects import compute_node as cn_obj
from resobj.tests.functional import db_base

objects.register_all()

PROJECT = 'project-a'
USER = 'user-a'


class TrackerTestCase(db_base.DBTestCase):

    def setUp(self):
        super().setUp()
        rc_db.ensure_sync(self.context)
        trait_db.ensure_sync(self.context)
        self._counter = itertools.count(1)
        self.client = self.make_client()
        self.flavors = {}

    def make_client(self):
        return report_local.LocalReportClient(self.context)

    def add_service(self, host):
        service = objects.Service(self.context, host=host,
                                  binary=cn_obj.COMPUTE_BINARY)
        service.create()
        return service

    def flavor(self, name='small', vcpus=2, memory_mb=2048, root_gb=20,
               ephemeral_gb=0, swap=0):
        if name not in self.flavors:
            flavor = objects.Flavor(
                self.context, flavorid=name, name=name, vcpus=vcpus,
                memory_mb=memory_mb, root_gb=root_gb,
                ephemeral_gb=ephemeral_gb, swap=swap)
            flavor.create()
            self.flavors[name] = flavor
        return self.flavors[name]

    def tracker(self, host='host1', node=None, client=None, reserved=None,
                **driver_kw):
        node = node or host
        if not any(s.host == host for s in objects.ServiceList.get_all(
                self.context)):
            self.add_service(host)
        driver = fake_driver.FakeDriver(node, **driver_kw)
        tracker = rt.ResourceTracker(host, node, driver,
                                     client or self.client,
                                     **(reserved or {}))
        tracker.update_available_resource(self.context)
        return tracker

    def instance(self, flavor=None, booted_from_volume=False, **kw):
        flavor = flavor or self.flavor()
        kw.setdefault('vm_state', 'building')
        instance = objects.Instance(
            self.context, uuid=uuidutils.generate_uuid(),
            project_id=PROJECT, user_id=USER,
            vcpus=flavor.vcpus, memory_mb=flavor.memory_mb,
            root_gb=flavor.root_gb, ephemeral_gb=flavor.ephemeral_gb,
            flavor=flavor, booted_from_volume=booted_from_volume, **kw)
        instance.create()
        return instance

    def shared_pool(self, disk_gb=1000, name='ceph-pool'):
        """A Ceph-like pool: shares DISK_GB through an aggregate.

        Returns (pool provider, aggregate uuid); put a node in the
        aggregate with :meth:`shared_node_uuid`.
        """
        pool = objects.ResourceProvider(self.context, name=name)
        pool.create()
        pool.add_inventory(objects.Inventory(
            resource_class='DISK_GB', total=disk_gb, max_unit=disk_gb))
        pool.set_traits(['MISC_SHARES_VIA_AGGREGATE'])
        aggregate = uuidutils.generate_uuid()
        pool.set_aggregates([aggregate])
        return pool, aggregate

    def shared_node_uuid(self, name, aggregate):
        """A node provider made in advance, in ``aggregate``."""
        provider = objects.ResourceProvider(
            self.context, uuid=uuidutils.generate_uuid(), name=name)
        provider.create()
        provider.set_aggregates([aggregate])
        return provider.uuid

    def usages(self, provider_uuid):
        return {rc: n for rc, n in self.client.get_usages(
            provider_uuid).items() if n}

    def allocations(self, consumer):
        return self.client.get_allocations(consumer).allocations

    def reload(self, instance):
        return objects.Instance.get_by_uuid(self.context, instance.uuid)
