"""resobj-status: whether the cloud is ready for the next upgrade step.

``resobj-status upgrade check`` runs the checks of :class:`Checks` with
oslo.upgradecheck, which prints their results as a table (as JSON with
``--json``) and exits with the worst result's code: 0 success, 1
warning, 2 failure; the table is followed by every service with its
version and state. The checks only read. An error that stops them
(bad configuration, a database that cannot be reached) ends with one
line on stderr and exit status 255, oslo.upgradecheck's status for a
check that raised; ``--debug`` adds the traceback.
"""

import sys

from oslo_config import cfg
from oslo_log import log as logging
from oslo_upgradecheck import upgradecheck
from oslo_utils import versionutils

from resobj.cmd import options
from resobj.compute import rpcapi as compute_rpcapi
from resobj.conductor import rpcapi as conductor_rpcapi
from resobj import context as resobj_context
from resobj.db.api import service as service_db
from resobj.db import connection_url
from resobj.db import facade
from resobj.db import migration
from resobj.db import online_migrations
from resobj import exception
from resobj.objects import service as service_obj
from resobj import upgrade_levels
from resobj import version

LOG = logging.getLogger(__name__)
PROG = 'resobj-status'
DESCRIPTION = ('Check whether the cloud is ready for the next upgrade step '
               '("upgrade check"), and list its services with their '
               'versions.')

# What oslo.upgradecheck returns when a check raises, "so it's not
# confused with the upgrade check exit codes".
ERROR = 255

# The oldest service version that runs beside this release's: the
# previous release's (N-1). An older service may read or write data in a
# form this release no longer handles.
OLDEST_SUPPORTED_SERVICE_VERSION = (
    service_obj.PREVIOUS_RELEASE_SERVICE_VERSION)

# How many services a result names before it only counts the rest.
NAMED = 10

SUCCESS = upgradecheck.Code.SUCCESS
WARNING = upgradecheck.Code.WARNING
FAILURE = upgradecheck.Code.FAILURE


def _result(code, *sentences):
    return upgradecheck.Result(code, ' '.join(sentences))


def _services(rows):
    """'resobj-compute on c1 (version 0), ...': at most NAMED of them."""
    names = ['%s on %s (version %d)' % (r.binary, r.host, r.version)
             for r in rows[:NAMED]]
    if len(rows) > NAMED:
        names.append('and %d more' % (len(rows) - NAMED))
    return ', '.join(names)


def _state(row):
    """'up', 'down since ...', 'forced down'; and 'disabled'."""
    if row.forced_down:
        state = 'forced down'
    elif not row.live:
        state = 'down (last report %s)' % row.last_seen_up.strftime(
            '%Y-%m-%d %H:%M:%S')
    elif row.last_seen_up is None:
        state = 'up (never reported)'
    else:
        state = 'up'
    return state + (', disabled' if row.disabled else '')


