"""Raw rows for resource-provider DB tests: providers, inventories,
consumers. Inserted directly so these tests depend only on the schema.
"""

import itertools

from oslo_utils import uuidutils
import sqlalchemy as sa

from resobj.db import facade
from resobj.db.models import consumer as consumer_models
from resobj.db.models import inventory as inv_models
from resobj.db.models import resource_provider as rp_models

_names = itertools.count()


@facade.writer
def provider(context, name=None):
    table = rp_models.ResourceProvider.__table__
    rp_id = context.session.execute(sa.insert(table).values(
        uuid=uuidutils.generate_uuid(),
        name=name or 'rp-%d' % next(_names))).inserted_primary_key[0]
    context.session.execute(sa.update(table).where(table.c.id == rp_id)
                            .values(root_provider_id=rp_id))
    return rp_id


@facade.writer
def inventory(context, rp_id, rc_id, total, reserved=0, min_unit=1,
              max_unit=None, step_size=1, allocation_ratio=1.0):
    context.session.execute(sa.insert(inv_models.Inventory.__table__).values(
        resource_provider_id=rp_id, resource_class_id=rc_id, total=total,
        reserved=reserved, min_unit=min_unit,
        max_unit=total if max_unit is None else max_unit,
        step_size=step_size, allocation_ratio=allocation_ratio))


@facade.writer
def set_inventory(context, rp_id, rc_id, **values):
    table = inv_models.Inventory.__table__
    context.session.execute(sa.update(table).where(
        table.c.resource_provider_id == rp_id,
        table.c.resource_class_id == rc_id).values(**values))


@facade.writer
def consumer(context, project='p', user='u'):
    ids = []
    for model, external in ((consumer_models.Project, project),
                            (consumer_models.User, user)):
        table = model.__table__
        found = context.session.execute(sa.select(table.c.id).where(
            table.c.external_id == external)).scalar()
        ids.append(found or context.session.execute(sa.insert(table).values(
            external_id=external)).inserted_primary_key[0])
    return context.session.execute(
        sa.insert(consumer_models.Consumer.__table__).values(
            uuid=uuidutils.generate_uuid(), project_id=ids[0],
            user_id=ids[1])).inserted_primary_key[0]


@facade.reader
def generation(context, rp_id):
    table = rp_models.ResourceProvider.__table__
    return context.session.execute(sa.select(table.c.generation).where(
        table.c.id == rp_id)).scalar_one()
