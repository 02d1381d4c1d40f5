"""The conductor's endpoint methods, called as oslo.messaging calls them.

Arguments and answers go through the RPC serializer and JSON, as they
would on the wire, so each test sees what a caller of a given version
receives. The transport itself is covered by test_service.py.
"""

import oslo_messaging as messaging
from oslo_serialization import jsonutils
from oslo_utils import uuidutils

from resobj.conductor import manager
from resobj import context as resobj_context
from resobj.db.api import call_outcome as call_outcome_db
from resobj.db.api import resource_class as rc_db
from resobj import exception
from resobj import objects
from resobj.objects import compute_node as cn_obj
from resobj.objects import service as service_obj
from resobj import rpc
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional import db_base


class ManagerTestCase(db_base.DBTestCase):
    """A conductor's endpoint over a fresh database, called directly."""

    def setUp(self):
        super().setUp()
        objects.register_all()
        rc_db.ensure_sync(self.context)
        conf = self.useFixture(resobj_fixtures.ConfFixture()).conf
        self.manager = manager.ConductorManager(conf)
        self.serializer = rpc.RequestContextSerializer()


class TestConductorManager(ManagerTestCase):

    # The endpoint logic is the same on every backend; the backends' own
    # behaviour is covered by the object tests.
    scenarios = db_base.BACKEND_SCENARIOS[:1]

    def call(self, method, *args):
        """``method`` as the RPC server runs it: what the caller gets.

        The endpoint marks resobj's errors as expected (logged at debug);
        the server sends the error inside, which the caller raises.
        """
        try:
            return method(self.context, *args)
        except messaging.ExpectedException as exc:
            raise exc.exc_info[1]

    def wire(self, value):
        """``value`` as the other side of a call receives it."""
        sent = jsonutils.loads(jsonutils.dumps(
            self.serializer.serialize_entity(self.context, value)))
        return self.serializer.deserialize_entity(self.context, sent)

    def node(self):
        service = objects.Service(self.context, host='h1',
                                  binary=cn_obj.COMPUTE_BINARY)
        service.create()
        node = objects.ComputeNode(
            self.context, host='h1', hypervisor_hostname='h1', vcpus=8,
            memory_mb=4096, local_gb=100, vcpus_used=0, memory_mb_used=0,
            local_gb_used=0, hypervisor_type='fake', hypervisor_version=1,
            cpu_info='', stats={})
        node.create()
        return node

    def test_class_action_answers_at_the_callers_version(self):
        self.node()
        manifest = objects.base.obj_tree_get_versions('ComputeNode')
        manifest['ComputeNode'] = '1.3'
        answer = self.wire(self.call(
            self.manager.object_class_action_versions, 'ComputeNode',
            'get_by_host_and_nodename', manifest, ('h1', 'h1'), {}))
        self.assertEqual('1.3', answer.VERSION)
        self.assertEqual('h1', answer.hypervisor_hostname)
        # uuid came with 1.4: a 1.3 caller never sees it.
        self.assertFalse(answer.obj_attr_is_set('uuid'))

    def test_class_action_at_the_current_version(self):
        node = self.node()
        answer = self.wire(self.call(
            self.manager.object_class_action_versions, 'ComputeNode',
            'get_by_host_and_nodename',
            objects.base.obj_tree_get_versions('ComputeNode'),
            ('h1', 'h1'), {}))
        self.assertEqual(objects.ComputeNode.VERSION, answer.VERSION)
        self.assertEqual(node.uuid, answer.uuid)

    def test_action_returns_what_changed(self):
        node = self.node()
        caller_copy = self.wire(node)
        caller_copy.cpu_info = '{"arch": "x86_64"}'
        updates, result = self.call(self.manager.object_action,
                                    self.wire(caller_copy), 'save', (), {})
        updates = self.wire(updates)
        self.assertIsNone(result)
        # What the save changed comes back; what the caller changed
        # itself, it has.
        self.assertIsNotNone(updates['updated_at'])
        self.assertNotIn('cpu_info', updates)
        self.assertNotIn('vcpus', updates)
        self.assertEqual([], updates['obj_what_changed'])
        self.assertEqual('{"arch": "x86_64"}', objects.ComputeNode.get_by_id(
            self.context, node.id).cpu_info)

    def test_only_remotable_methods_are_served(self):
        node = self.node()
        exc = self.assertRaises(
            exception.ObjectActionError, self.call,
            self.manager.object_action, self.wire(node),
            'obj_reset_changes', (), {})
        self.assertIn('no remotable method obj_reset_changes', str(exc))
        self.assertRaises(
            exception.ObjectActionError, self.call,
            self.manager.object_class_action_versions,
            'ComputeNode', '_from_db_object',
            objects.base.obj_tree_get_versions('ComputeNode'), (), {})

    def test_backport_to_the_callers_manifest(self):
        node = self.node()
        manifest = objects.base.obj_tree_get_versions('ComputeNode')
        manifest['ComputeNode'] = '1.3'
        primitive = self.call(self.manager.object_backport_versions, node,
                              manifest)
        self.assertEqual('1.3', primitive['resobj_object.version'])
        self.assertNotIn('uuid', primitive['resobj_object.data'])
        exc = self.assertRaises(
            exception.ObjectBackportError, self.call,
            self.manager.object_backport_versions, node, {'Service': '1.0'})
        self.assertIn('knows no version of ComputeNode', str(exc))

    def _numa_instance(self, pinned):
        name = 'f-%s' % pinned
        flavor = objects.Flavor(
            self.context, flavorid=name, name=name, vcpus=2, memory_mb=512,
            root_gb=1, ephemeral_gb=0, swap=0)
        flavor.create()
        instance = objects.Instance(
            self.context, uuid=uuidutils.generate_uuid(), host='h1',
            node='h1', flavor=flavor, vcpus=2, memory_mb=512,
            numa_topology=objects.InstanceNUMATopology(cells=[
                objects.InstanceNUMACell(
                    id=1, cpuset={0, 1}, memory_mb=512,
                    pinned_cpus={4, 5} if pinned else set())]),
            pci_requests=[objects.InstancePCIRequest(alias_name='nic',
                                                     count=1)])
        instance.create()
        return objects.Instance.get_by_uuid(self.context, instance.uuid)

    def test_numa_instance_to_a_previous_release_peer(self):
        # What the previous release (Instance 1.4) gets asking the
        # conductor for a backport.
        manifest = objects.base.obj_tree_get_versions('Instance')
        manifest['Instance'] = '1.4'
        primitive = self.call(self.manager.object_backport_versions,
                              self._numa_instance(pinned=False), manifest)
        self.assertEqual('1.4', primitive['resobj_object.version'])
        data = primitive['resobj_object.data']
        self.assertNotIn('numa_topology', data)
        self.assertNotIn('pci_requests', data)
        # The flavor (and so its pci_passthrough:alias) still goes.
        self.assertEqual('f-False',
                         data['flavor']['resobj_object.data']['name'])
        exc = self.assertRaises(
            exception.ObjectBackportError, self.call,
            self.manager.object_backport_versions,
            self._numa_instance(pinned=True), manifest)
        self.assertIn('pinned to host CPUs of NUMA cells [1]', str(exc))

    def test_action_answers_a_previous_release_peer_in_its_fields(self):
        # An Instance 1.4 caller saves; the save reads the row back,
        # numa_topology and pci_requests (1.5) included, which the caller
        # cannot load: they are not among the changes it gets.
        instance = self._numa_instance(pinned=False)
        manifest = objects.base.obj_tree_get_versions('Instance')
        manifest['Instance'] = '1.4'
        caller_copy = objects.Instance.obj_from_primitive(
            instance.obj_to_primitive(target_version='1.4',
                                      version_manifest=manifest))
        self.assertEqual('1.4', caller_copy.VERSION)
        caller_copy._context = self.context
        caller_copy.task_state = 'resize_prep'
        updates, _ = self.call(self.manager.object_action,
                               self.wire(caller_copy), 'save', (), {})
        sent = jsonutils.loads(jsonutils.dumps(
            self.serializer.serialize_entity(self.context, updates)))
        self.assertNotIn('numa_topology', sent)
        self.assertNotIn('pci_requests', sent)
        self.assertNotIn('numa_topology', sent['obj_what_changed'])
        self.assertIsNotNone(sent['updated_at'])
        # A caller at today's version gets them.
        current = self.wire(instance)
        current.task_state = None
        updates, _ = self.call(self.manager.object_action,
                               self.wire(current), 'save', (), {})
        self.assertIn('numa_topology', updates)

    def test_numa_node_to_a_previous_release_peer(self):
        node = self.node()
        node.numa_topology = objects.NUMATopology(cells=[
            objects.NUMACell(id=0, cpuset={0, 1, 2, 3}, memory_mb=4096)])
        node.save()
        manifest = objects.base.obj_tree_get_versions('ComputeNode')
        manifest['ComputeNode'] = '1.5'
        primitive = self.call(self.manager.object_backport_versions,
                              objects.ComputeNode.get_by_id(
                                  self.context, node.id), manifest)
        self.assertEqual('1.5', primitive['resobj_object.version'])
        self.assertNotIn('numa_topology', primitive['resobj_object.data'])
        self.assertEqual(8, primitive['resobj_object.data']['vcpus'])

    def test_unknown_object_or_version(self):
        self.assertRaises(
            exception.UnsupportedObject, self.call,
            self.manager.object_class_action_versions, 'NoSuchThing', 'get',
            {'NoSuchThing': '1.0'}, (uuidutils.generate_uuid(),), {})
        # A caller newer than the conductor: the conductor is upgraded
        # first, so this is a deployment error, named as such.
        exc = self.assertRaises(
            exception.IncompatibleObjectVersion, self.call,
            self.manager.object_class_action_versions, 'ComputeNode',
            'get_by_host_and_nodename', {'ComputeNode': '2.0'}, ('h1', 'h1'),
            {})
        self.assertIn('ComputeNode version 2.0', str(exc))

    # A Service registered or reported through the conductor is the
    # caller's: its version is the one the caller runs, said or inferred.

    def caller(self, said=None):
        """The context a caller sends, as the conductor receives it."""
        context = resobj_context.get_admin_context()
        context.service_version = said
        return self.serializer.deserialize_context(jsonutils.loads(
            jsonutils.dumps(self.serializer.serialize_context(context))))

    def register(self, context, manifest):
        try:
            return self.manager.object_class_action_versions(
                context, 'Service', 'register', manifest,
                ('h1', cn_obj.COMPUTE_BINARY), {})
        except messaging.ExpectedException as exc:
            raise exc.exc_info[1]

    def recorded(self):
        return objects.Service.get_by_compute_host(self.context,
                                                   'h1').version

    def test_a_caller_that_says_its_version_is_recorded_at_it(self):
        manifest = objects.base.obj_tree_get_versions('Service')
        self.register(self.caller(said=2), manifest)
        self.assertEqual(2, self.recorded())
        # Said wins over what the objects would suggest.
        manifest['Service'] = '1.1'
        self.register(self.caller(said=2), manifest)
        self.assertEqual(2, self.recorded())

    def test_an_older_caller_is_known_by_its_service_object(self):
        # Code older than service version 3 says nothing; the Service
        # version in its manifest tells what it runs.
        for sent, version in (('1.4', 2), ('1.2', 2), ('1.1', 1)):
            manifest = objects.base.obj_tree_get_versions('Service')
            manifest['Service'] = sent
            self.register(self.caller(), manifest)
            self.assertEqual(version, self.recorded(), sent)

    def test_an_older_callers_report_keeps_its_version(self):
        manifest = objects.base.obj_tree_get_versions('Service')
        manifest['Service'] = '1.4'
        answer = self.wire(self.register(self.caller(), manifest))
        self.assertEqual(('1.4', 2), (answer.VERSION, answer.version))
        # Its report: the object it holds, at 1.4, and nothing said.
        self.manager.object_action(
            self.caller(), self.wire(answer), 'heartbeat', (), {})
        self.assertEqual(2, self.recorded())
        # The same node upgraded reports its version, said.
        self.manager.object_action(
            self.caller(said=service_obj.SERVICE_VERSION),
            self.wire(answer), 'heartbeat', (), {})
        self.assertEqual(service_obj.SERVICE_VERSION, self.recorded())


