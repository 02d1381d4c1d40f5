import datetime

from resobj import objects
from resobj.tests import samples

NOW = datetime.datetime(2026, 11, 21, 12, 0, 0,
                        tzinfo=datetime.timezone.utc)


@samples.sample('Migration')
def migration():
    objects.register_all()
    return objects.Migration(
        id=11, uuid='5e0f3c1a-8b2d-4f6e-9a7c-1d3b5f7e9a2c',
        source_compute='compute-1', dest_compute='compute-2',
        source_node='node-1', dest_node='node-2', dest_host='192.0.2.12',
        instance_uuid='c2d4e6f8-1a3b-4c5d-8e7f-9a0b1c2d3e4f',
        old_instance_type_id=3, new_instance_type_id=4, status='migrating',
        migration_type='resize', hidden=True, created_at=NOW,
        updated_at=NOW, deleted_at=None, deleted=False)


@samples.sample('MigrationList')
def migration_list():
    objects.register_all()
    return objects.MigrationList(objects=[migration()])
