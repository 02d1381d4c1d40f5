"""resobj-manage: schema and object management from the command line.

Every failure a user can cause (bad configuration, unreachable database,
unwritable state directory) ends with one line on stderr and a non-zero
exit; ``--debug`` adds the traceback.
"""

import json
import sys

from oslo_config import cfg
from oslo_log import log as logging
import prettytable
import webob

from resobj.api import errors as api_errors
from resobj.api.handlers import allocation_candidate as ac_handler
from resobj.api import microversion
from resobj.cmd import options
from resobj import context as resobj_context
from resobj.db.api import resource_class as resource_class_db
from resobj.db.api import trait as trait_db
from resobj.db.api import usage as usage_db
from resobj.db import connection_url
from resobj.db import facade
from resobj.db import migration
from resobj.db import online_migrations
from resobj import exception
from resobj.objects import allocation_candidate as ac_obj
from resobj.objects import fingerprint
from resobj import version

LOG = logging.getLogger(__name__)
PROG = 'resobj-manage'
DESCRIPTION = ('Manage a resobj database: its schema, online data '
               'migrations, object fingerprints, capacity and candidate '
               'queries.')


def db_sync(conf):
    facade.configure(conf)
    migration.db_sync()
    # The standard resource classes and traits are data every process
    # relies on; the schema is not usable without them.
    ctx = resobj_context.get_admin_context()
    classes = resource_class_db.ensure_sync(ctx)
    traits = trait_db.ensure_sync(ctx)
    print('Database %s is at revision %s (%d standard resource classes '
          'and %d standard traits added).'
          % (_display_url(conf), migration.db_version(), classes, traits))


def db_version(conf):
    head = migration.head_revision()
    if connection_url.database_missing(conf):
        # Reading the version must not create the database.
        print('empty: no database at %s (newest known: %s)'
              % (_display_url(conf), head))
        return
    facade.configure(conf)
    current = migration.db_version()
    print('%s (newest known: %s)' % (current or 'empty', head))


def db_online_data_migrations(conf):
    """Exit 0 when all is done, 1 when work remains, 2 on errors."""
    max_count = conf.category.max_count
    if max_count is not None and max_count < 1:
        raise exception.Invalid('--max-count must be at least 1')
    facade.configure(conf)
    results, remaining = online_migrations.run(
        resobj_context.get_admin_context(),
        online_migrations.registered(conf), max_count=max_count,
        progress=_print_progress)
    print(_migrations_table(results))
    errors = [r for r in results if r.error]
    for result in errors:
        print('%s: error: %s failed: %s' % (PROG, result.name, result.error),
              file=sys.stderr)
    if errors:
        return 2
    if remaining:
        print('More rows may need migrating: run the command again.')
        return 1
    return 0


def _print_progress(batch, results):
    print('Batch %d: %d rows found, %d migrated so far'
          % (batch, sum(r.found for r in results),
             sum(r.done for r in results)), flush=True)


def _migrations_table(results):
    """Found and done per migration, in nova's and placement's layout."""
    table = prettytable.PrettyTable(
        ['Migration', 'Total Needed', 'Completed'])
    table.align = 'r'
    table.align['Migration'] = 'l'
    for r in results:
        table.add_row([r.name, r.found, 'error' if r.error else r.done])
    return table.get_string()


def capacity(conf):
    """Every provider's capacity and usage, and the cloud's totals.

    A shared pool (trait MISC_SHARES_VIA_AGGREGATE) is one provider with
    its own lines; the providers it serves only name it, so the totals
    count it once.
    """
    if connection_url.database_missing(conf):
        # Reporting must not create the database.
        raise exception.DatabaseSchemaError(
            reason='no database at %s; run "%s db sync"'
            % (_display_url(conf), PROG))
    facade.configure(conf)
    report = usage_db.capacity_report(resobj_context.get_admin_context())
    if conf.category.format == 'json':
        print(json.dumps(report, indent=4, sort_keys=True))
    else:
        print(_format_capacity(report))


def candidates_explain(conf):
    """Why a GET /allocation_candidates query finds no (or few) candidates.

    The query string as the API takes it at the newest microversion
    (or --microversion); the same checks, the same 400 texts, here one
    line on stderr.
    """
    if connection_url.database_missing(conf):
        raise exception.DatabaseSchemaError(
            reason='no database at %s; run "%s db sync"'
            % (_display_url(conf), PROG))
    try:
        version = microversion.parse('placement %s'
                                     % conf.category.microversion)
    except (microversion.MalformedVersion,
            microversion.UnacceptableVersion) as exc:
        raise exception.Invalid(message='bad --microversion: %s' % exc)
    request = webob.Request.blank(
        '/allocation_candidates?' + conf.category.query.lstrip('?'))
    try:
        asked = ac_handler.parse(request, version)
    except api_errors.HTTPError as exc:
        raise exception.Invalid(message='bad query: %s' % exc.detail)
    facade.configure(conf)
    found = ac_obj.AllocationCandidates.explain(
        resobj_context.get_admin_context(), asked.groups,
        group_policy=asked.group_policy, root_required=asked.root_required,
        root_forbidden=asked.root_forbidden,
        same_subtree=asked.same_subtree, closest=conf.category.closest)
    if conf.category.format == 'json':
        print(json.dumps(found.as_dict(), indent=4, sort_keys=True))
    else:
        print('\n'.join(found.lines()))


