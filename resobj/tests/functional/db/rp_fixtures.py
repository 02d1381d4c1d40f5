"""Raw rows for resource-provider DB tests: providers, inventories,
consumers. Inserted directly so these tests depend only on the schema.
"""

import itertools

from oslo_utils import uuidutils
import sqlalchemy as sa

from resobj.db.api import usage as usage_db
from resobj.db import facade
from resobj.db.models import allocation as alloc_models
from resobj.db.models import consumer as consumer_models
from resobj.db.models import inventory as inv_models
from resobj.db.models import resource_provider as rp_models
from resobj.db.models import trait as trait_models

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


def provider_with(context, totals):
    """A new provider with inventory of {class id: total}; its id."""
    rp_id = provider(context)
    for rc_id, total in sorted(totals.items()):
        inventory(context, rp_id, rc_id, total=total)
    return rp_id


@facade.writer
def set_inventory(context, rp_id, rc_id, **values):
    table = inv_models.Inventory.__table__
    context.session.execute(sa.update(table).where(
        table.c.resource_provider_id == rp_id,
        table.c.resource_class_id == rc_id).values(**values))


def _get_or_insert(context, table, column, value):
    found = context.session.execute(sa.select(table.c.id).where(
        table.c[column] == value)).scalar()
    return found or context.session.execute(sa.insert(table).values(
        **{column: value})).inserted_primary_key[0]


@facade.writer
def consumer(context, project='p', user='u', consumer_type=None):
    type_id = None
    if consumer_type is not None:
        type_id = _get_or_insert(
            context, consumer_models.ConsumerType.__table__, 'name',
            consumer_type)
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
            user_id=ids[1], consumer_type_id=type_id)
    ).inserted_primary_key[0]


@facade.writer
def allocate(context, *rows):
    """Insert (rp_id, consumer_id, rc_id, used) rows as they are.

    No capacity check, so tests can also build over-capacity states.
    """
    context.session.execute(sa.insert(alloc_models.Allocation.__table__), [
        dict(resource_provider_id=rp, consumer_id=c, resource_class_id=rc,
             used=used) for rp, c, rc, used in rows])


@facade.writer
def add_trait(context, rp_id, name):
    trait_id = _get_or_insert(context, trait_models.Trait.__table__,
                              'name', name)
    context.session.execute(sa.insert(
        rp_models.ResourceProviderTrait.__table__).values(
            resource_provider_id=rp_id, trait_id=trait_id))


@facade.writer
def add_to_aggregate(context, rp_id, aggregate_uuid):
    agg_id = _get_or_insert(context, rp_models.PlacementAggregate.__table__,
                            'uuid', aggregate_uuid)
    context.session.execute(sa.insert(
        rp_models.ResourceProviderAggregate.__table__).values(
            resource_provider_id=rp_id, aggregate_id=agg_id))


@facade.reader
def uuid(context, rp_id):
    table = rp_models.ResourceProvider.__table__
    return context.session.execute(sa.select(table.c.uuid).where(
        table.c.id == rp_id)).scalar_one()


@facade.writer
def execute(context, statement):
    """Run a Core write as another release's code would; its rowcount."""
    return context.session.execute(statement).rowcount


@facade.reader
def consumer_uuid(context, consumer_id):
    table = consumer_models.Consumer.__table__
    return context.session.execute(sa.select(table.c.uuid).where(
        table.c.id == consumer_id)).scalar_one()


@facade.reader
def generation(context, rp_id):
    table = rp_models.ResourceProvider.__table__
    return context.session.execute(sa.select(table.c.generation).where(
        table.c.id == rp_id)).scalar_one()


def usage(context, rp_id):
    """{class: used} of a provider, through the usage DB API."""
    return {row['resource_class']: row['usage'] for row in
            usage_db.get_provider_usages(
                context, uuid(context, rp_id))['usages']}


@facade.reader
def count_rows(context, model_or_table, **criteria):
    """How many rows of a model's (or a table's) match ``criteria``."""
    table = getattr(model_or_table, '__table__', model_or_table)
    return context.session.execute(
        sa.select(sa.func.count()).select_from(table).where(
            *(table.c[k] == v for k, v in criteria.items()))).scalar()
