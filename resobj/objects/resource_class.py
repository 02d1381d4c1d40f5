"""ResourceClass: a kind of resource providers offer, standard or custom.

Standard classes are those of os-resource-classes, with their index as id
on every deployment; custom classes (``CUSTOM_*``) are created at run time
with ids from 10000.

Name/id lookups during a request go through a cache on the request
context (:func:`cache`): one query loads the whole table the first time
it is needed, and every lookup after that costs none. Code writing
providers, inventories or allocations translates names with
:func:`id_from_name`, :func:`ids_from_names` and :func:`name_from_id`.
"""

import re

from resobj.db.api import resource_class as rc_db
from resobj import exception
from resobj.objects import base
from resobj.objects import fields

MIN_CUSTOM_ID = rc_db.MIN_CUSTOM_ID
CUSTOM_NAME = re.compile(r'^CUSTOM_[A-Z0-9_]+\Z')
MAX_NAME_LENGTH = 255


def validate_custom_name(name):
    """Raise InvalidResourceClassName unless ``name`` is a custom name."""
    if not isinstance(name, str) or len(name) > MAX_NAME_LENGTH or \
            not CUSTOM_NAME.match(name):
        raise exception.InvalidResourceClassName(name=name)


class _Cache:
    """Resource class names and ids as of one request's first lookup.

    A name created by another request after the load is a miss, and a
    miss reloads once before it is reported as not found: creating a
    class and using it in the next request must work. Writes through
    this request's context clear it (:meth:`clear`).
    """

    def __init__(self):
        self._by_name = None
        self._by_id = None

    def clear(self):
        self._by_name = self._by_id = None

    def prime(self, rows):
        """Fill from ``rows`` (the whole table) just read by the caller."""
        self._by_name = {row['name']: row['id'] for row in rows}
        self._by_id = {row['id']: row['name'] for row in rows}

    def _lookup(self, context, table, key):
        # Loaded on first use; a key missing from a loaded cache may be a
        # class created since, so the table is read once more.
        if self._by_name is None or key not in getattr(self, table):
            self.prime(rc_db.get_all(context))
        return getattr(self, table).get(key)

    def id_from_name(self, context, name):
        rc_id = self._lookup(context, '_by_name', name)
        if rc_id is None:
            raise exception.ResourceClassNotFound(name=name)
        return rc_id

    def name_from_id(self, context, rc_id):
        name = self._lookup(context, '_by_id', rc_id)
        if name is None:
            raise exception.ResourceClassNotFound(name='id=%s' % rc_id)
        return name

    def ids_from_names(self, context, names):
        names = set(names)
        if self._by_name is None or not names <= self._by_name.keys():
            self.prime(rc_db.get_all(context))
        unknown = sorted(names - self._by_name.keys())
        if unknown:
            raise exception.ResourceClassNotFound(name=unknown[0])
        return {name: self._by_name[name] for name in names}


def cache(context):
    """The resource class cache of ``context`` (one per request context).

    Copies of the context (``elevated()``) share it; a serialized context
    does not carry it.
    """
    found = getattr(context, '_resource_class_cache', None)
    if found is None:
        found = _Cache()
        context._resource_class_cache = found
    return found


def id_from_name(context, name):
    """The id of class ``name``; ResourceClassNotFound if there is none."""
    return cache(context).id_from_name(context, name)


def ids_from_names(context, names):
    """{name: id} for every one of ``names``; at most one query."""
    return cache(context).ids_from_names(context, names)


def name_from_id(context, rc_id):
    """The name of class ``rc_id``; ResourceClassNotFound if none."""
    return cache(context).name_from_id(context, rc_id)


def _is_custom(primitive):
    if 'name' in primitive:
        return primitive['name'].startswith('CUSTOM_')
    return primitive.get('id', 0) >= MIN_CUSTOM_ID


@base.ResobjObjectRegistry.register
class ResourceClass(base.ResobjObject):
    # Version 1.0: initial version, standard classes only
    # Version 1.1: custom (CUSTOM_*) classes: create(), save(), destroy()
    VERSION = '1.1'

    fields = {
        'id': fields.IntegerField(read_only=True),
        'name': fields.StringField(),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        # A 1.0 peer knows only the standard classes; a custom one would
        # reach it as a name and id it cannot interpret, so refuse.
        if base.version_tuple(target_version) < (1, 1) and \
                _is_custom(primitive):
            raise exception.ObjectBackportError(
                objname=self.obj_name(), target=target_version,
                reason='custom class %s needs version 1.1 or newer'
                % primitive.get('name', primitive.get('id')))

    @property
    def is_standard(self):
        return self.id < MIN_CUSTOM_ID

    @classmethod
    @base.remotable
    def get_by_name(cls, context, name):
        rc_id = id_from_name(context, name)
        return cls._from_db_object(context, cls(),
                                   {'id': rc_id, 'name': name})

    @classmethod
    @base.remotable
    def get_by_id(cls, context, rc_id):
        name = name_from_id(context, rc_id)
        return cls._from_db_object(context, cls(),
                                   {'id': rc_id, 'name': name})

    @base.remotable
    def create(self):
        if self.obj_attr_is_set('id'):
            raise exception.ObjectActionError(action='create',
                                              reason='already created')
        validate_custom_name(self.name)
        try:
            row = rc_db.create(self.obj_context, self.name)
        finally:
            # Cleared even on failure: a duplicate means another request
            # created the class, which this cache may not know yet.
            cache(self.obj_context).clear()
        self._from_db_object(self.obj_context, self, row)

    @base.remotable
    def save(self):
        """Rename a custom class to another custom name."""
        validate_custom_name(self.name)
        try:
            row = rc_db.update(self.obj_context, self.id, self.name)
        finally:
            cache(self.obj_context).clear()
        self._from_db_object(self.obj_context, self, row)

    @base.remotable
    def destroy(self):
        try:
            rc_db.destroy(self.obj_context, self.id)
        finally:
            cache(self.obj_context).clear()


@base.ResobjObjectRegistry.register
class ResourceClassList(base.ObjectListBase, base.ResobjObject):
    # Version 1.0: initial version, ResourceClass 1.0
    # Version 1.1: ResourceClass 1.1
    VERSION = '1.1'

    fields = {
        'objects': fields.ListOfObjectsField('ResourceClass'),
    }

    obj_relationships = {
        'objects': [('1.0', '1.0'), ('1.1', '1.1')],
    }

    @classmethod
    @base.remotable
    def get_all(cls, context):
        """Every class, by id. Reads the table and refreshes the cache."""
        rows = rc_db.get_all(context)
        cache(context).prime(rows)
        return base.obj_make_list(context, cls(context), rows)
