"""NUMA topologies: a host's cells, and the cells an instance is placed on.

These objects travel only inside ComputeNode and Instance; they have no
table of their own. The database keeps them as plain JSON (see
``to_dict``/``from_dict``), independent of the object versions, so a
stored topology never needs a backport to be read.
"""

from resobj.objects import base
from resobj.objects import fields


@base.ResobjObjectRegistry.register
class NUMACell(base.ResobjObject):
    """One host NUMA cell: its CPUs and memory, and what is used of them."""

    # Version 1.0: initial version
    VERSION = '1.0'

    fields = {
        'id': fields.NonNegativeIntegerField(),
        # Host CPU ids of this cell.
        'cpuset': fields.SetOfIntegersField(),
        'memory_mb': fields.NonNegativeIntegerField(),
        # Host CPUs given to one instance alone (hw:cpu_policy=dedicated).
        'pinned_cpus': fields.SetOfIntegersField(default=set()),
        # Memory of the instances placed on this cell, in MB.
        'memory_usage': fields.NonNegativeIntegerField(default=0),
    }

    def __init__(self, context=None, **kwargs):
        super().__init__(context, **kwargs)
        # A cell without pins or usage has them empty, never unset.
        self.obj_set_defaults(*[name for name in ('pinned_cpus',
                                                  'memory_usage')
                                if name in self.fields and
                                not self.obj_attr_is_set(name)])

    @property
    def free_cpus(self):
        """Host CPUs not pinned by an instance, in id order."""
        return sorted(self.cpuset - self.pinned_cpus)

    def to_dict(self):
        return {'id': self.id, 'cpuset': sorted(self.cpuset),
                'memory_mb': self.memory_mb,
                'pinned_cpus': sorted(self.pinned_cpus),
                'memory_usage': self.memory_usage}

    @classmethod
    def from_dict(cls, data):
        return cls(id=data['id'], cpuset=set(data['cpuset']),
                   memory_mb=data['memory_mb'],
                   pinned_cpus=set(data.get('pinned_cpus', ())),
                   memory_usage=data.get('memory_usage', 0))


@base.ResobjObjectRegistry.register
class NUMATopology(base.ResobjObject):
    """A host's NUMA cells, in id order."""

    # Version 1.0: initial version, NUMACell 1.0
    VERSION = '1.0'

    fields = {
        'cells': fields.ListOfObjectsField('NUMACell'),
    }

    obj_relationships = {'cells': [('1.0', '1.0')]}

    def cell(self, cell_id):
        for cell in self.cells:
            if cell.id == cell_id:
                return cell
        raise KeyError(cell_id)

    def to_dict(self):
        return {'cells': [c.to_dict() for c in self.cells]}

    @classmethod
    def from_dict(cls, data):
        if data is None:
            return None
        return cls(cells=[NUMACell.from_dict(c) for c in data['cells']])


@base.ResobjObjectRegistry.register
class InstanceNUMACell(base.ResobjObject):
    """The part of an instance placed on one host cell."""

    # Version 1.0: initial version
    VERSION = '1.0'

    fields = {
        # The host cell (NUMACell.id) this part runs on.
        'id': fields.NonNegativeIntegerField(),
        # The guest's vCPU ids placed on that cell.
        'cpuset': fields.SetOfIntegersField(),
        'memory_mb': fields.NonNegativeIntegerField(),
        # Host CPUs the guest's vCPUs are pinned to; empty when they
        # float over the cell's CPUs (hw:cpu_policy=shared).
        'pinned_cpus': fields.SetOfIntegersField(default=set()),
    }

    def __init__(self, context=None, **kwargs):
        super().__init__(context, **kwargs)
        # A cell without pins or usage has them empty, never unset.
        self.obj_set_defaults(*[name for name in ('pinned_cpus',
                                                  'memory_usage')
                                if name in self.fields and
                                not self.obj_attr_is_set(name)])

    @property
    def pinned(self):
        return bool(self.pinned_cpus)

    def to_dict(self):
        return {'id': self.id, 'cpuset': sorted(self.cpuset),
                'memory_mb': self.memory_mb,
                'pinned_cpus': sorted(self.pinned_cpus)}

    @classmethod
    def from_dict(cls, data):
        return cls(id=data['id'], cpuset=set(data['cpuset']),
                   memory_mb=data['memory_mb'],
                   pinned_cpus=set(data.get('pinned_cpus', ())))


@base.ResobjObjectRegistry.register
class InstanceNUMATopology(base.ResobjObject):
    """The host cells an instance is placed on."""

    # Version 1.0: initial version, InstanceNUMACell 1.0
    VERSION = '1.0'

    fields = {
        'cells': fields.ListOfObjectsField('InstanceNUMACell'),
    }

    obj_relationships = {'cells': [('1.0', '1.0')]}

    @property
    def pinned(self):
        return any(cell.pinned for cell in self.cells)

    def to_dict(self):
        return {'cells': [c.to_dict() for c in self.cells]}

    @classmethod
    def from_dict(cls, data):
        if data is None:
            return None
        return cls(cells=[InstanceNUMACell.from_dict(c)
                          for c in data['cells']])


@base.ResobjObjectRegistry.register
class InstancePCIRequest(base.ResobjObject):
    """``count`` devices of the PCI alias ``alias_name``."""

    # Version 1.0: initial version
    VERSION = '1.0'

    fields = {
        'alias_name': fields.StringField(),
        'count': fields.NonNegativeIntegerField(),
    }

    def to_dict(self):
        return {'alias_name': self.alias_name, 'count': self.count}

    @classmethod
    def from_dict(cls, data):
        return cls(alias_name=data['alias_name'], count=data['count'])


def to_db(value):
    """A topology or a list of PCI requests as stored: plain data or None."""
    if value is None:
        return None
    if isinstance(value, list):
        return [item.to_dict() for item in value]
    return value.to_dict()


def pci_requests_from_db(data):
    if data is None:
        return None
    return [InstancePCIRequest.from_dict(item) for item in data]
