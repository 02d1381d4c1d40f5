"""The N-1 side of the upgrade tests, run as ``python -P old_side.py CMD``.

Run by resobj.tests.upgrade.n_minus_1 with the N-1 tree on PYTHONPATH:
every ``resobj`` import below is the *old* code. It uses only what the
baseline commit has (objects, the tracker, the test samples, strategies
and golden helpers of that commit) and talks JSON on stdin/stdout:

``about``
    where resobj came from, its object manifest, service version and
    RPC API versions;
``generate COUNT``
    {name: [primitive, ...]}: each object's sample and COUNT random
    objects of its newest N-1 version, from the N-1 tree's own samples
    and hypothesis strategies;
``load``
    reads {name: [primitive, ...]}, loads each with the N-1 code and
    answers {"objects": {name: [each re-serialised at its N-1 version,
    or {"error": ...}]}, "unknown": [every key of them the N-1 code does
    not know]}: loading ignores such keys, the test must not;
``fingerprints``
    {name: fingerprint} of the N-1 code's objects, as its own
    ``resobj.objects.fingerprint`` computes them;
``golden``
    {name: {version: text}}: the golden primitive files as the N-1 code
    itself writes them;
``workload CONF_FILE``
    N-1 compute-side writes on the database of CONF_FILE (see
    :func:`workload`); answers what it did;
``boot CONF_FILE HOST VCPUS MEMORY_MB ROOT_GB``
    an N-1 scheduler's boot on HOST of a new flavor of that size, through
    the conductors and compute services CONF_FILE names (no database);
    answers the instance's uuid and host;
``errors``
    {module: [class, ...]}: the resobj error classes of the N-1 code's
    exception modules;
``conflict CONF_FILE``
    through the conductors CONF_FILE names (no database), an N-1 compute
    report client writes a new consumer's allocation on a new provider,
    then writes it again as if the consumer were new; answers how the
    N-1 code saw the refusal of the second write.
"""

import contextlib
import json
import sys
import warnings


def _objects():
    from resobj import objects
    from resobj.objects import base
    objects.register_all()
    return base


def about():
    import resobj
    from resobj.compute import rpcapi as compute_rpcapi
    from resobj.conductor import rpcapi as conductor_rpcapi
    from resobj.objects import service
    base = _objects()
    return {'file': resobj.__file__,
            'rpc': {'compute': compute_rpcapi.VERSION,
                    'conductor': conductor_rpcapi.VERSION},
            'manifest': {name: classes[0].VERSION for name, classes in
                         base.ResobjObjectRegistry.obj_classes().items()},
            'service_version': service.SERVICE_VERSION}


def _examples(strategy, count):
    import hypothesis

    found = []

    # Deterministic, so that a failure in CI reproduces locally.
    @hypothesis.settings(max_examples=count, database=None, deadline=None,
                         derandomize=True,
                         suppress_health_check=list(hypothesis.HealthCheck))
    @hypothesis.given(strategy)
    def collect(obj):
        found.append(obj)

    collect()
    return found[:count]


def generate(count):
    from resobj.tests import samples
    from resobj.tests import strategies
    base = _objects()
    answer = {}
    for name in sorted(base.ResobjObjectRegistry.obj_classes()):
        made = [samples.make(name)] if name in samples.factories() else []
        made += _examples(strategies.for_object(name), int(count))
        answer[name] = [obj.obj_to_primitive() for obj in made]
    return answer


