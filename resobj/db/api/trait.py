"""Queries on the traits table.

Standard traits come from os-traits and are synced into the table; their
ids are generated, so unlike resource classes they differ between
deployments and only names cross process boundaries.

Rows are hard-deleted, so the soft-delete helpers of ``utils`` (select,
get_one, update_live) do not apply here; the fetch and insert ones do.
"""

import os_traits
from oslo_db import exception as db_exc
import sqlalchemy as sa

from resobj.db.api import utils
from resobj.db import facade
from resobj.db.models import base
from resobj.db.models import resource_provider as rp_models
from resobj.db.models import trait as models
from resobj import exception

_TABLE = models.Trait.__table__
_RP_TRAITS = rp_models.ResourceProviderTrait.__table__


def _standard_names():
    global _STANDARD
    if _STANDARD is None:
        _STANDARD = frozenset(os_traits.get_traits())
    return _STANDARD


_STANDARD = None


@facade.writer
def ensure_sync(context):
    """Insert the standard traits this database lacks; return how many.

    Safe against a concurrent sync: what it inserted first is skipped.
    """
    present = set(utils.execute(
        context,
        sa.select(_TABLE.c.name)).scalars())
    now = base.utcnow()
    # By name: lists come in id order, so standard traits list
    # alphabetically on every deployment (placement's order of them
    # follows a set's, which differs between processes), custom ones
    # after them in creation order.
    return utils.insert_missing(context, _TABLE, [
        {'name': name, 'created_at': now}
        for name in sorted(_standard_names() - present)])


@facade.reader
def ids_by_names(context, names, every=False, in_order=False):
    """{name: id} for ``names``; TraitNotFound names the first unknown.

    In name order, or with ``in_order`` in the order of ``names``. With
    ``every``, it names every unknown name (see
    :func:`resobj.db.api.utils.ids_by_names`).
    """
    return utils.ids_by_names(context, _TABLE, names, exception.TraitNotFound,
                              every=every, in_order=in_order)


@facade.reader
def get_by_name(context, name):
    row = utils.fetch_one(context, sa.select(_TABLE).where(
        _TABLE.c.name == name))
    if row is None:
        raise exception.TraitNotFound(name=name)
    return row


@facade.reader
def get_all(context, name_in=None, prefix=None, associated=None):
    """Traits in creation order, filtered by every argument that is not None.

    ``name_in``: only these names; ``prefix``: only names starting with
    it (taken literally: ``%`` and ``_`` match only themselves);
    ``associated``: only traits some provider has (True) or none has
    (False).
    """
    # In creation order, as placement lists them.
    stmt = sa.select(_TABLE).order_by(_TABLE.c.id)
    if name_in is not None:
        stmt = stmt.where(_TABLE.c.name.in_(sorted(set(name_in))))
    if prefix is not None:
        stmt = stmt.where(_TABLE.c.name.startswith(prefix, autoescape=True))
    if associated is not None:
        used = sa.exists().where(_RP_TRAITS.c.trait_id == _TABLE.c.id)
        stmt = stmt.where(used if associated else ~used)
    return utils.fetch_all(context, stmt)


@facade.writer
def create(context, name):
    try:
        trait_id = utils.insert(context, _TABLE, {'name': name})
    except db_exc.DBDuplicateEntry:
        raise exception.TraitExists(name=name)
    return {'id': trait_id, 'name': name}


def _in_use(context, trait_id):
    return utils.execute(context, sa.select(_RP_TRAITS.c.trait_id).where(
        _RP_TRAITS.c.trait_id == trait_id).limit(1)).first() is not None


@facade.writer
def destroy(context, name):
    """Delete custom trait ``name`` unless a provider has it."""
    # Anything not CUSTOM_ counts as standard, including traits a newer
    # os-traits synced that this code's os-traits does not list.
    if not os_traits.is_custom(name):
        raise exception.TraitCannotDeleteStandard(name=name)
    trait_id = get_by_name(context, name)['id']
    if _in_use(context, trait_id):
        raise exception.TraitInUse(name=name)
    try:
        # The foreign key refuses it if a provider took the trait after
        # the check above.
        utils.execute(context, sa.delete(_TABLE).where(
            _TABLE.c.id == trait_id))
    except db_exc.DBReferenceError:
        raise exception.TraitInUse(name=name)
