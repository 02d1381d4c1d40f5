"""One contract, two reporting clients, every backend.

``ReportClientContract`` holds the tests; ``TestLocalReportClient`` runs
them against the in-process client (objects), ``TestHTTPReportClient``
against the HTTP client talking to the real resobj-api application
(``resobj.api.app.make_app``) served on a random port by wsgiref in a
thread, over the same test database. Data is set up through objects.
"""

import logging
import socket
import threading
from wsgiref import simple_server

import fixtures
from keystoneauth1 import session as ksa_session
from keystoneauth1 import token_endpoint
from oslo_utils import uuidutils

from resobj.api import app as api_app
from resobj.api import service as api_service
from resobj.compute import exception
from resobj.compute import report
from resobj.compute import report_http
from resobj import objects
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional.compute import base


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


class _Server(simple_server.WSGIServer):
    # One thread per request, as a real deployment would serve them.
    def process_request(self, request, client_address):
        thread = threading.Thread(target=self._handle, daemon=True,
                                  args=(request, client_address))
        thread.start()

    def _handle(self, request, client_address):
        try:
            self.finish_request(request, client_address)
        finally:
            self.shutdown_request(request)


class APIServerFixture(fixtures.Fixture):
    """resobj-api's app on 127.0.0.1:<random port>, in this process."""

    def _setUp(self):
        conf = self.useFixture(
            resobj_fixtures.ConfFixture(api_service.register_all_opts))
        conf.config(group='api', auth_strategy='noauth2')
        server = simple_server.make_server(
            '127.0.0.1', 0, api_app.make_app(conf.conf),
            server_class=_Server,
            handler_class=_QuietHandler)
        thread = threading.Thread(target=server.serve_forever,
                                  kwargs={'poll_interval': 0.05},
                                  daemon=True)
        thread.start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.url = 'http://127.0.0.1:%d' % server.server_port


