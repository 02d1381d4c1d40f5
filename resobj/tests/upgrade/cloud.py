"""A database of its own for one upgrade scenario, and the end checks.

``CloudDatabase`` provisions an empty PostgreSQL or MySQL database
(oslo.db's provisioning, the ``openstack_citest`` account) and writes the
configuration file every process of the scenario reads, N-1 or N.
``Accounting`` is the check every scenario ends with: each instance's
allocations are its flavor exactly, each migration holds what it should,
and the providers' usage is the sum of those, so nothing was lost and
nothing counted twice. Everything is read with SQL, not through either
release's code.
"""

import collections
import json
import math
import os
import subprocess
import sys

import fixtures
from oslo_utils import uuidutils
import sqlalchemy as sa

from resobj.tests import backends
from resobj.tests.upgrade import n_minus_1
from resobj.tests.upgrade import primitives


class CloudDatabase(fixtures.Fixture):
    """An empty database on ``backend`` and ``self.conf_file`` naming it.

    The caller has checked the backend in its setUp
    (backends.provisioning_backend).
    """

    def __init__(self, backend, extra_conf=''):
        super().__init__()
        self.backend = backend
        self.extra_conf = extra_conf

    def _setUp(self):
        name = 'resobj_upg_' + uuidutils.generate_uuid(dashed=False)[:12]
        self.backend.create_named_database(name)
        self.addCleanup(self.backend.drop_named_database, name)
        self.url = self.backend.provisioned_database_url(
            name).render_as_string(hide_password=False)
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.conf_file = self.write('resobj.conf', (
            '[DEFAULT]\ntransport_url = %s\n[database]\nconnection = %s\n%s'
            % (backends.transport_url(), self.url, self.extra_conf)))
        self.engine = sa.create_engine(self.url, poolclass=sa.pool.NullPool)
        self.addCleanup(self.engine.dispose)

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, 'w') as f:
            f.write(text)
        return path

    def command(self, module, *args, old=False, conf_files=None):
        """``module``'s main with this cloud's configuration; its result.

        ``old``: the N-1 release's command, in an N-1 process.
        """
        argv = []
        for path in conf_files or [self.conf_file]:
            argv += ['--config-file', path]
        argv += list(args)
        if old:
            return n_minus_1.run_module(module, *argv)
        return subprocess.run([sys.executable, '-m', module] + argv,
                              capture_output=True, text=True, timeout=120)

    def rows(self, sql, **params):
        with self.engine.connect() as conn:
            return conn.execute(sa.text(sql), params).mappings().all()

    def scalar(self, sql, **params):
        with self.engine.connect() as conn:
            return conn.execute(sa.text(sql), params).scalar()

    def allocations(self):
        """{consumer uuid: {class: used}} of every consumer."""
        found = collections.defaultdict(dict)
        for row in self.rows(
                'SELECT c.uuid AS consumer, rc.name AS rc, a.used '
                'FROM allocations a '
                'JOIN consumers c ON c.id = a.consumer_id '
                'JOIN resource_classes rc ON rc.id = a.resource_class_id'):
            held = found[row['consumer']]
            held[row['rc']] = held.get(row['rc'], 0) + row['used']
        return dict(found)

    def flavors_of_instances(self):
        """{instance uuid: {class: amount}} of every placed instance.

        From the flavor stored with the instance (the allocations spec:
        DISK_GB is root, unless booted from a volume, plus ephemeral plus
        swap in whole GB).
        """
        found = {}
        for row in self.rows(
                'SELECT uuid, flavor, booted_from_volume FROM instances '
                'WHERE deleted = 0 AND host IS NOT NULL'):
            flavor = json.loads(row['flavor'])
            flavor = flavor.get(primitives.DATA, flavor)
            disk = (flavor['ephemeral_gb'] +
                    int(math.ceil((flavor.get('swap') or 0) / 1024.0)) +
                    (0 if row['booted_from_volume'] else flavor['root_gb']))
            wanted = {'VCPU': flavor['vcpus'],
                      'MEMORY_MB': flavor['memory_mb'], 'DISK_GB': disk}
            found[row['uuid']] = {k: v for k, v in wanted.items() if v}
        return found

    def provider_usage(self):
        """{provider uuid: {class: used}} as the inventories count it."""
        found = collections.defaultdict(dict)
        for row in self.rows(
                'SELECT rp.uuid AS rp, rc.name AS rc, i.used '
                'FROM inventories i '
                'JOIN resource_classes rc ON rc.id = i.resource_class_id '
                'JOIN resource_providers rp '
                'ON rp.id = i.resource_provider_id'):
            if row['used']:
                found[row['rp']][row['rc']] = row['used']
        return dict(found)

    def allocated_per_provider(self):
        found = collections.defaultdict(dict)
        for row in self.rows(
                'SELECT rp.uuid AS rp, rc.name AS rc, sum(a.used) AS used '
                'FROM allocations a '
                'JOIN resource_classes rc ON rc.id = a.resource_class_id '
                'JOIN resource_providers rp '
                'ON rp.id = a.resource_provider_id GROUP BY rp.uuid, rc.name'):
            if row['used']:
                found[row['rp']][row['rc']] = int(row['used'])
        return dict(found)


def assert_accounting(test, cloud, migrations=None):
    """Every instance holds its flavor exactly; nothing else is held.

    ``migrations``: {migration uuid: {class: amount}} the test expects to
    still hold a source (an unconfirmed resize); every other consumer
    must hold nothing.
    """
    migrations = migrations or {}
    held = cloud.allocations()
    wanted = cloud.flavors_of_instances()
    wanted.update(migrations)
    test.assertEqual(
        {uuid: amounts for uuid, amounts in wanted.items() if amounts},
        {uuid: amounts for uuid, amounts in held.items() if amounts})
    # The providers' usage counts each allocation once.
    test.assertEqual(cloud.allocated_per_provider(), cloud.provider_usage())
