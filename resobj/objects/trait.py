"""Trait: a qualitative property of a resource provider (HW_CPU_X86_AVX2).

Standard traits come from os-traits; custom ones (``CUSTOM_*``) are
created at run time. Trait ids are generated per deployment, so only
names mean anything to another deployment.
"""

import re

import os_traits

from resobj.db.api import trait as trait_db
from resobj import exception
from resobj.objects import base
from resobj.objects import fields

CUSTOM_NAME = re.compile(r'^CUSTOM_[A-Z0-9_]+\Z')
MAX_NAME_LENGTH = 255


def validate_custom_name(name):
    """Raise InvalidTraitName unless ``name`` is a custom trait name."""
    if not isinstance(name, str) or len(name) > MAX_NAME_LENGTH or \
            not CUSTOM_NAME.match(name):
        raise exception.InvalidTraitName(name=name)


def _is_standard(name):
    return not os_traits.is_custom(name)


@base.ResobjObjectRegistry.register
class Trait(base.ResobjObject):
    # Version 1.0: initial version
    # Version 1.1: adds is_standard
    VERSION = '1.1'

    fields = {
        'id': fields.IntegerField(read_only=True),
        'name': fields.StringField(),
        # Whether the trait is protected from deletion; derived from the
        # name, sent so that peers need not know the CUSTOM_ rule.
        'is_standard': fields.BooleanField(),
    }

    _ADDED_IN = {'is_standard': '1.1'}

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        # Dropping loses nothing: the name still says it.
        base.drop_fields_added_after(primitive, target_version,
                                     self._ADDED_IN)

    def obj_load_attr(self, attrname):
        if attrname == 'is_standard' and self.obj_attr_is_set('name'):
            # A 1.0 primitive lacks it; the name determines it.
            self.is_standard = _is_standard(self.name)
            self.obj_reset_changes(['is_standard'])
            return
        super().obj_load_attr(attrname)

    @staticmethod
    def _from_db_object(context, trait, db_row, skip=()):
        row = dict(db_row, is_standard=_is_standard(db_row['name']))
        return base.ResobjObject._from_db_object(context, trait, row, skip)

    @classmethod
    @base.remotable
    def get_by_name(cls, context, name):
        return cls._from_db_object(context, cls(),
                                   trait_db.get_by_name(context, name))

    @base.remotable
    def create(self):
        """Create custom trait ``name``; TraitExists if it exists."""
        if self.obj_attr_is_set('id'):
            raise exception.ObjectActionError(action='create',
                                              reason='already created')
        validate_custom_name(self.name)
        self._from_db_object(self.obj_context, self,
                             trait_db.create(self.obj_context, self.name))

    @base.remotable
    def destroy(self):
        trait_db.destroy(self.obj_context, self.name)


@base.ResobjObjectRegistry.register
class TraitList(base.ObjectListBase, base.ResobjObject):
    # Version 1.0: initial version, Trait 1.0
    # Version 1.1: Trait 1.1
    VERSION = '1.1'

    fields = {
        'objects': fields.ListOfObjectsField('Trait'),
    }

    obj_relationships = {
        'objects': [('1.0', '1.0'), ('1.1', '1.1')],
    }

    @classmethod
    @base.remotable
    def get_all(cls, context, name_in=None, prefix=None, associated=None):
        """Traits by name; each filter that is not None narrows the list.

        ``name_in``: these names only; ``prefix``: names starting with
        it; ``associated``: True for traits some provider has, False for
        traits none has.
        """
        return base.obj_make_list(
            context, cls(context),
            trait_db.get_all(context, name_in=name_in, prefix=prefix,
                             associated=associated))
