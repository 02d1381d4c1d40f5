"""Which test servers this run can use, decided once per backend.

PostgreSQL and MariaDB/MySQL tests need a server that accepts the
``openstack_citest`` account (``tools/test-setup.sh`` creates it);
RabbitMQ tests need a broker that accepts the test transport URL. A
developer's machine often has none of them, or a server without the test
account. Those tests must then be reported as *skipped, with the reason*,
never as failures; with ``RESOBJ_TEST_REQUIRE_BACKENDS`` set (CI) the same
situation fails the test instead.

Each backend is probed once per test process, with a short connect
timeout, and the answer is kept: a machine with nothing installed pays
one refused connection per backend, not one per test.

Call :func:`require` or :func:`provisioning_backend` from a test's
``setUp`` (or a gabbi fixture's ``start_fixture``), never from a
``fixtures.Fixture``'s ``_setUp``: the fixtures library turns a skip
raised there into a set-up error, and the test fails instead of
skipping (``tests/unit/test_backends.py`` checks every test module).

Every skip reason starts with ``SKIP_PREFIX``, so that
``tools/check_test_results.py`` can tell a backend skip from any other.
"""

import functools
import os
import unittest

from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import provision
import sqlalchemy as sa

REQUIRE_BACKENDS = os.environ.get(
    'RESOBJ_TEST_REQUIRE_BACKENDS', '').lower() in ('1', 'true', 'yes')

SKIP_PREFIX = 'backend unavailable'

# A server that drops packets instead of refusing them must not hold the
# run for the drivers' default (PyMySQL 10 s, libpq forever).
CONNECT_TIMEOUT = 5

DATABASES = ('postgresql', 'mysql')

DEFAULT_TRANSPORT_URL = 'rabbit://guest:guest@127.0.0.1:5672/'

_DB_HINT = ('start the server and run tools/test-setup.sh to create the '
            'openstack_citest account, or name other servers in '
            'OS_TEST_DBAPI_ADMIN_CONNECTION')
_HINTS = {
    'postgresql': _DB_HINT,
    'mysql': _DB_HINT,
    'rabbitmq': 'start it with "rabbitmq-server -detached", or name '
                'another broker in RESOBJ_TEST_TRANSPORT_URL',
}


class BackendRequired(AssertionError):
    """A backend the run requires is unusable.

    An AssertionError, so that test runners report a failure.
    """


def transport_url():
    """The RabbitMQ URL the messaging tests use."""
    return os.environ.get('RESOBJ_TEST_TRANSPORT_URL', DEFAULT_TRANSPORT_URL)


def database_url(name):
    """The admin URL oslo.db's provisioning uses for backend ``name``.

    oslo.db reads ``OS_TEST_DBAPI_ADMIN_CONNECTION`` (set or defaulted in
    ``resobj/tests/__init__.py``) once, at import.
    """
    try:
        backend = provision.Backend.backends_by_database_type[name]
    except KeyError:
        return None
    return backend.url


def probe_database(url):
    """None if ``url`` accepts a connection, else why not (one line)."""
    url = sa.engine.make_url(url)
    where = '%s@%s' % (url.username, url.host or 'localhost')
    if url.port:
        where += ':%d' % url.port
    # libpq, PyMySQL and psycopg2 all take connect_timeout; SQLite has
    # nothing to connect to.
    connect_args = ({} if url.get_backend_name() == 'sqlite'
                    else {'connect_timeout': CONNECT_TIMEOUT})
    try:
        engine = sa.create_engine(url, poolclass=sa.pool.NullPool,
                                  connect_args=connect_args)
    except (ImportError, sa.exc.NoSuchModuleError) as exc:
        return 'no driver for %s installed (%s)' % (url.drivername, exc)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text('SELECT 1'))
    except sa.exc.DBAPIError as exc:
        return 'cannot connect as %s with %s: %s' % (
            where, url.drivername, _first_line(exc.orig))
    finally:
        engine.dispose()
    return None


def probe_rabbitmq(url):
    """None if the broker at ``url`` accepts a connection, else why not."""
    # kombu comes with oslo.messaging; only the probe needs it directly.
    import kombu

    connection = kombu.Connection(url.replace('rabbit://', 'amqp://', 1),
                                  connect_timeout=CONNECT_TIMEOUT)
    try:
        connection.connect()
    except Exception as exc:  # noqa: B902 - any failure means "unusable"
        where = connection.as_uri()
        return 'cannot connect to %s: %s' % (where, _first_line(exc))
    finally:
        connection.release()
    return None


def _first_line(exc):
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


@functools.lru_cache(maxsize=None)
def unavailable_reason(name):
    """Why backend ``name`` cannot be used by this run, or None.

    Probed once per process; ``name`` is ``postgresql``, ``mysql`` or
    ``rabbitmq``.
    """
    if name == 'rabbitmq':
        problem = probe_rabbitmq(transport_url())
    elif name in DATABASES:
        url = database_url(name)
        if url is None:
            problem = 'OS_TEST_DBAPI_ADMIN_CONNECTION names no %s URL' % name
        else:
            problem = probe_database(url)
    else:
        raise ValueError('unknown test backend %r' % name)
    if problem is None:
        return None
    return '%s (%s): %s; %s' % (SKIP_PREFIX, name, problem, _HINTS[name])


def require(name):
    """Skip the calling test if backend ``name`` is unusable.

    With ``RESOBJ_TEST_REQUIRE_BACKENDS`` set, fail it instead.
    """
    reason = unavailable_reason(name)
    if reason is None:
        return
    if REQUIRE_BACKENDS:
        raise BackendRequired(reason + ' (RESOBJ_TEST_REQUIRE_BACKENDS is '
                              'set, so this is a failure)')
    raise unittest.SkipTest(reason)


def provisioning_backend(name):
    """oslo.db's provisioning ``Backend`` for ``name``, after require().

    oslo.db probes the server itself on first use; if it still refuses
    (the server went away since this run's probe), that is reported like
    the probe's refusal, not as an error of the calling test.
    """
    require(name)
    try:
        return provision.Backend.backend_for_database_type(name)
    except db_exc.BackendNotAvailable as exc:
        reason = '%s (%s): %s' % (SKIP_PREFIX, name, exc)
        if REQUIRE_BACKENDS:
            raise BackendRequired(reason)
        raise unittest.SkipTest(reason)
