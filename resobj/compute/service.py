"""A compute service: the trackers of one host, an RPC server, an audit.

``ComputeService(conf)`` builds, for this host (``[DEFAULT] host``):

* the driver's nodes, each with a ResourceTracker reporting through the
  objects (so, with ``[conductor] use_local = false``, through a
  conductor);
* a ComputeManager over them, with a compute RPC client for the steps of
  a move that belong to another host;
* an RPC server on ``[compute] topic`` serving ComputeEndpoint to peers;
* a thread that audits every node each ``[compute] audit_interval``
  seconds and keeps the Service record's ``last_seen_up`` current.

The trackers register (or update) the host's Service record at their
first audit, which start() runs before serving, and report it alive at
each audit.
"""

import threading

from oslo_log import log as logging

from resobj.compute import fake_driver
from resobj.compute import manager as compute_manager
from resobj.compute import outcome
from resobj.compute import report_local
from resobj.compute import rpcapi as compute_rpcapi
from resobj.compute import tracker as rt
from resobj import context as resobj_context
from resobj import exception
from resobj import objects
from resobj import rpc

LOG = logging.getLogger(__name__)

# What an audit meets while the database or the broker is away.
_UNREACHABLE = (exception.DatabaseUnavailable, exception.DatabaseDeadlock,
                exception.ConductorTimeout, exception.ConductorUnavailable)


def make_driver(conf):
    """The ``[compute] driver`` for this host's node."""
    # 'fake' is the only driver resobj ships; oslo.config refuses others.
    return fake_driver.FakeDriver(conf.host, vcpus=conf.fake_driver.vcpus,
                                  memory_mb=conf.fake_driver.memory_mb,
                                  local_gb=conf.fake_driver.local_gb,
                                  numa_cells=conf.fake_driver.numa_cells)


class ComputeService:
    """The trackers, RPC server and periodic audit of one host."""

    def __init__(self, conf, transport=None):
        objects.register_all()
        objects.configure(conf)
        self.conf = conf
        self.host = conf.host
        self.context = resobj_context.get_admin_context()
        self.transport = transport or rpc.get_transport(conf)
        driver = make_driver(conf)
        client = report_local.LocalReportClient(self.context)
        self.trackers = {
            (self.host, node): rt.ResourceTracker.from_conf(
                conf, self.host, node, driver, client)
            for node in driver.get_available_nodes()}
        self.manager = compute_manager.ComputeManager(
            self.trackers, compute_rpcapi.ComputeAPI(conf, self.transport,
                                                     self.context))
        self.server = rpc.get_server(
            self.transport, conf.compute.topic, self.host,
            [compute_manager.ComputeEndpoint(
                self.manager, self.host, outcome.OutcomeRecord(
                    conf.compute.outcome_record_size,
                    conf.compute.outcome_record_age))])
        self._stopping = threading.Event()
        self._auditor = threading.Thread(target=self._audit_loop,
                                         name='resobj-compute-audit',
                                         daemon=True)

    def audit(self):
        """Audit every node once; each audit reports the service alive."""
        for tracker in self.trackers.values():
            try:
                tracker.update_available_resource(self.context)
            except _UNREACHABLE as exc:
                # The database or the conductors are away for a while: an
                # event to report in one line, not a fault of this code.
                LOG.warning('Audit of node %(node)s failed: %(error)s; the '
                            'next audit, in %(interval)s s, tries again',
                            {'node': tracker.nodename, 'error': exc,
                             'interval': self.conf.compute.audit_interval})
            except exception.ResobjException:
                # One node's failed audit must not stop the others or the
                # next round; the error is the operator's to read.
                LOG.exception('Audit of node %s failed', tracker.nodename)

    def _audit_loop(self):
        while not self._stopping.wait(self.conf.compute.audit_interval):
            self.audit()

    def start(self):
        # The first audit creates the nodes and their providers before
        # any peer can ask for a claim on them.
        self.audit()
        self.server.start()
        self._auditor.start()
        LOG.info('resobj-compute on %(host)s serving topic %(topic)s, '
                 'nodes %(nodes)s',
                 {'host': self.host, 'topic': self.conf.compute.topic,
                  'nodes': ', '.join(n for _, n in self.trackers)})

    def stop(self):
        """Take no new calls, finish those in progress, stop auditing."""
        self._stopping.set()
        rpc.stop_server(self.server)
        self._auditor.join()
        LOG.info('resobj-compute on %s stopped', self.host)
