"""hostreport's objects: what a rack agent reports about its hosts.

Objects of this project's own namespace, on oslo.versionedobjects, one of
which holds a resobj object (a ComputeNode). The registry is shared with
resobj in the process; the namespaces keep the primitives apart.
"""

from oslo_utils import versionutils
from oslo_versionedobjects import base as ovo_base
from oslo_versionedobjects import fields

from resobj.objects import base as resobj_base

RESOBJ_NAME_KEY = resobj_base.ResobjObject.OBJ_SERIAL_NAMESPACE + '.name'


def _older(target_version, version):
    return versionutils.convert_version_to_tuple(target_version) < \
        versionutils.convert_version_to_tuple(version)


class HostreportObjectRegistry(ovo_base.VersionedObjectRegistry):
    pass


class HostreportObject(ovo_base.VersionedObject):
    OBJ_SERIAL_NAMESPACE = 'hostreport_object'
    OBJ_PROJECT_NAMESPACE = 'hostreport'

    @classmethod
    def obj_from_primitive(cls, primitive, context=None):
        # oslo.versionedobjects loads a child through its parent's class;
        # a resobj child is loaded, and checked, by resobj.
        if isinstance(primitive, dict) and RESOBJ_NAME_KEY in primitive:
            return resobj_base.ResobjObject.obj_from_primitive(
                primitive, context)
        return super().obj_from_primitive(primitive, context)


@HostreportObjectRegistry.register
class Rack(HostreportObject):
    # Version 1.0: initial version
    # Version 1.1: adds power_kw
    VERSION = '1.1'

    fields = {
        'name': fields.StringField(),
        'hosts': fields.ListOfStringsField(),
        'power_kw': fields.FloatField(nullable=True),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        if _older(target_version, '1.1'):
            primitive.pop('power_kw', None)


@HostreportObjectRegistry.register
class HostReport(HostreportObject):
    # Version 1.0: initial version, ComputeNode 1.5
    # Version 1.1: ComputeNode 1.6; adds rack (Rack 1.1)
    VERSION = '1.1'

    fields = {
        'host': fields.StringField(),
        'collected_at': fields.DateTimeField(),
        'node': fields.ObjectField('ComputeNode'),
        'rack': fields.ObjectField('Rack', nullable=True),
    }

    # The child version each version carries.
    obj_relationships = {
        'node': [('1.0', '1.5'), ('1.1', '1.6')],
        'rack': [('1.1', '1.1')],
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        if _older(target_version, '1.1'):
            primitive.pop('rack', None)
