"""SQLAlchemy models: the schema, and nothing else.

Every table lives in the one database (compute nodes, services, instances,
migrations, PCI devices, flavors and the resource-provider tables), so a
ComputeNode's legacy columns and its provider inventory can be read in one
query and written in one transaction. Models carry no behaviour; queries
live in ``resobj.db.api``. Import a model module here so that
``BASE.metadata`` (used by the migrations test) knows every table.
"""

from resobj.db.models import allocation  # noqa: F401
from resobj.db.models import allocation_owner  # noqa: F401
from resobj.db.models.base import BASE  # noqa: F401
from resobj.db.models import call_outcome  # noqa: F401
from resobj.db.models import compute_node  # noqa: F401
from resobj.db.models import consumer  # noqa: F401
from resobj.db.models import flavor  # noqa: F401
from resobj.db.models import instance  # noqa: F401
from resobj.db.models import inventory  # noqa: F401
from resobj.db.models import inventory_usage  # noqa: F401
from resobj.db.models import migration  # noqa: F401
from resobj.db.models import pci_device  # noqa: F401
from resobj.db.models import resource_class  # noqa: F401
from resobj.db.models import resource_provider  # noqa: F401
from resobj.db.models import service  # noqa: F401
from resobj.db.models import trait  # noqa: F401