def _format_capacity(report):
    names = {p['uuid']: p['name'] for p in report['providers']}
    rows = [('Provider', 'Class', 'Total', 'Reserved', 'Ratio', 'Capacity',
             'Used', 'Free', 'Sharing')]
    for provider in report['providers']:
        if provider['sharing']:
            sharing = 'shares with: %s' % (', '.join(sorted(
                names[u] for u in provider['shares_with'])) or '-')
        elif provider['shared_from']:
            sharing = 'uses: %s' % ', '.join(sorted(
                names[u] for u in provider['shared_from']))
        else:
            sharing = ''
        for inv in provider['inventories'] or [None]:
            if inv is None:
                rows.append((provider['name'], '-', '', '', '', '', '', '',
                             sharing))
                continue
            rows.append((provider['name'], inv['resource_class'],
                         str(inv['total']), str(inv['reserved']),
                         '%g' % inv['allocation_ratio'],
                         str(inv['capacity']), str(inv['used']),
                         str(inv['free']), sharing))
    totals = [('Class', 'Total', 'Reserved', 'Capacity', 'Used', 'Free')]
    totals += [(t['resource_class'], str(t['total']), str(t['reserved']),
                str(t['capacity']), str(t['used']), str(t['free']))
               for t in report['totals']]
    return '\n'.join([
        _format_rows(rows), '',
        'Cloud totals, each provider counted once (%d providers, '
        '%d sharing):' % (len(report['providers']), sum(
            1 for p in report['providers'] if p['sharing'])),
        _format_rows(totals)])


def objects_list(conf):
    print(_format_table(fingerprint.fingerprints()))


def objects_fingerprints(conf):
    prints = fingerprint.fingerprints()
    if conf.category.check:
        return _check_fingerprints(conf.category.check, prints)
    if conf.category.format == 'table':
        print(_format_table(prints))
    else:
        print(json.dumps(prints, indent=4, sort_keys=True))


# What a project that pinned the fingerprints does about each change.
_PIN_ADVICE = {
    fingerprint.UNVERSIONED:
        'changed without a version bump: a resobj bug; report it, do not '
        're-pin',
    fingerprint.NEWER:
        'new version: read its version history, adapt, then re-pin',
    fingerprint.OLDER:
        'older than pinned: install the pinned resobj, or re-pin on purpose',
    fingerprint.REMOVED:
        'gone from resobj: stop using it, then re-pin',
}


def _check_fingerprints(path, prints):
    """Exit 0 if the pins in ``path`` hold, 1 if not, 2 if unreadable."""
    try:
        with open(path, encoding='utf-8') as f:
            pinned = json.load(f)
        if not isinstance(pinned, dict):
            raise ValueError('not a JSON object of {object: fingerprint}')
        for name, value in pinned.items():
            try:
                fingerprint.split(value)
            except ValueError as exc:
                raise ValueError('%s: %s' % (name, exc))
    except (OSError, ValueError) as exc:
        print('%s: error: cannot check %s: %s' % (PROG, path, exc),
              file=sys.stderr)
        return 2
    changes = fingerprint.compare(pinned, prints)
    failing = [c for c in changes if c.kind != fingerprint.UNPINNED]
    new = [c.objname for c in changes if c.kind == fingerprint.UNPINNED]
    if failing:
        rows = [('Object', 'Pinned', 'Current', 'What to do')]
        rows += [(c.objname, c.pinned, c.current or '-',
                  _PIN_ADVICE[c.kind]) for c in failing]
        print(_format_rows(rows))
        print('\n%d of %d pinned objects changed. To re-pin: %s objects '
              'fingerprints > %s' % (len(failing), len(pinned), PROG, path))
    else:
        print('%d pinned objects unchanged.' % len(pinned))
    if new:
        print('Not pinned (pin them if you use them): %s' % ', '.join(new))
    return 1 if failing else 0


def _format_table(prints):
    rows = [('Object', 'Version', 'Fingerprint')]
    rows += [(name, value.split('-', 1)[0], value)
             for name, value in sorted(prints.items())]
    return _format_rows(rows)


def _format_rows(rows):
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return '\n'.join(
        '  '.join(cell.ljust(width) for cell, width in zip(row, widths))
        .rstrip() for row in rows)


def _display_url(conf):
    url = connection_url.database_url(conf)
    if 'timeout' not in (conf.database.connection or ''):
        # The busy timeout resobj adds to SQLite URLs is not the user's.
        url = url.difference_update_query(['timeout'])
    return url.render_as_string(hide_password=True)