class Checks(upgradecheck.UpgradeCommands):
    """The upgrade checks, on the database the facade is configured with.

    ``conf`` supplies ``[DEFAULT] service_down_time`` and the
    ``[upgrade_levels]`` caps: run the command with the services'
    configuration for the caps to be theirs.
    """

    def __init__(self, conf):
        super().__init__()
        self.conf = conf
        self.context = resobj_context.get_admin_context()

    def _schema(self):
        """(revision, head, newer): the database's and this release's."""
        current = migration.db_version()
        return current, migration.head_revision(), migration.is_newer(
            current)

    def _not_checked(self, needs_head=False):
        """A result for a check the schema does not allow, or None.

        Every check but the schema's needs a schema; the online data
        migrations' counts need the newest one (or a newer release's,
        which only adds to it).
        """
        current, head, newer = self._schema()
        if current is None:
            return _result(WARNING, 'Not checked: the database has no '
                           'schema (see the Database schema check).')
        if needs_head and current != head and not newer:
            return _result(WARNING, 'Not checked: the database schema is '
                           'at %s, not %s (see the Database schema '
                           'check).' % (current, head))
        return None

    def _check_schema(self):
        # Which database was read, first: the embedded one, read for
        # want of a configuration file, must not pass for the cloud's.
        checked = 'Checked %s.' % connection_url.display(self.conf)
        current, head, newer = self._schema()
        if current is None:
            return _result(FAILURE, checked, 'The database has no schema. '
                           'Run "resobj-manage db sync".')
        if newer:
            return _result(
                FAILURE, checked, 'The database is at revision %s, which '
                'this release does not know (its newest is %s): a newer '
                'release has upgraded it. Run that release\'s '
                'resobj-status.' % (current, head))
        if current != head:
            return _result(
                FAILURE, checked, 'The database is at revision %s; this '
                'release needs %s. Run "resobj-manage db sync" with this '
                'release before starting its services.' % (current, head))
        return _result(SUCCESS, checked, 'At revision %s, the newest this '
                       'release knows.' % head)

    def _check_online_migrations(self):
        skipped = self._not_checked(needs_head=True)
        if skipped:
            return skipped
        left = [(name, count) for name, count in
                online_migrations.count_left(self.context, self.conf)
                if count]
        if not left:
            return _result(SUCCESS, 'No rows left to migrate.')
        return _result(
            FAILURE, 'Rows left to migrate: %s. Once every service runs '
            'this release, run "resobj-manage db online_data_migrations" '
            'until it exits 0; the next release needs them done.'
            % ', '.join('%s %d' % item for item in left))

    def _old_services(self):
        """The services below this release's version; live ones among them.

        "Live": reported within [DEFAULT] service_down_time seconds.
        """
        return service_db.older_than(self.context,
                                     service_obj.SERVICE_VERSION,
                                     self.conf.service_down_time)

    def _check_service_versions(self):
        skipped = self._not_checked()
        if skipped:
            return skipped
        old = self._old_services()
        too_old = [r for r in old
                   if r.version < OLDEST_SUPPORTED_SERVICE_VERSION]
        live = [r for r in too_old if r.live]
        dead = [r for r in too_old if not r.live]
        details = []
        if live:
            details.append(
                '%d live services run a service version older than %d, '
                'the oldest this release runs beside: %s. Upgrade them to '
                'the previous release first.'
                % (len(live), OLDEST_SUPPORTED_SERVICE_VERSION,
                   _services(live)))
        if dead:
            details.append(
                '%d services older than version %d have not reported for '
                '%d seconds ([DEFAULT] service_down_time) and no longer '
                'hold the cloud back: %s. Delete the records of those '
                'that are gone.'
                % (len(dead), OLDEST_SUPPORTED_SERVICE_VERSION,
                   self.conf.service_down_time, _services(dead)))
        previous = [r for r in old if r.live and
                    r.version >= OLDEST_SUPPORTED_SERVICE_VERSION]
        if previous:
            details.append(
                '%d live services still run the previous release\'s '
                'service version %d: %s. They run beside this release '
                '(with [upgrade_levels] caps, or auto, on the services '
                'that call them); upgrade them to finish the upgrade.'
                % (len(previous), OLDEST_SUPPORTED_SERVICE_VERSION,
                   _services(previous)))
        if details:
            return _result(FAILURE if live else WARNING, *details)
        return _result(SUCCESS, 'No live service runs a version older '
                       'than %d, this release\'s.'
                       % service_obj.SERVICE_VERSION)

    def _check_version_caps(self):
        """Both caps: the worst of their results, both explained."""
        results = [self._check_cap('conductor', conductor_rpcapi.VERSION),
                   self._check_cap('compute', compute_rpcapi.VERSION)]
        code = max(r.code for r in results)
        return _result(code, *(r.details for r in results))

    def _check_cap(self, api, known):
        cap = getattr(self.conf.upgrade_levels, api)
        if cap is None:
            return _result(SUCCESS, '[upgrade_levels] %s is not set: calls '
                           'use the newest %s RPC API version, %s.'
                           % (api, api, known))
        if cap == upgrade_levels.AUTO:
            return _result(SUCCESS, '[upgrade_levels] %s = auto: the '
                           'services cap calls at what the oldest live %s '
                           'service serves while one runs an older '
                           'version.' % (api, api))
        try:
            newer = (versionutils.convert_version_to_tuple(cap)
                     > versionutils.convert_version_to_tuple(known))
        except ValueError:
            return _result(FAILURE, '[upgrade_levels] %s = %s is not a '
                           'version such as %s, nor auto.'
                           % (api, cap, known))
        if newer:
            return _result(
                FAILURE, '[upgrade_levels] %s = %s is newer than the %s '
                'RPC API this release knows (%s). Set it to the version of '
                'the oldest %s service running, or unset it once all of '
                'them run this release.' % (api, cap, api, known, api))
        skipped = self._not_checked()
        if skipped:
            return skipped
        live = [r for r in self._old_services() if r.live]
        if not live:
            return _result(
                WARNING, '[upgrade_levels] %s = %s, but every live service '
                'runs service version %d, this release\'s: lift the cap '
                '(remove the option and restart the services that set it).'
                % (api, cap, service_obj.SERVICE_VERSION))
        return _result(
            SUCCESS, '[upgrade_levels] %s = %s while %d live services run '
            'older versions: %s.' % (api, cap, len(live), _services(live)))

    def services_listing(self):
        """Every service with its version and state, as lines of text."""
        rows = service_db.get_all_with_liveness(self.context,
                                                self.conf.service_down_time)
        head = ('Services (this release runs service version %d):'
                % service_obj.SERVICE_VERSION)
        if not rows:
            return head + '\n  none registered'
        table = [('Binary', 'Host', 'Version', 'State')] + [
            (r.binary, r.host, str(r.version), _state(r)) for r in rows]
        widths = [max(len(row[i]) for row in table) for i in range(3)]
        return '\n'.join([head] + [
            '  ' + '  '.join(cell.ljust(width) for cell, width in
                             zip(row, widths + [0])).rstrip()
            for row in table])

    _upgrade_checks = (
        ('Database schema', _check_schema),
        ('Online data migrations', _check_online_migrations),
        ('Service versions', _check_service_versions),
        ('Upgrade levels', _check_version_caps),
    )