class TestKeyedCalls(ManagerTestCase):
    """Calls with an idempotency key (RPC 1.1), repeated as a caller does.

    On every backend: a repeat runs in its own transaction, which the
    key's row refuses.
    """

    def wire(self, value):
        """``value`` as the other side of a call receives it."""
        sent = jsonutils.loads(jsonutils.dumps(
            self.serializer.serialize_entity(self.context, value)))
        return self.serializer.deserialize_entity(self.context, sent)

    def call(self, method, *args, **kwargs):
        """What a caller gets: the answer through the wire, or the error."""
        try:
            return self.wire(method(self.caller(), *args, **kwargs))
        except messaging.ExpectedException as exc:
            raise exc.exc_info[1]

    def caller(self):
        """The context of a call, as the RPC server builds one per call."""
        return resobj_context.RequestContext.from_dict(
            self.context.to_dict())

    def service(self):
        manifest = objects.base.obj_tree_get_versions('Service')
        return self.call(self.manager.object_class_action_versions,
                         'Service', 'register', manifest,
                         ('h1', cn_obj.COMPUTE_BINARY), {},
                         idempotency_key=uuidutils.generate_uuid())

    def report_count(self):
        return objects.Service.get_by_compute_host(self.context,
                                                   'h1').report_count

    def test_a_repeated_action_runs_once_and_answers_alike(self):
        service = self.service()
        key = uuidutils.generate_uuid()
        first = self.call(self.manager.object_action, self.wire(service),
                          'heartbeat', (), {}, idempotency_key=key)
        counted = self.report_count()
        again = self.call(self.manager.object_action, self.wire(service),
                          'heartbeat', (), {}, idempotency_key=key)
        self.assertEqual(counted, self.report_count())
        self.assertEqual(first, again)
        updates, result = again
        self.assertEqual(counted, updates['report_count'])
        # Another key is another call.
        self.call(self.manager.object_action, self.wire(service),
                  'heartbeat', (), {},
                  idempotency_key=uuidutils.generate_uuid())
        self.assertEqual(counted + 1, self.report_count())

    def test_a_repeated_class_action_runs_once_and_answers_alike(self):
        key = uuidutils.generate_uuid()
        manifest = objects.base.obj_tree_get_versions('FlavorList')
        flavor = objects.Flavor(self.context, flavorid='f1', name='f1',
                                vcpus=1, memory_mb=512, root_gb=1,
                                ephemeral_gb=0, swap=0)
        first = self.call(self.manager.object_action, self.wire(flavor),
                          'create', (), {}, idempotency_key=key)
        # A create sent again would fail (FlavorExists) if carried out.
        again = self.call(self.manager.object_action, self.wire(flavor),
                          'create', (), {}, idempotency_key=key)
        self.assertEqual(first, again)
        self.assertEqual(1, len(self.call(
            self.manager.object_class_action_versions, 'FlavorList',
            'get_all', manifest, (), {},
            idempotency_key=uuidutils.generate_uuid())))
        key = uuidutils.generate_uuid()
        register = (self.manager.object_class_action_versions, 'Service',
                    'register', objects.base.obj_tree_get_versions('Service'),
                    ('h2', cn_obj.COMPUTE_BINARY), {})
        first = self.call(*register, idempotency_key=key)
        again = self.call(*register, idempotency_key=key)
        self.assertEqual(first.obj_to_primitive(), again.obj_to_primitive())

    def test_a_failed_call_is_not_recorded_and_runs_again(self):
        key = uuidutils.generate_uuid()
        self.assertRaises(
            exception.ServiceNotFound, self.call,
            self.manager.object_class_action_versions, 'Service',
            'get_by_compute_host',
            objects.base.obj_tree_get_versions('Service'), ('h1',), {},
            idempotency_key=key)
        service = self.service()
        # Read-only: carried out each time, no record.
        found = self.call(
            self.manager.object_class_action_versions, 'Service',
            'get_by_compute_host',
            objects.base.obj_tree_get_versions('Service'), ('h1',), {},
            idempotency_key=key)
        self.assertEqual(service.id, found.id)
        self.assertIsNone(call_outcome_db.get_answer(self.context, key))

    def test_unkeyed_calls_run_each_time(self):
        service = self.service()
        counted = self.report_count()
        for _ in range(2):
            self.call(self.manager.object_action, self.wire(service),
                      'heartbeat', (), {})
        self.assertEqual(counted + 2, self.report_count())
