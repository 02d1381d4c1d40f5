"""resobj's versioned objects.

After :func:`register_all`, the newest registered version of each object
is available here by name, e.g. ``resobj.objects.Service``.
"""


def register_all():
    """Import every object module so each class registers itself."""
    # NOTE: importing a module registers its classes; add new modules here.
    __import__('resobj.objects.instance')
    __import__('resobj.objects.service')
