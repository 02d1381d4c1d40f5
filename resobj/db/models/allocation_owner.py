"""Triggers that copy each allocation's owner from its consumer.

``allocations.project_id`` and ``user_id`` are the project and user of
the allocation's consumer, so that a project's (or a user's) usage per
class is one grouped sum over that project's allocations, found by
their index: ``GET /usages`` before microversion 1.38, which nova's
quota checks call on every boot. Through the consumers it was a join
of the project's consumers with every allocation, which grows with the
whole cloud rather than with the project.

The database keeps the copy, as it keeps ``inventories.used`` (see
``inventory_usage``): an inserted allocation, or one moved to another
consumer, takes its consumer's owner, and a consumer whose project or
user changes passes them to its allocations. So a service of the
previous release, which writes allocations without the columns, keeps
them right during a rolling upgrade.

``statements(dialect)`` is the DDL; ``metadata.create_all`` runs it after
the tables, migration ``0006_allocation_owner`` on upgrade. No ``%`` and
no ``:``-names in the texts, as in ``inventory_usage``.
"""

from resobj.db.models import base


def _owner(column, row='NEW'):
    return ('(SELECT consumers.%s FROM consumers WHERE consumers.id = '
            '%s.consumer_id)' % (column, row))


# A consumer's new owner, on its allocations; only when it changed (a
# consumer's generation changes on every write of its allocations).
_PASS_ON = (
    'UPDATE allocations SET project_id = NEW.project_id, user_id = '
    'NEW.user_id WHERE allocations.consumer_id = NEW.id AND '
    '(NEW.project_id <> OLD.project_id OR NEW.user_id <> OLD.user_id)')

_POSTGRESQL = [
    """CREATE OR REPLACE FUNCTION resobj_allocation_owner()
RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT consumers.project_id, consumers.user_id
    INTO NEW.project_id, NEW.user_id
    FROM consumers WHERE consumers.id = NEW.consumer_id;
    RETURN NEW;
END
$$""",
    # Any update: the copy cannot be set to anything but the consumer's.
    'CREATE TRIGGER trg_allocations_owner BEFORE INSERT OR UPDATE ON '
    'allocations FOR EACH ROW EXECUTE PROCEDURE resobj_allocation_owner()',
    """CREATE OR REPLACE FUNCTION resobj_consumer_owner()
RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    %s;
    RETURN NULL;
END
$$""" % _PASS_ON,
    'CREATE TRIGGER trg_consumers_owner AFTER UPDATE OF project_id, '
    'user_id ON consumers FOR EACH ROW EXECUTE PROCEDURE '
    'resobj_consumer_owner()',
]

_SET_OWNER = 'SET NEW.project_id = %s, NEW.user_id = %s' % (
    _owner('project_id'), _owner('user_id'))
_MYSQL = [
    'CREATE TRIGGER trg_allocations_owner_insert BEFORE INSERT ON '
    'allocations FOR EACH ROW ' + _SET_OWNER,
    'CREATE TRIGGER trg_allocations_owner_update BEFORE UPDATE ON '
    'allocations FOR EACH ROW ' + _SET_OWNER,
    'CREATE TRIGGER trg_consumers_owner AFTER UPDATE ON consumers '
    'FOR EACH ROW ' + _PASS_ON,
]

# SQLite: a BEFORE trigger cannot change NEW; the row is set right after.
_SET_ROW = ('UPDATE allocations SET project_id = %s, user_id = %s WHERE '
            'allocations.id = NEW.id' % (_owner('project_id'),
                                         _owner('user_id')))
_SQLITE = [
    'CREATE TRIGGER trg_allocations_owner_insert AFTER INSERT ON '
    'allocations FOR EACH ROW BEGIN ' + _SET_ROW + '; END',
    'CREATE TRIGGER trg_allocations_owner_update AFTER UPDATE OF '
    'consumer_id, project_id, user_id ON allocations FOR EACH ROW BEGIN ' +
    _SET_ROW + '; END',
    'CREATE TRIGGER trg_consumers_owner AFTER UPDATE OF project_id, '
    'user_id ON consumers FOR EACH ROW BEGIN ' + _PASS_ON + '; END',
]

# Every allocation's owner copied again: the migration's backfill.
COPY = 'UPDATE allocations SET project_id = %s, user_id = %s' % (
    _owner('project_id', 'allocations'), _owner('user_id', 'allocations'))


statements = base.triggers(
    {'consumers', 'allocations'},
    {'postgresql': _POSTGRESQL, 'mysql': _MYSQL, 'sqlite': _SQLITE})