def _add_parsers(subparsers):
    db = subparsers.add_parser('db', help='database schema')
    db_actions = db.add_subparsers(dest='action', metavar='ACTION')
    db_actions.required = True
    parser = db_actions.add_parser(
        'sync', help='create the schema, or upgrade it to the newest')
    parser.set_defaults(func=db_sync)
    parser = db_actions.add_parser(
        'version', help='print the schema revision of the database')
    parser.set_defaults(func=db_version)
    parser = db_actions.add_parser(
        'online_data_migrations',
        help='rewrite rows left in old formats, in batches; exit 0 when '
             'all is done, 1 when work remains, 2 on errors')
    parser.add_argument('--max-count', type=int, metavar='N',
                        help='migrate at most N rows in all (default: '
                             'every row left)')
    parser.set_defaults(func=db_online_data_migrations)

    parser = subparsers.add_parser(
        'capacity',
        help='capacity and usage per provider, and the cloud totals, '
             'counting shared providers once')
    parser.add_argument('--format', choices=('table', 'json'),
                        default='table',
                        help='a table to read, or JSON (default: table)')
    parser.set_defaults(func=capacity)

    candidates = subparsers.add_parser('candidates',
                                       help='allocation candidates')
    candidate_actions = candidates.add_subparsers(dest='action',
                                                  metavar='ACTION')
    candidate_actions.required = True
    parser = candidate_actions.add_parser(
        'explain',
        help='where the providers of a candidate request drop out: counts '
             'per request group and step, the first step nothing passes, '
             'and the providers that came closest')
    parser.add_argument(
        'query', help="a GET /allocation_candidates query string, such as "
                      "'resources=VCPU:2&required=HW_CPU_X86_AVX'")
    parser.add_argument('--microversion', default='%d.%d'
                        % microversion.MAX_VERSION,
                        help='parse the query as at this placement '
                             'microversion (default: the newest)')
    parser.add_argument('--closest', type=int, default=3, metavar='N',
                        help='name N providers that came closest, for a '
                             'group no provider passes (default: 3)')
    parser.add_argument('--format', choices=('text', 'json'),
                        default='text',
                        help='text to read, or JSON (default: text)')
    parser.set_defaults(func=candidates_explain)

    objs = subparsers.add_parser('objects', help='versioned objects')
    obj_actions = objs.add_subparsers(dest='action', metavar='ACTION')
    obj_actions.required = True
    parser = obj_actions.add_parser(
        'list', help='every registered object, its version and fingerprint')
    parser.set_defaults(func=objects_list)
    parser = obj_actions.add_parser(
        'fingerprints',
        help='the fingerprints to pin downstream, as JSON by default; '
             'with --check, compare them with pinned ones')
    parser.add_argument('--format', choices=('json', 'table'),
                        default='json',
                        help='JSON to pin, or a table to read (default: '
                             'json)')
    parser.add_argument(
        '--check', metavar='FILE',
        help='compare with the fingerprints pinned in FILE (this command\'s '
             'JSON): exit 0 when none changed, 1 with a table of the '
             'changes and what to do, 2 when FILE cannot be read (default: '
             'print them)')
    parser.set_defaults(func=objects_fingerprints)


category_opt = cfg.SubCommandOpt(
    'category', title='commands', handler=_add_parsers,
    help='run "%s COMMAND --help" for details' % PROG)


def _fail(message, conf=None):
    print('%s: error: %s' % (PROG, message), file=sys.stderr)
    if conf is not None and conf.debug:
        LOG.exception('Details')
    return 1


def main(argv=None):
    conf = cfg.ConfigOpts()
    options.register_all(conf)
    # alembic narrates every step at INFO; the commands print the outcome.
    logging.set_defaults(default_log_levels=logging.get_default_log_levels()
                         + ['alembic=WARN'])
    conf.register_cli_opt(category_opt)
    # A management command should fail at once when the database is down,
    # not retry for minutes as a long-running service does; a configured
    # [database] max_retries still wins.
    conf.set_default('max_retries', 0, group='database')
    # Nor cancel a long migration or data migration statement.
    conf.set_default('statement_timeout', 0, group='database')
    try:
        conf(sys.argv[1:] if argv is None else argv, project='resobj',
             prog=PROG, version=version.version_option(),
             description=DESCRIPTION)
    except cfg.Error as exc:
        return _fail(str(exc).splitlines()[0])
    logging.setup(conf, 'resobj')
    try:
        options.check(conf)
        return conf.category.func(conf) or 0
    except exception.DatabaseUnavailable as exc:
        return _fail(connection_url.explain_unavailable(conf, exc), conf)
    except exception.ResobjException as exc:
        return _fail(str(exc), conf)
    except Exception as exc:
        return _fail('unexpected %s: %s (run with --debug for details)'
                     % (type(exc).__name__, exc), conf)


if __name__ == '__main__':
    sys.exit(main())