class ReportClientContract:

    def _pool(self, trait=True):
        pool = objects.ResourceProvider(self.context, name='pool-%s' % (
            uuidutils.generate_uuid()[:8]))
        pool.create()
        pool.add_inventory(objects.Inventory(
            resource_class='DISK_GB', total=100, max_unit=100))
        if trait:
            pool.set_traits([report.SHARING_TRAIT])
        return pool

    def _node(self, vcpus=8):
        uuid = uuidutils.generate_uuid()
        self.client.ensure_provider(uuid, 'node-%s' % uuid[:8])
        self.client.set_inventory(uuid, {'VCPU': {
            'total': vcpus, 'reserved': 0, 'min_unit': 1, 'max_unit': vcpus,
            'step_size': 1, 'allocation_ratio': 1.0}})
        return uuid

    def test_ensure_provider_is_idempotent(self):
        uuid = uuidutils.generate_uuid()
        self.client.ensure_provider(uuid, 'n1')
        self.client.ensure_provider(uuid, 'n1')
        self.assertEqual('n1', objects.ResourceProvider.get_by_uuid(
            self.context, uuid).name)
        # A name taken by another provider gets the uuid appended.
        other = uuidutils.generate_uuid()
        self.client.ensure_provider(other, 'n1')
        self.assertEqual('n1-%s' % other, objects.ResourceProvider
                         .get_by_uuid(self.context, other).name)

    def test_reshape_moves_inventory_and_allocations_or_nothing(self):
        root = self._node(vcpus=4)
        child = uuidutils.generate_uuid()
        self.client.ensure_provider(child, 'child-%s' % child[:8],
                                    parent=root)
        self.assertEqual(root, objects.ResourceProvider.get_by_uuid(
            self.context, child).parent_provider_uuid)
        consumer = uuidutils.generate_uuid()
        self.client.put_allocations(consumer, {root: {'VCPU': 3}}, 'p', 'u')
        current = self.client.get_allocations(consumer)
        root_gen, root_inv = self.client.get_inventory(root)
        child_gen, _ = self.client.get_inventory(child)
        inventories = {root: (root_gen, {}),
                       child: (child_gen, dict(root_inv))}
        consumers = {consumer: {
            'allocations': {child: {'VCPU': 3}}, 'project_id': 'p',
            'user_id': 'u', 'generation': current.generation}}
        # A provider generation that moved: nothing changes.
        stale = dict(inventories, **{root: (root_gen - 1, {})})
        self.assertRaises(exception.ReshapeConflict, self.client.reshape,
                          stale, consumers)
        self.assertEqual({root: {'VCPU': 3}},
                         self.client.get_allocations(consumer).allocations)
        self.assertEqual(root_inv, self.client.get_inventory(root)[1])
        self.client.reshape(inventories, consumers)
        self.assertEqual({child: {'VCPU': 3}},
                         self.client.get_allocations(consumer).allocations)
        self.assertEqual({}, self.client.get_inventory(root)[1])
        self.assertEqual({'VCPU': 3}, self.client.get_usages(child))

    def test_set_inventory_writes_only_changes(self):
        uuid = self._node()
        generation, inventory = self.client.get_inventory(uuid)
        self.assertEqual(8, inventory['VCPU']['total'])
        same = dict(inventory)
        self.assertFalse(self.client.set_inventory(uuid, same))
        self.assertEqual(generation, self.client.get_inventory(uuid)[0])
        same['MEMORY_MB'] = {'total': 1024, 'reserved': 512, 'min_unit': 1,
                             'max_unit': 1024, 'step_size': 1,
                             'allocation_ratio': 1.5}
        self.assertTrue(self.client.set_inventory(uuid, same))
        generation2, inventory = self.client.get_inventory(uuid)
        self.assertEqual(generation + 1, generation2)
        self.assertEqual(512, inventory['MEMORY_MB']['reserved'])

    def test_set_inventory_retries_a_generation_conflict(self):
        uuid = self._node()
        real = self.client.get_inventory
        calls = self._race_once('get_inventory')
        inventory = dict(real(uuid)[1])
        inventory['VCPU'] = dict(inventory['VCPU'], total=4, max_unit=4)
        self.assertTrue(self.client.set_inventory(uuid, inventory))
        self.assertEqual(2, len(calls))
        self.assertEqual(4, real(uuid)[1]['VCPU']['total'])

    def test_set_aggregates_and_traits_write_only_changes(self):
        uuid = self._node()
        generation, aggregates = self.client.get_aggregates(uuid)
        self.assertEqual(set(), aggregates)
        wanted = {uuidutils.generate_uuid(), uuidutils.generate_uuid()}
        self.assertTrue(self.client.set_aggregates(uuid, wanted))
        self.assertEqual((generation + 1, wanted),
                         self.client.get_aggregates(uuid))
        self.assertFalse(self.client.set_aggregates(uuid, list(wanted)))
        self.assertEqual(generation + 1, self.client.get_aggregates(uuid)[0])
        self.assertTrue(self.client.set_traits(uuid, [report.SHARING_TRAIT]))
        self.assertEqual((generation + 2, {report.SHARING_TRAIT}),
                         self.client.get_traits(uuid))
        self.assertFalse(self.client.set_traits(uuid, {report.SHARING_TRAIT}))
        # What the objects see is what the client wrote.
        rp = objects.ResourceProvider.get_by_uuid(self.context, uuid)
        self.assertEqual(sorted(wanted), rp.get_aggregates())
        self.assertEqual([report.SHARING_TRAIT], rp.get_traits())
        self.assertEqual(generation + 2, rp.generation)
        # Emptying is a change too.
        self.assertTrue(self.client.set_aggregates(uuid, []))
        self.assertTrue(self.client.set_traits(uuid, []))
        self.assertEqual((generation + 4, set()),
                         self.client.get_traits(uuid))
        self.assertEqual(set(), self.client.get_aggregates(uuid)[1])

    def _race_once(self, name):
        """Make the client's next ``name`` read lose a generation race."""
        real = getattr(self.client, name)
        calls = []

        def racing(provider):
            result = real(provider)
            if not calls:
                objects.ResourceProvider.get_by_uuid(
                    self.context, provider).increment_generation()
            calls.append(provider)
            return result

        setattr(self.client, name, racing)
        self.addCleanup(delattr, self.client, name)
        return calls

    def test_set_aggregates_retries_a_generation_conflict(self):
        uuid = self._node()
        calls = self._race_once('get_aggregates')
        aggregate = uuidutils.generate_uuid()
        self.assertTrue(self.client.set_aggregates(uuid, [aggregate]))
        self.assertEqual(2, len(calls))
        self.assertEqual([aggregate], objects.ResourceProvider.get_by_uuid(
            self.context, uuid).get_aggregates())

    def test_set_traits_retries_a_generation_conflict(self):
        uuid = self._node()
        calls = self._race_once('get_traits')
        self.assertTrue(self.client.set_traits(uuid, [report.SHARING_TRAIT]))
        self.assertEqual(2, len(calls))
        self.assertEqual([report.SHARING_TRAIT], objects.ResourceProvider
                         .get_by_uuid(self.context, uuid).get_traits())

    def test_set_traits_gives_up_when_always_racing(self):
        uuid = self._node()
        real = self.client.get_traits

        def always_racing(provider):
            result = real(provider)
            objects.ResourceProvider.get_by_uuid(
                self.context, provider).increment_generation()
            return result

        self.client.get_traits = always_racing
        self.addCleanup(delattr, self.client, 'get_traits')
        exc = self.assertRaises(exception.ProviderConflict,
                                self.client.set_traits, uuid,
                                [report.SHARING_TRAIT])
        self.assertEqual(report.GENERATION_RETRIES, exc.kwargs['attempts'])
        self.assertEqual([], objects.ResourceProvider.get_by_uuid(
            self.context, uuid).get_traits())

    def test_sharing_pool_set_up_through_the_client_only(self):
        node = self._node()
        pool = uuidutils.generate_uuid()
        self.client.ensure_provider(pool, 'pool-%s' % pool[:8])
        self.client.set_inventory(pool, {'DISK_GB': {
            'total': 100, 'reserved': 0, 'min_unit': 1, 'max_unit': 100,
            'step_size': 1, 'allocation_ratio': 1.0}})
        self.client.set_traits(pool, [report.SHARING_TRAIT])
        aggregate = uuidutils.generate_uuid()
        self.client.set_aggregates(pool, [aggregate])
        self.assertEqual([], self.client.get_sharing_providers(node,
                                                               'DISK_GB'))
        self.client.set_aggregates(node, [aggregate])
        self.assertEqual([pool], self.client.get_sharing_providers(
            node, 'DISK_GB'))

    def test_sharing_providers_through_aggregates_and_trait(self):
        node = self._node()
        pool = self._pool()
        plain = self._pool(trait=False)
        self.assertEqual([], self.client.get_sharing_providers(node,
                                                               'DISK_GB'))
        aggregate = uuidutils.generate_uuid()
        for rp in (pool, plain, objects.ResourceProvider.get_by_uuid(
                self.context, node)):
            rp.set_aggregates([aggregate])
        self.assertEqual([pool.uuid], self.client.get_sharing_providers(
            node, 'DISK_GB'))
        self.assertEqual([], self.client.get_sharing_providers(node,
                                                               'VCPU'))

    def test_allocations_round_trip_with_generations(self):
        node = self._node()
        pool = self._pool()
        consumer = uuidutils.generate_uuid()
        self.assertEqual({}, self.client.get_allocations(consumer)
                         .allocations)
        wanted = {node: {'VCPU': 2}, pool.uuid: {'DISK_GB': 10}}
        self.client.put_allocations(consumer, wanted, 'p', 'u',
                                    generation=None)
        read = self.client.get_allocations(consumer)
        self.assertEqual(wanted, read.allocations)
        by_node = self.client.get_provider_allocations(node)
        self.assertEqual({consumer: {node: {'VCPU': 2}}},
                         {c: a.allocations for c, a in by_node.items()})
        self.assertEqual(read.generation, by_node[consumer].generation)
        self.assertEqual({'VCPU': 2}, self.client.get_usages(node))
        # A write stating a stale generation is refused, changing nothing.
        exc = self.assertRaises(
            exception.AllocationConflict, self.client.put_allocations,
            consumer, {node: {'VCPU': 1}}, 'p', 'u',
            generation=read.generation + 5)
        self.assertTrue(exc.generation)
        self.assertEqual(wanted,
                         self.client.get_allocations(consumer).allocations)
        # ANY reads the generation first.
        self.client.put_allocations(consumer, {node: {'VCPU': 1}}, 'p', 'u')
        self.assertEqual({node: {'VCPU': 1}},
                         self.client.get_allocations(consumer).allocations)

    def test_capacity_refusal_is_not_a_generation_conflict(self):
        node = self._node(vcpus=2)
        exc = self.assertRaises(
            exception.AllocationConflict, self.client.put_allocations,
            uuidutils.generate_uuid(), {node: {'VCPU': 3}}, 'p', 'u',
            generation=None)
        self.assertFalse(exc.generation)

    def test_replace_allocations_is_atomic(self):
        node = self._node(vcpus=4)
        a, b = uuidutils.generate_uuid(), uuidutils.generate_uuid()
        self.client.put_allocations(a, {node: {'VCPU': 1}}, 'p', 'u')
        self.assertRaises(exception.AllocationConflict,
                          self.client.replace_allocations, {
                              a: {'allocations': {node: {'VCPU': 2}},
                                  'project_id': 'p', 'user_id': 'u'},
                              b: {'allocations': {node: {'VCPU': 3}},
                                  'project_id': 'p', 'user_id': 'u',
                                  'generation': None}})
        self.assertEqual({node: {'VCPU': 1}},
                         self.client.get_allocations(a).allocations)
        self.assertEqual({}, self.client.get_allocations(b).allocations)
        # Moving between consumers in one write (how a move hands over).
        self.client.replace_allocations({
            a: {'allocations': {}, 'project_id': 'p', 'user_id': 'u'},
            b: {'allocations': {node: {'VCPU': 1}}, 'project_id': 'p',
                'user_id': 'u', 'generation': None}})
        self.assertEqual({}, self.client.get_allocations(a).allocations)
        self.assertEqual({'VCPU': 1}, self.client.get_usages(node))

    def test_delete_of_nothing_is_quiet(self):
        logs = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        self.assertFalse(self.client.delete_allocations(
            uuidutils.generate_uuid()))
        node = self._node()
        consumer = uuidutils.generate_uuid()
        self.client.put_allocations(consumer, {node: {'VCPU': 1}}, 'p', 'u')
        self.assertTrue(self.client.delete_allocations(consumer))
        self.assertEqual({'VCPU': 0}, self.client.get_usages(node))
        self.assertEqual('', logs.output)

    def test_tracker_claims_and_audits_through_the_client(self):
        pool, aggregate = self.shared_pool()
        tracker = self.tracker('shared1', client=self.client,
                               shared_storage=True,
                               uuid=self.shared_node_uuid('s1', aggregate))
        inst = self.instance(self.flavor(swap=1))
        tracker.instance_claim(self.context, inst)
        ghost = uuidutils.generate_uuid()
        self.client.put_allocations(ghost, {tracker.provider: {'VCPU': 1}},
                                    'p', 'u')
        tracker.update_available_resource(self.context)
        self.assertEqual({tracker.provider: {'VCPU': 2, 'MEMORY_MB': 2048},
                          pool.uuid: {'DISK_GB': 21}},
                         self.client.get_allocations(inst.uuid).allocations)
        self.assertEqual({}, self.client.get_allocations(ghost).allocations)
        self.assertEqual(tracker.accounting(), {
            rp: {rc: n for rc, n in self.client.get_usages(rp).items() if n}
            for rp in (tracker.provider, pool.uuid)})


