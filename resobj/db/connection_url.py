"""The database URL a process uses, as configured or the embedded default.

With the settings its backend needs in the URL's query (see
:mod:`resobj.db.backends`), and the one-line explanation a command gives
when it cannot use that database.
"""

import os

import sqlalchemy as sa

from resobj.conf import paths
from resobj.db import backends
from resobj.db import translate
from resobj import exception

DATABASE_FILE = 'resobj.sqlite'


def database_url(conf):
    """The primary database URL: configured, or the embedded default.

    Raises ConfigurationError for a malformed URL, an unknown or
    unsupported dialect or a driver that is not installed, before
    anything tries to connect.
    """
    if conf.database.connection:
        url = parse(conf.database.connection, 'connection')
    else:
        url = sa.engine.make_url('sqlite:///' + os.path.join(
            paths.state_dir(conf), DATABASE_FILE))
    return with_backend_settings(conf, url)


def display(conf):
    """The database ``conf`` names, for a user to read.

    The configured URL without its password, or the embedded SQLite
    file, said to be the default: a command that read the embedded
    database when another was meant says so.
    """
    if conf.database.connection:
        return parse(conf.database.connection, 'connection').render_as_string(
            hide_password=True)
    return ('the embedded SQLite database %s (no [database] connection is '
            'configured)' % backend(database_url(conf)).database_file(
                database_url(conf)))


def parse(text, option):
    """The URL ``text`` of ``[database] option``, its driver importable."""
    try:
        url = sa.engine.make_url(text)
    except sa.exc.ArgumentError:
        raise exception.ConfigurationError(
            reason='[database] %s is not a database URL' % option)
    try:
        url.get_dialect().import_dbapi()
    except sa.exc.NoSuchModuleError:
        raise exception.ConfigurationError(
            reason='[database] %s names an unknown database type %r'
            % (option, url.drivername))
    except ImportError as exc:
        raise exception.ConfigurationError(
            reason='[database] %s needs the Python driver %r, which is not '
            'installed (pip install "resobj[mysql]" or '
            '"resobj[postgresql]")' % (option, exc.name))
    backend(url, option)
    return url


def backend(url, option='connection'):
    """The :mod:`resobj.db.backends` module for ``url``."""
    try:
        return backends.for_dialect(url.get_dialect().name)
    except ValueError as exc:
        raise exception.ConfigurationError(
            reason='[database] %s: %s' % (option, exc))


def with_backend_settings(conf, url):
    """``url`` with the connection settings its backend needs."""
    settings = backend(url).url_query(conf, url.query)
    return url.update_query_dict(settings) if settings else url


def database_missing(conf):
    """Whether ``conf`` names an embedded SQLite file that does not exist.

    Connecting would create it; commands that only read call this first.
    """
    url = database_url(conf)
    path = backend(url).database_file(url)
    return path is not None and not os.path.exists(path)


def ensure_state_dir(url):
    """Create the directory of a file-backed SQLite URL, or explain why not."""
    path = backend(url).database_file(url)
    if path is None:
        return
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise exception.StateDirectoryNotWritable(
            path=directory, reason=exc.strerror or exc)
    if not os.access(directory, os.W_OK | os.X_OK):
        raise exception.StateDirectoryNotWritable(
            path=directory, reason='permission denied')


def explain_unavailable(conf, exc):
    """One line for a command that could not use the database.

    What failed, the option that names the database (its URL without
    the password) and the driver's words, then what to do; for
    ``resobj-manage`` and for ``resobj-api`` at start.
    """
    # As configured, without the settings resobj adds.
    url = (sa.engine.make_url(conf.database.connection)
           if conf.database.connection else database_url(conf))
    url = url.render_as_string(hide_password=True)
    cause = exc.kwargs.get('cause') or exc.kwargs.get('reason', '')
    if exc.kwargs.get('reason') == translate.NO_DATABASE:
        advice = ('create the database and grant the account access to '
                  'it, or correct [database] connection')
    else:
        advice = ('check that the database server is running and '
                  'reachable from here, and that [database] connection '
                  'is right')
    return ('cannot use the database at %s ([database] connection): %s; %s'
            % (url, cause, advice))
