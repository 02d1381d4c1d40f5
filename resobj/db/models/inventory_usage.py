"""Triggers that keep ``inventories.used`` equal to the allocations' sum.

Each inventory row carries the sum of the allocations of its provider
and class, so that the readers that need usage (the candidate search,
provider usages, every claim's capacity check) read one column instead
of summing allocation rows: a thousand providers' usage cost a grouped
sum over every allocation on each search, and the correlated sums of a
window of providers were half of a ``limit=50`` search's database time.

The database keeps the column right, not resobj's write paths: a
trigger on ``allocations`` adds each inserted row's amount to its
inventory and takes each deleted row's away, and a trigger on
``inventories`` gives a new row the sum of the allocations already on
its provider and class (none, unless an older release left some
behind). So every writer maintains it: resobj's code, a service of the
previous release that knows nothing of the column during a rolling
upgrade, an operator's SQL. The increments are ``used = used + n``
under the inventory row's lock, so concurrent writers on one provider
each add their own amount, whatever the isolation level.

``statements(dialect)`` is the DDL; the schema built from the models
(``metadata.create_all``, as the tests do) runs it after creating the
tables, and migration ``0005_inventory_usage`` runs it on upgrade. The
texts hold no ``%`` and no ``:``-names, so that every driver takes them
as they are.
"""

from resobj.db.models import base

# The ALLOC row's inventory: the row named by OLD or NEW.
_OF = ('inventories.resource_provider_id = {row}.resource_provider_id '
       'AND inventories.resource_class_id = {row}.resource_class_id')
_ADD = 'UPDATE inventories SET used = used + NEW.used WHERE ' + \
    _OF.format(row='NEW')
_TAKE = 'UPDATE inventories SET used = used - OLD.used WHERE ' + \
    _OF.format(row='OLD')
# A row that moves to another provider or class, or changes its amount
# (resobj replaces rows rather than updating them; other writers may).
# Nothing for an update of other columns (a consumer's new owner, see
# allocation_owner), which MySQL's triggers cannot tell apart.
_MOVE = (
    'UPDATE inventories SET used = used'
    ' - CASE WHEN ' + _OF.format(row='OLD') + ' THEN OLD.used ELSE 0 END'
    ' + CASE WHEN ' + _OF.format(row='NEW') + ' THEN NEW.used ELSE 0 END'
    ' WHERE ((' + _OF.format(row='OLD') + ') OR (' +
    _OF.format(row='NEW') + ')) AND (OLD.resource_provider_id <> '
    'NEW.resource_provider_id OR OLD.resource_class_id <> '
    'NEW.resource_class_id OR OLD.used <> NEW.used)')
_COUNTED = 'resource_provider_id, resource_class_id, used'

# What a new inventory row starts with.
_ALLOCATED = (
    'SELECT COALESCE(SUM(allocations.used), 0) FROM allocations '
    'WHERE allocations.resource_provider_id = '
    'NEW.resource_provider_id AND allocations.resource_class_id = '
    'NEW.resource_class_id')

_POSTGRESQL = [
    # CREATE OR REPLACE: a dropped allocations table takes its trigger
    # with it but leaves the function.
    """CREATE OR REPLACE FUNCTION resobj_count_allocation()
RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        UPDATE inventories SET used = used - OLD.used
        WHERE inventories.resource_provider_id = OLD.resource_provider_id
          AND inventories.resource_class_id = OLD.resource_class_id;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        UPDATE inventories SET used = used + NEW.used
        WHERE inventories.resource_provider_id = NEW.resource_provider_id
          AND inventories.resource_class_id = NEW.resource_class_id;
    END IF;
    RETURN NULL;
END
$$""",
    'CREATE TRIGGER trg_allocations_used AFTER INSERT OR UPDATE OF ' +
    _COUNTED + ' OR DELETE ON allocations FOR EACH ROW EXECUTE PROCEDURE '
    'resobj_count_allocation()',
    """CREATE OR REPLACE FUNCTION resobj_inventory_used()
RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.used = (%s);
    RETURN NEW;
END
$$""" % _ALLOCATED,
    'CREATE TRIGGER trg_inventories_used BEFORE INSERT ON inventories '
    'FOR EACH ROW EXECUTE PROCEDURE resobj_inventory_used()',
]

# MySQL and MariaDB: one trigger per event, each a single statement.
_MYSQL = [
    'CREATE TRIGGER trg_allocations_used_insert AFTER INSERT ON '
    'allocations FOR EACH ROW ' + _ADD,
    'CREATE TRIGGER trg_allocations_used_delete AFTER DELETE ON '
    'allocations FOR EACH ROW ' + _TAKE,
    'CREATE TRIGGER trg_allocations_used_update AFTER UPDATE ON '
    'allocations FOR EACH ROW ' + _MOVE,
    'CREATE TRIGGER trg_inventories_used BEFORE INSERT ON inventories '
    'FOR EACH ROW SET NEW.used = (' + _ALLOCATED + ')',
]

# SQLite: a BEFORE trigger cannot change NEW, so a new inventory row is
# set right after its insert.
_SQLITE = [
    'CREATE TRIGGER trg_allocations_used_insert AFTER INSERT ON '
    'allocations FOR EACH ROW BEGIN ' + _ADD + '; END',
    'CREATE TRIGGER trg_allocations_used_delete AFTER DELETE ON '
    'allocations FOR EACH ROW BEGIN ' + _TAKE + '; END',
    'CREATE TRIGGER trg_allocations_used_update AFTER UPDATE OF ' +
    _COUNTED + ' ON allocations FOR EACH ROW BEGIN ' + _MOVE + '; END',
    'CREATE TRIGGER trg_inventories_used AFTER INSERT ON inventories '
    'FOR EACH ROW BEGIN UPDATE inventories SET used = (' + _ALLOCATED +
    ') WHERE inventories.id = NEW.id; END',
]

# Every inventory's usage computed again from the allocations: the
# migration's backfill.
RECOUNT = (
    'UPDATE inventories SET used = (SELECT COALESCE(SUM(allocations.used), '
    '0) FROM allocations WHERE allocations.resource_provider_id = '
    'inventories.resource_provider_id AND allocations.resource_class_id = '
    'inventories.resource_class_id)')


statements = base.triggers(
    {'inventories', 'allocations'},
    {'postgresql': _POSTGRESQL, 'mysql': _MYSQL, 'sqlite': _SQLITE})