class TestLocalReportClient(ReportClientContract, base.TrackerTestCase):
    pass


class TestHTTPReportClient(ReportClientContract, base.TrackerTestCase):

    def make_client(self):
        server = self.useFixture(APIServerFixture())
        return report_http.HTTPReportClient(server.url, retries=3,
                                            backoff=0.01)


class TestHTTPReportClientKeystoneSession(ReportClientContract,
                                          base.TrackerTestCase):
    """The same contract through a keystoneauth1 session.

    The session's auth plugin supplies the token and the endpoint, as a
    keystone plugin would from the service catalog.
    """

    def make_client(self):
        server = self.useFixture(APIServerFixture())
        auth = token_endpoint.Token(server.url, 'admin')
        # The roles keystone would put in a compute service user's token
        # (noauth2 reads them from the header).
        session = ksa_session.Session(
            auth=auth, additional_headers={'X-Roles': 'admin,service'})
        return report_http.HTTPReportClient(
            auth_session=session, retries=3,
            backoff=0.01)


class TestHTTPTransport(base.TrackerTestCase):
    """What only the HTTP client has: retries, backoff, logging once."""

    def make_client(self):
        return None

    def _closed_port(self):
        sock = socket.socket()
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
        sock.close()
        return port

    def test_connection_errors_retried_and_logged_once(self):
        logs = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        sleeps = []
        self.useFixture(fixtures.MonkeyPatch(
            'resobj.compute.report_http.time.sleep', sleeps.append))
        client = report_http.HTTPReportClient(
            'http://127.0.0.1:%d' % self._closed_port(), retries=4,
            backoff=0.1, timeout=1)
        exc = self.assertRaises(exception.PlacementUnavailable,
                                client.get_usages, 'x')
        self.assertEqual(4, exc.kwargs['attempts'])
        self.assertEqual([0.1, 0.2, 0.4], sleeps)
        self.assertEqual(1, logs.output.count('Placement unreachable'))
        # Still down: the outage is not logged again.
        self.assertRaises(exception.PlacementUnavailable,
                          client.get_usages, 'x')
        self.assertEqual(1, logs.output.count('Placement unreachable'))

    def test_timeouts_are_retried_too(self):
        # A server that accepts connections and never answers.
        listener = socket.socket()
        listener.bind(('127.0.0.1', 0))
        listener.listen(8)
        self.addCleanup(listener.close)
        logs = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        self.useFixture(fixtures.MonkeyPatch(
            'resobj.compute.report_http.time.sleep', lambda s: None))
        client = report_http.HTTPReportClient(
            'http://127.0.0.1:%d' % listener.getsockname()[1], retries=2,
            timeout=0.2)
        exc = self.assertRaises(exception.PlacementUnavailable,
                                client.get_usages, 'x')
        self.assertIn('timed out', str(exc))
        self.assertEqual(1, logs.output.count('Placement unreachable'))

    def test_recovers_when_the_service_comes_back(self):
        server = self.useFixture(APIServerFixture())
        client = report_http.HTTPReportClient(server.url)
        uuid = uuidutils.generate_uuid()
        client.ensure_provider(uuid, 'back')
        self.assertEqual({}, client.get_usages(uuid))