def _peer():
    """Today's resobj/testing/peer.py, loaded by its path.

    The N-1 tree may have none; its functions need only the standard
    library, so they run beside any N-1 code.
    """
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), 'testing', 'peer.py')
    spec = importlib.util.spec_from_file_location('_resobj_peer', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load():
    base = _objects()
    peer = _peer()
    classes = base.ResobjObjectRegistry.obj_classes()
    answer = {'objects': {}, 'unknown': []}
    for name, primitives in json.load(sys.stdin).items():
        loaded = answer['objects'][name] = []
        for primitive in primitives:
            answer['unknown'] += peer.unknown_keys(primitive, classes)
            try:
                obj = base.ResobjObject.obj_from_primitive(primitive)
                loaded.append(obj.obj_to_primitive())
            except Exception as exc:  # noqa: B902 - reported to the test
                loaded.append({'error': '%s: %s' % (
                    type(exc).__name__, exc)})
    return answer


def fingerprints():
    from resobj.objects import fingerprint
    return fingerprint.fingerprints()


def golden():
    from resobj.tests import samples
    from resobj.tests.unit.objects import test_golden
    base = _objects()
    answer = {}
    for name, classes in base.ResobjObjectRegistry.obj_classes().items():
        if name not in samples.factories():
            continue
        answer[name] = {
            version: test_golden.dumps(test_golden.backport(
                samples.make(name), version))
            for version in test_golden.all_versions(classes[0])}
    return answer


def workload(conf_file):
    """What an N-1 compute writes, through its own objects and tracker.

    Two nodes of one host, a tracker each, driven by the N-1 compute
    manager: three boots on one node, a resize of one instance to the
    other node (confirmed), an audit on each, and a compute node save
    with a changed legacy column. Answers
    the instances with their flavors and the nodes.
    """
    from oslo_config import cfg
    from oslo_utils import uuidutils

    from resobj.compute import fake_driver
    from resobj.compute import manager as compute_manager
    from resobj.compute import report_local
    from resobj.compute import tracker as rt
    from resobj import conf as resobj_conf
    from resobj import context
    from resobj.db import facade
    from resobj import objects
    _objects()

    conf = cfg.ConfigOpts()
    resobj_conf.register_opts(conf)
    conf(['--config-file', conf_file], project='resobj')
    facade.configure(conf)
    objects.configure(conf)
    ctx = context.get_admin_context()
    client = report_local.LocalReportClient(ctx)

    trackers = {}
    for node in ('old-a', 'old-b'):
        driver = fake_driver.FakeDriver(node, vcpus=16, memory_mb=32768,
                                        local_gb=500)
        trackers[node] = rt.ResourceTracker.from_conf(
            conf, 'old-host', node, driver, client)
        trackers[node].update_available_resource(ctx)

    manager = compute_manager.ComputeManager(
        {('old-host', node): t for node, t in trackers.items()})

    flavors = []
    for name, vcpus, memory_mb, root_gb in (('old-small', 1, 512, 5),
                                            ('old-large', 4, 4096, 40)):
        flavor = objects.Flavor(ctx, flavorid=name, name=name, vcpus=vcpus,
                                memory_mb=memory_mb, root_gb=root_gb,
                                ephemeral_gb=1, swap=0)
        flavor.create()
        flavors.append(flavor)
    small, large = flavors

    instances = []
    for flavor in (small, small, large):
        instance = objects.Instance(
            ctx, uuid=uuidutils.generate_uuid(), project_id='old-project',
            user_id='old-user', vm_state='building', vcpus=flavor.vcpus,
            memory_mb=flavor.memory_mb, root_gb=flavor.root_gb,
            ephemeral_gb=flavor.ephemeral_gb, flavor=flavor)
        instance.create()
        manager.build_instance(ctx, instance, 'old-host', 'old-a')
        instances.append(instance)

    # A resize of the first small one to the other node, confirmed.
    moved = objects.Instance.get_by_uuid(ctx, instances[0].uuid)
    migration = manager.prep_resize(ctx, moved, large, 'old-host', 'old-b')
    manager.confirm_resize(ctx, moved, migration)
    for tracker in trackers.values():
        tracker.update_available_resource(ctx)

    # A compute node save of the legacy columns, as an N-1 node's
    # bookkeeping does between audits.
    node = objects.ComputeNode.get_by_host_and_nodename(ctx, 'old-host',
                                                        'old-b')
    node.cpu_allocation_ratio = 2.0
    node.save()

    return {
        'instances': {
            i.uuid: objects.Instance.get_by_uuid(ctx, i.uuid).flavor.name
            for i in instances},
        'flavors': {f.name: {'VCPU': f.vcpus, 'MEMORY_MB': f.memory_mb,
                             'DISK_GB': f.root_gb + f.ephemeral_gb}
                    for f in flavors},
        'nodes': {name: t.provider for name, t in trackers.items()},
    }


@contextlib.contextmanager
def _through_conductors(conf_file):
    """(conf, transport) of CONF_FILE, objects calling its conductors."""
    from oslo_config import cfg

    from resobj.conductor import api as conductor_api
    from resobj import conf as resobj_conf
    from resobj import rpc
    _objects()

    conf = cfg.ConfigOpts()
    resobj_conf.register_opts(conf)
    rpc.register_opts(conf)
    conf(['--config-file', conf_file], project='resobj',
         default_config_files=[])
    transport = rpc.get_transport(conf)
    try:
        conductor_api.use_conductor(conf, transport)
        yield conf, transport
    finally:
        transport.cleanup()


def boot(conf_file, host, vcpus, memory_mb, root_gb):
    from oslo_utils import uuidutils

    from resobj.compute import rpcapi
    from resobj import context
    from resobj import objects

    with _through_conductors(conf_file) as (conf, transport):
        ctx = context.get_admin_context()
        name = 'n-1-%s' % uuidutils.generate_uuid()[:8]
        flavor = objects.Flavor(ctx, flavorid=name, name=name,
                                vcpus=int(vcpus), memory_mb=int(memory_mb),
                                root_gb=int(root_gb), ephemeral_gb=0, swap=0)
        flavor.create()
        instance = objects.Instance(
            ctx, uuid=uuidutils.generate_uuid(), project_id='n-1-project',
            user_id='n-1-user', vm_state='building', vcpus=flavor.vcpus,
            memory_mb=flavor.memory_mb, root_gb=flavor.root_gb,
            ephemeral_gb=0, flavor=flavor)
        instance.create()
        instance = rpcapi.ComputeAPI(conf, transport, ctx).build_instance(
            ctx, host, instance, host)
        return {'uuid': instance.uuid, 'host': instance.host,
                'vm_state': instance.vm_state}


def errors():
    import inspect

    from resobj.compute import exception as compute_exception
    from resobj import exception
    return {module.__name__: sorted(
        name for name, cls in vars(module).items()
        if inspect.isclass(cls) and cls.__module__ == module.__name__
        and issubclass(cls, exception.ResobjException))
        for module in (exception, compute_exception)}


def conflict(conf_file):
    from oslo_utils import uuidutils

    from resobj.compute import exception as compute_exception
    from resobj.compute import report_local
    from resobj import context

    with _through_conductors(conf_file):
        client = report_local.LocalReportClient(context.get_admin_context())
        provider = uuidutils.generate_uuid()
        client.ensure_provider(provider, 'n-1-conflict-%s' % provider[:8])
        client.set_inventory(provider, {'VCPU': {
            'total': 4, 'reserved': 0, 'min_unit': 1, 'max_unit': 4,
            'step_size': 1, 'allocation_ratio': 1.0}})
        consumer = uuidutils.generate_uuid()
        for attempt in ('first', 'again'):
            try:
                client.put_allocations(consumer, {provider: {'VCPU': 1}},
                                       'n-1-project', 'n-1-user',
                                       generation=None)
            except compute_exception.AllocationConflict as exc:
                return {'refused': attempt, 'caught': 'AllocationConflict',
                        'generation': exc.generation, 'detail': str(exc)}
        return {'refused': None}


COMMANDS = {'about': about, 'generate': generate, 'load': load,
            'fingerprints': fingerprints,
            'golden': golden, 'workload': workload, 'boot': boot,
            'errors': errors, 'conflict': conflict}


def main(argv):
    warnings.simplefilter('ignore')
    answer = COMMANDS[argv[0]](*argv[1:])
    json.dump(answer, sys.stdout, sort_keys=True)


if __name__ == '__main__':
    main(sys.argv[1:])
