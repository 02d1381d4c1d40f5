"""The ``OpenStack-API-Version: placement X.Y`` negotiation.

Every request gets a version: the header's, ``latest`` for the newest, or
1.0 when the header is absent (so clients written before microversions
keep their behaviour). A malformed value is a 400; one outside the
supported range is a 406 whose error carries ``min_version`` and
``max_version`` so a client can pick another.
"""

import re

SERVICE_TYPE = 'placement'
HEADER = 'OpenStack-API-Version'
VARY = 'openstack-api-version'

# (1, 39) is placement's Xena-and-later maximum; every version in between
# is served, each behaving as the reference's history describes.
MIN_VERSION = (1, 0)
MAX_VERSION = (1, 39)

# Any X.Y of decimal numbers is well formed (0.9 and 1.01 included, as
# in placement): out of range is then a 406, not a 400. Bounded so a
# thousand-digit number is malformed rather than an int() error.
_VERSION_RE = re.compile(r'^([0-9]{1,9})\.([0-9]{1,9})\Z')


class Version(tuple):
    """A (major, minor) tuple that prints as ``X.Y``."""

    def __new__(cls, major, minor):
        return super().__new__(cls, (major, minor))

    def __str__(self):
        return '%d.%d' % self

    def matches(self, min_version=None, max_version=None):
        return ((min_version is None or self >= min_version) and
                (max_version is None or self <= max_version))


MIN = Version(*MIN_VERSION)
MAX = Version(*MAX_VERSION)


class MalformedVersion(ValueError):
    pass


class UnacceptableVersion(ValueError):
    def __init__(self, version):
        super().__init__(
            'Unacceptable version header: %s' % (version,))
        self.version = version


def _placement_value(header):
    """The placement part of a header that may name several services.

    As placement reads the header: each comma-separated part is a
    service and what follows it (``placement 1.2 x`` names the version
    ``1.2 x``, a malformed one); a part that names no version is
    skipped, and of several naming placement the last one counts.
    """
    found = None
    for part in header.split(','):
        words = part.split(None, 1)
        if len(words) == 2 and words[0].lower() == SERVICE_TYPE:
            found = words[1].strip()
    return found


def _why_malformed(value):
    """Placement's reason for a malformed version, or None.

    Placement adds to the 400 the error of the conversion that failed:
    Python's own message for a major and minor split at the first dot
    and each read as an integer. Log scrapers and clients read the two
    alike only if the reason is there too.
    """
    parts = value.split('.', 1)
    for part in parts:
        try:
            int(part)
        except ValueError as exc:
            return str(exc)
    if len(parts) < 2:
        return ("Version.__new__() missing 1 required positional "
                "argument: 'minor'")
    return None


def parse(header):
    """The Version a request asks for; raises Malformed/Unacceptable."""
    if header is None:
        return MIN
    value = _placement_value(header)
    if value is None:
        return MIN
    if value.lower() == 'latest':
        return MAX
    match = _VERSION_RE.match(value)
    if not match:
        reason = _why_malformed(value)
        raise MalformedVersion('invalid version string: %s%s' % (
            value, '; ' + reason if reason else ''))
    version = Version(int(match.group(1)), int(match.group(2)))
    if not version.matches(MIN, MAX):
        raise UnacceptableVersion(version)
    return version


def header_value(version):
    return '%s %s' % (SERVICE_TYPE, version)


def available(min_version=None, max_version=None, status=404):
    """Mark a handler as served only in [min_version, max_version].

    Outside the range the router answers ``status``: 404 where the whole
    resource is newer than the request, 405 where only the method is.
    """
    def decorate(handler):
        handler.min_version = Version(*min_version) if min_version else None
        handler.max_version = Version(*max_version) if max_version else None
        handler.unavailable_status = status
        return handler
    return decorate


def serves(handler, version):
    return version.matches(getattr(handler, 'min_version', None),
                           getattr(handler, 'max_version', None))
