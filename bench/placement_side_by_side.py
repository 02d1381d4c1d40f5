"""resobj against the reference placement service with the shared harness.

One command: for the chosen database engine, the reference
(openstack-placement 16.0.0, from its own virtualenv) and resobj each
run with one gunicorn worker under the same server command line on a
fresh database; the shared harness (``placement_bench.py``, standard
library only) drives one service, then the other, with ``--connection
close`` and the server's PIDs. Both JSON results are kept, and the
harness's ``summarize.py`` table is printed with the issue's target
ratios (reference p50 / resobj p50, or resobj rate / reference rate for
the claims) and whether each is met.

    python bench/placement_side_by_side.py --backend sqlite \\
        --ref-venv /work/refvenv --out-dir /tmp/sbs
    python bench/placement_side_by_side.py --backend postgresql \\
        --providers 10000 --only resobj --out-dir /tmp/sbs10k
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile

import apiserve

# (harness run, what is compared, target ratio). "p50": reference p50 /
# resobj p50 of the run's main request kind; "rate": resobj ops/s /
# reference ops/s.
TARGETS = (
    ('candidates, 1,500 results, p50', 'ac_plain', 'p50', 8),
    ('limit=50, p50', 'ac_limit50', 'p50', 20),
    ('required=HW_CPU_X86_AVX2, p50', 'ac_required_AVX2', 'p50', 8),
    ('GET /usages?project_id, p50', 'project_usages', 'p50', 3),
    ('claims, 1 client', 'claims_sequential', 'rate', 8),
)


def log(msg):
    print('[side-by-side] %s' % msg, file=sys.stderr, flush=True)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--backend', choices=('sqlite', 'postgresql'),
                   default='sqlite')
    p.add_argument('--providers', type=int, default=1000)
    p.add_argument('--ref-venv', default=os.path.expanduser(
        '~/.cache/resobj-bench/placement-venv'),
        help='virtualenv of openstack-placement 16.0.0 with the same '
             'gunicorn as this one (created when missing)')
    p.add_argument('--harness-dir', default=os.environ.get(
        'PLACEMENT_BENCH_DIR', '/work/shared/bench'),
        help='directory of placement_bench.py and summarize.py '
             '(default $PLACEMENT_BENCH_DIR or /work/shared/bench)')
    p.add_argument('--only', choices=('resobj', 'reference'))
    p.add_argument('--out-dir', help='where the JSON results and server '
                   'logs go (default: a new temporary directory)')
    p.add_argument('--concurrency', type=int, default=4)
    p.add_argument('--ac-requests', type=int, default=10)
    # One thread: with more, the reference's concurrent writes on SQLite
    # fail ("database is locked"), it ends up with fewer providers than
    # resobj and its searches answer fewer candidates, faster.
    p.add_argument('--threads', type=int, default=1,
                   help='gthread threads of the one worker, both services')
    # The reference answers GET /usages at 1.38 and later with a 500 on
    # PostgreSQL; 1.37 is the newest microversion both answer.
    p.add_argument('--usages-microversion', default='1.37',
                   help='microversion of GET /usages, both services')
    p.add_argument('--harness-arg', action='append', default=[],
                   metavar='ARG', help='one more argument for the harness, '
                   'for both services (repeatable), e.g. '
                   '--harness-arg=--usages-microversion=1.37')
    return p.parse_args(argv)


def machine():
    return {'date': datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec='seconds'), 'host': platform.node(),
        'cpus': os.cpu_count(), 'python': platform.python_version(),
        'loadavg': ' '.join('%.2f' % x for x in os.getloadavg())}


def commit():
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run(['git', 'describe', '--always', '--dirty'],
                         cwd=here, stdout=subprocess.PIPE, text=True)
    return out.stdout.strip() or '?'


def bench(args, name, workdir):
    """Start ``name``, run the harness against it, stop it; its JSON."""
    service = apiserve.start_service(args.backend, name, workdir,
                                     args.ref_venv, args.threads, log)
    analyzer = apiserve.auto_analyze(args.backend, service, log)
    label = '%s-%s-%d' % (name, args.backend, args.providers)
    out = os.path.join(workdir, label + '.json')
    cmd = [sys.executable, os.path.join(args.harness_dir,
                                        'placement_bench.py'),
           '--url', service.url, '--providers', str(args.providers),
           '--concurrency', str(args.concurrency),
           '--server-pids', str(service.proc.pid),
           '--connection', 'close', '--ac-requests', str(args.ac_requests),
           '--usages-microversion', args.usages_microversion,
           '--label', label, '--json-out', out] + args.harness_arg
    apiserve.checkpoint(args.backend)
    before = machine()
    code = commit()
    log('%s: load %s; %s' % (name, before['loadavg'], ' '.join(cmd)))
    try:
        rc = subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode
    finally:
        if analyzer:
            analyzer.stop()
        service.stop()
        apiserve.drop_database(args.backend, service.db_url)
    with open(out) as f:
        result = json.load(f)
    result['side_by_side'] = {
        'harness_rc': rc, 'server_command': service.command,
        'database': service.db_url.split(':', 1)[0],
        'auto_analyze_rounds': analyzer.analyzed if analyzer else None,
        'auto_vacuum_rounds': analyzer.vacuumed if analyzer else None,
        'before': before, 'after': machine(), 'commit': code}
    with open(out, 'w') as f:
        json.dump(result, f, indent=1)
    return out, result


def main_kind(run):
    return run.get('logical_kind') or list(run['kinds'])[-1]


def figure(result, run_name, how):
    """(value, wrong answers) of one C=1 run, or (None, None)."""
    for run in result['runs']:
        if run['name'] == run_name and run['concurrency'] == 1:
            kind = run['kinds'][main_kind(run)]
            wrong = sum(count for status, count in kind['status'].items()
                        if not (status.isdigit() and
                                200 <= int(status) < 300))
            return (kind['p50_ms'] if how == 'p50' else run['ops_per_s'],
                    wrong)
    return None, None


def candidates(result, run_name):
    for run in result['runs']:
        if run['name'] == run_name:
            return run.get('n_allocation_requests')
    return None


def ratios(ref, res):
    lines = ['| target | reference | resobj | ratio | target | met |',
             '|---|---|---|---|---|---|']
    for title, run_name, how, target in TARGETS:
        if candidates(ref, run_name) != candidates(res, run_name):
            # Different data (a failed set-up request): no comparison.
            lines.append('| %s | %s candidates | %s candidates | - | '
                         '>= %dx | n/a |'
                         % (title, candidates(ref, run_name),
                            candidates(res, run_name), target))
            continue
        a, wrong_a = figure(ref, run_name, how)
        b, wrong_b = figure(res, run_name, how)
        unit = 'ms' if how == 'p50' else '/s'
        if not a or not b:
            lines.append('| %s | %s | %s | - | >= %dx | n/a |'
                         % (title, a, b, target))
            continue
        ratio = a / b if how == 'p50' else b / a
        met = 'yes' if ratio >= target else 'NO'
        if wrong_a or wrong_b:
            # A ratio against errors says nothing about the work.
            met = 'n/a (non-2xx: reference %d, resobj %d)' % (wrong_a,
                                                              wrong_b)
        lines.append('| %s | %.1f %s | %.1f %s | %.1fx | >= %dx | %s |'
                     % (title, a, unit, b, unit, ratio, target, met))
    return '\n'.join(lines)


def main(argv=None):
    args = parse_args(argv)
    workdir = args.out_dir or tempfile.mkdtemp(prefix='resobj-sbs-')
    os.makedirs(workdir, exist_ok=True)
    names = [args.only] if args.only else ['reference', 'resobj']
    results = {}
    for name in names:
        results[name] = bench(args, name, workdir)
    first = results[names[0]][1]['side_by_side']
    print('%s, commit %s, %s, %d CPUs, Python %s; backend %s, %d providers'
          % (first['before']['date'], first['commit'], platform.node(),
             os.cpu_count(), platform.python_version(), args.backend,
             args.providers))
    for name in names:
        sbs = results[name][1]['side_by_side']
        print('%s: load %s before, %s after; harness exit %d; %s; %s%s'
              % (name, sbs['before']['loadavg'], sbs['after']['loadavg'],
                 sbs['harness_rc'], sbs['database'], sbs['server_command'],
                 '' if sbs['auto_analyze_rounds'] is None else
                 '; autovacuum off, %d tables analyzed and %d vacuumed by '
                 'its rules' % (sbs['auto_analyze_rounds'],
                                sbs.get('auto_vacuum_rounds') or 0)))
    print()
    sys.stdout.flush()
    subprocess.run([sys.executable, os.path.join(args.harness_dir,
                                                 'summarize.py')] +
                   [results[name][0] for name in names], check=True)
    if not args.only:
        print()
        print(ratios(results['reference'][1], results['resobj'][1]))
    print()
    print('JSON and server logs: %s' % workdir)


if __name__ == '__main__':
    main()