class _Command(Checks):
    """The checks as ``upgrade check`` runs them, in a process of its own.

    oslo.upgradecheck parses the configuration and then calls
    :meth:`check` at once: logging and the database facade are set up
    here, and an error that stops the checks becomes one line.
    """

    def check(self):
        logging.setup(self.conf, 'resobj')
        try:
            options.check(self.conf)
            if connection_url.database_missing(self.conf):
                # Checking must not create the database.
                path = connection_url.database_url(self.conf).database
                raise exception.DatabaseSchemaError(
                    reason='no database file %s; run "resobj-manage db '
                           'sync"' % path)
            facade.configure(self.conf)
            code = super().check()
            if not self.conf.command.json and self._schema()[0]:
                print(self.services_listing())
            return code
        except exception.DatabaseUnavailable as exc:
            return _fail(connection_url.explain_unavailable(self.conf, exc),
                         self.conf)
        except exception.ResobjException as exc:
            return _fail(str(exc), self.conf)


def _fail(message, conf=None):
    print('%s: error: %s' % (PROG, message), file=sys.stderr)
    if conf is not None and conf.debug:
        LOG.exception('Details')
    return ERROR


class _Options(cfg.ConfigOpts):
    """The command's options, parsed with its name, description, version.

    oslo.upgradecheck's main() parses the command line itself, naming
    the project only.
    """

    def __call__(self, *args, **kwargs):
        kwargs.setdefault('prog', PROG)
        kwargs.setdefault('description', DESCRIPTION)
        kwargs.setdefault('version', version.version_option())
        return super().__call__(*args, **kwargs)


def main(argv=None):
    conf = _Options()
    options.register_all(conf)
    # alembic narrates reading the schema revision at INFO.
    logging.set_defaults(default_log_levels=logging.get_default_log_levels()
                         + ['alembic=WARN'])
    # A check should fail at once when the database is down, not retry
    # for minutes as a long-running service does; a configured
    # [database] max_retries still wins.
    conf.set_default('max_retries', 0, group='database')
    try:
        return upgradecheck.main(
            conf, 'resobj', _Command(conf),
            argv=sys.argv[1:] if argv is None else argv)
    except cfg.Error as exc:
        return _fail(str(exc).splitlines()[0])


if __name__ == '__main__':
    sys.exit(main())
