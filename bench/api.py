"""The same HTTP workload against resobj-api and the reference service.

The reference is openstack-placement 16.0.0 from PyPI, installed at run
time in its own virtualenv (default ~/.cache/resobj-bench/placement-venv,
reused when present). Both services run side by side under the same
gunicorn settings, with noauth2, each on a fresh database of the chosen
engine; each phase of the workload (bench/apiload.py) runs against one
service, then the other, so both see the same machine load, and every
answer is checked. Prints one table: rate and median latency per service, the
server processes' CPU per request, the ratio resobj / reference (higher
means resobj is faster) and the wrong answers per service.

    python bench/api.py --backend sqlite
    python bench/api.py --backend postgresql --json > result.json
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import sys
import tempfile
import urllib.parse

import apiload
import apiserve

# Targets from issue 5, as resobj/reference speed ratios.
TARGETS = {
    'claim, sequential': 5, 'claim, 4 clients': 5,
    'GET /allocation_candidates': 8,
    'GET /allocation_candidates limit=50': 20,
    'GET /resource_providers/{u}/usages': 3,
    'GET /usages?project_id= (1.39)': 3,
    'GET /usages?project_id= (1.37)': 3,
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--backend', choices=('sqlite', 'postgresql'),
                   default='sqlite')
    p.add_argument('--providers', type=int, default=1000)
    p.add_argument('--claims', type=int, default=1000,
                   help='claims per claim phase (sequential, concurrent)')
    p.add_argument('--clients', type=int, default=4,
                   help='client processes in the concurrent claim phase')
    p.add_argument('--candidates-repeat', type=int, default=20,
                   help='requests per allocation-candidates query')
    p.add_argument('--usages-repeat', type=int, default=100,
                   help='GET /usages requests per microversion')
    p.add_argument('--workers', type=int, default=2,
                   help='gunicorn workers, for both services')
    p.add_argument('--worker-class', default='gthread',
                   help='gunicorn worker class, for both services '
                        '(gthread keeps connections alive)')
    # 2 workers x 4 threads with 30 s keep-alive are resobj-api's own
    # defaults ([api] workers, threads, keepalive).
    p.add_argument('--threads', type=int, default=4,
                   help='threads per gunicorn worker, for both services')
    p.add_argument('--resobj-pg-driver', default='psycopg',
                   choices=('psycopg', 'psycopg2'),
                   help="resobj's PostgreSQL driver (the reference always "
                        "runs on psycopg2, the one it is tested with)")
    p.add_argument('--only', choices=('resobj', 'reference'))
    p.add_argument('--reference-venv', default=os.path.expanduser(
        '~/.cache/resobj-bench/placement-venv'))
    p.add_argument('--keep', action='store_true',
                   help='keep the work directory (configs, server logs, '
                        'SQLite files)')
    p.add_argument('--json', action='store_true',
                   help='print the figures as JSON instead of a table')
    p.add_argument('--from-json', metavar='FILE',
                   help='print the table of an earlier --json run; '
                        'runs nothing')
    return p.parse_args(argv)


def start_service(args, name, workdir):
    db_name = 'resobj_bench_%s' % name
    url = apiserve.fresh_database(args.backend, db_name, workdir)
    if name == 'resobj':
        # psycopg (3) is the driver resobj's docs recommend.
        url = url.replace('+psycopg2:', '+%s:' % args.resobj_pg_driver)
    if name == 'reference':
        python = apiserve.ensure_reference_venv(args.reference_venv, log)
        service = apiserve.reference_service(python, url, workdir)
    else:
        service = apiserve.resobj_service(url, workdir)
    log('%s: starting on %s (%s)' % (name, url, service.app))
    service.start(apiserve.free_port(), args.workers, args.worker_class,
                  args.threads)
    return service


def warm_up(args, service, load, attempts=3):
    """Warm ``service`` up; restart it if it died booting. Restarts made.

    The reference's workers each fill the traits table when they load
    the application; on SQLite two of them at once can fail with
    "database is locked", and gunicorn then stops the whole server, after
    one worker already answered the start-up probe. The server is started
    again on the same database and port, up to ``attempts`` times, and
    the restarts are reported with the figures.
    """
    for restart in range(attempts):
        try:
            load.warm_up()
            return restart
        except OSError:
            if service.proc.poll() is None or restart == attempts - 1:
                raise
            log('%s: server exited with %s during the warm-up; its log '
                'ends:\n%s\nstarting it again'
                % (service.name, service.proc.returncode,
                   service.log_tail(8)))
            service.stop()
            service.start(urllib.parse.urlsplit(service.url).port,
                          args.workers, args.worker_class, args.threads)


def run(args, names, workdir):
    """Every phase against each service in turn, back to back.

    Both services stay up, each idle while the other works, so a change
    in the machine's load between phases hits both alike.
    """
    services = {}
    try:
        for name in names:
            services[name] = start_service(args, name, workdir)
        loads = {name: apiload.Workload(
            s.url, args.providers, args.claims, args.clients,
            args.candidates_repeat, args.usages_repeat, s)
            for name, s in services.items()}
        restarts = {name: warm_up(args, services[name], load)
                    for name, load in loads.items()}
        steps = zip(*[load.phases() for load in loads.values()])
        analyze = (args.backend == 'postgresql' and
                   not apiserve.autovacuum_on())
        for step in steps:
            if analyze and step[0][0].startswith('GET'):
                # A PostgreSQL server without autovacuum (this VM's) never
                # gathers statistics, and plans every read with default
                # estimates: a project's usage, for one, as a hash join
                # over all the allocations. A deployment's autovacuum has
                # analyzed the tables minutes after the set-up; ANALYZE
                # both services' databases once, untimed, before the
                # reads.
                for name, service in services.items():
                    log('  %-9s ANALYZE (autovacuum is off)' % name)
                    apiserve.analyze(service.db_url)
                analyze = False
            for name, (phase, body) in zip(loads, step):
                log('  %-9s %s' % (name, phase))
                loads[name].phase(phase, body)
        out = {}
        for name, service in services.items():
            tracebacks = [
                line for line in service.log_tail(10 ** 6).splitlines()
                if 'Traceback (most recent call last)' in line]
            out[name] = {
                'command': service.command,
                'database': service.db_url,
                'server_log_errors': len(tracebacks),
                'restarts': restarts[name],
                'operations': [op.as_dict() for op in loads[name].ops]}
        return out
    except BaseException:
        # The work directory (and with it the server logs) is removed
        # after a failed run unless --keep: say here what each server
        # said last, and whether it is still running.
        for name, service in services.items():
            log('%s: server %s; last lines of its log:\n%s' % (
                name, 'running' if service.proc.poll() is None else
                'exited with %s' % service.proc.returncode,
                service.log_tail()))
        raise
    finally:
        for service in services.values():
            service.stop()
            apiserve.drop_database(args.backend, service.db_url)


def machine():
    load = os.getloadavg()
    return {'date': datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec='seconds'), 'host': platform.node(),
        'cpus': os.cpu_count(), 'python': platform.python_version(),
        'load_average': [round(x, 2) for x in load]}


def _fmt(value, spec):
    return '-' if value is None else format(value, spec)


def _cpu(op):
    app, db = op.get('cpu_ms_per_request'), op.get('db_cpu_ms_per_request')
    if app is None:
        return '-'
    return '%.1f' % app if not db else '%.1f+%.1f' % (app, db)


def _total_cpu(op):
    if op.get('cpu_ms_per_request') is None:
        return None
    return op['cpu_ms_per_request'] + op.get('db_cpu_ms_per_request', 0)


def _ratio(resobj, reference):
    if not resobj or not reference:
        return '-'
    return '%.1fx' % (resobj / reference)


def table(result):
    ref = result['services'].get('reference', {}).get('operations', [])
    res = result['services'].get('resobj', {}).get('operations', [])
    names = [o['operation'] for o in (ref or res)]
    by = {'reference': {o['operation']: o for o in ref},
          'resobj': {o['operation']: o for o in res}}
    clients = '%d clients' % result['args']['clients']
    lines = ['| operation | n | reference req/s | p50 ms | CPU ms/req '
             '| resobj req/s | p50 ms | CPU ms/req | ratio | target '
             '| CPU ratio | wrong ref/resobj |',
             '|' + '---|' * 12]
    for name in names:
        a = by['reference'].get(name, {})
        b = by['resobj'].get(name, {})
        cpu_a, cpu_b = _total_cpu(a), _total_cpu(b)
        if not (a.get('rate') and b.get('rate')):
            # The CPU of requests answered wrongly (a 404, a 500) says
            # nothing about the work the right answer costs.
            cpu_a = cpu_b = None
        target = TARGETS.get(name.replace(clients, '4 clients'))
        lines.append('| %s |' % ' | '.join([
            name, str((a or b).get('requests', '-')),
            _fmt(a.get('rate'), '.1f'), _fmt(a.get('p50_ms'), '.1f'), _cpu(a),
            _fmt(b.get('rate'), '.1f'), _fmt(b.get('p50_ms'), '.1f'), _cpu(b),
            _ratio(b.get('rate'), a.get('rate')),
            '>= %dx' % target if target else '',
            _ratio(cpu_b and 1 / cpu_b, cpu_a and 1 / cpu_a),
            '%s/%s' % (a.get('wrong', '-'), b.get('wrong', '-'))]))
    return '\n'.join(lines)


def wrong_answers(result):
    lines = []
    for name, service in result['services'].items():
        for op in service['operations']:
            for ex in op['examples']:
                lines.append('%s: %s -> %s (expected %s, %s): %s' % (
                    name, ex['request'], ex['status'], ex['expected'],
                    ex['why'], ' '.join(ex['body'].split())[:300]))
        if service['server_log_errors']:
            lines.append('%s: %d tracebacks in the server log'
                         % (name, service['server_log_errors']))
        if service.get('restarts'):
            lines.append('%s: started again %d time(s) after its workers '
                         'failed to boot' % (name, service['restarts']))
    return '\n'.join(lines)


def main(argv=None):
    args = parse_args(argv)
    if args.from_json:
        with open(args.from_json) as f:
            report(json.load(f))
        return
    services = ['reference', 'resobj']
    if args.only:
        services = [args.only]
    workdir = tempfile.mkdtemp(prefix='resobj-bench-api-')
    result = {'args': vars(args), 'before': machine(),
              'gunicorn': apiserve.gunicorn_version()}
    try:
        result['services'] = run(args, services, workdir)
    finally:
        if args.keep:
            log('work directory kept: %s' % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    result['after'] = machine()
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        report(result)


def report(result):
    args = argparse.Namespace(**result['args'])
    b, a = result['before'], result['after']
    print('%s, %s, %d CPUs, Python %s, load average %s before, %s after'
          % (b['date'], b['host'], b['cpus'], b['python'],
             ' '.join(map(str, b['load_average'])),
             ' '.join(map(str, a['load_average']))))
    print('backend %s, %d providers, %d claims per claim phase, '
          'gunicorn %s: %d workers, %s, %d thread(s)'
          % (args.backend, args.providers, args.claims,
             result.get('gunicorn', '?'), args.workers, args.worker_class,
             args.threads))
    drivers = ['%s on %s' % (name, service['database'].split(':', 1)[0])
               for name, service in sorted(result['services'].items())]
    print('database URLs: ' + ', '.join(drivers))
    print()
    print(table(result))
    print()
    print('req/s counts correct answers only (sequential phases: per second '
          'of summed latency; concurrent: per second from first request to '
          'last answer); ratio = resobj req/s / reference req/s; CPU = user '
          '+ system time of the gunicorn master and workers per request, '
          '+ that of the PostgreSQL backends serving the service\'s '
          'database (SQLite runs inside the workers); CPU ratio = '
          'reference CPU / resobj CPU per request, which machine load '
          'disturbs less than the rates.')
    examples = wrong_answers(result)
    if examples:
        print()
        print('Wrong answers (first %d per operation):'
              % apiload.KEEP_EXAMPLES)
        print(examples)


if __name__ == '__main__':
    main()
