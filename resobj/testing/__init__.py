"""Test fixtures for projects that build on resobj's objects.

The public API (doc/source/user/testing.rst):

:class:`ObjectChecker`
    the version checks of a project's own objects: pinned fingerprints,
    version histories, shape records, samples and backports;
:class:`OlderRelease`
    a fixture running an older resobj release (a wheel or a git commit)
    in processes of its own, through which a project round-trips its
    objects;
:class:`Conversion`
    a field an older version holds in another form, for both.
"""

from resobj.testing.checker import ObjectChecker  # noqa: F401
from resobj.testing.compare import Conversion  # noqa: F401
from resobj.testing.release import OlderRelease  # noqa: F401
