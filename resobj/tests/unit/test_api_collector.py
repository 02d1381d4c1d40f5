"""resobj.api.collector: clean-up once a response is sent."""

import gc
import json
import weakref

import webob

from resobj.api import app as api_app
from resobj.api import collector
from resobj.api import service
from resobj.tests import base
from resobj.tests import fixtures as resobj_fixtures


class _Answer:
    """Something a handler keeps; weakly referenceable, unlike a dict."""


def _environ():
    return webob.Request.blank('/').environ


def _start(status, headers, exc_info=None):
    pass


class _Body(list):
    closed = False

    def close(self):
        self.closed = True


class TestCollector(base.TestCase):

    def setUp(self):
        super().setUp()
        self.addCleanup(gc.enable)
        gc.enable()
        self.kept = []

        def app(environ, start_response):
            answer = _Answer()
            self.kept.append(weakref.ref(answer))
            collector.keep_until_sent(environ, answer)
            start_response('200 OK', [])
            return _Body([b'{}'])

        self.app = collector.Application(app)

    def test_answer_kept_and_collector_paused_until_close(self):
        body = self.app(_environ(), _start)
        self.assertFalse(gc.isenabled())
        self.assertEqual([b'{}'], list(body))
        self.assertIsNotNone(self.kept[0]())
        body.close()
        self.assertIsNone(self.kept[0]())
        self.assertTrue(gc.isenabled())
        # Closing twice changes nothing.
        body.close()
        self.assertTrue(gc.isenabled())

    def test_a_response_dropped_unclosed_is_cleaned_up(self):
        body = self.app(_environ(), _start)
        self.assertFalse(gc.isenabled())
        del body
        self.assertTrue(gc.isenabled())
        self.assertIsNone(self.kept[0]())

    def test_the_inner_body_is_closed(self):
        body = self.app(_environ(), _start)
        inner = body._body
        body.close()
        self.assertTrue(inner.closed)

    def test_collector_runs_again_after_the_last_request_in_flight(self):
        first = self.app(_environ(), _start)
        second = self.app(_environ(), _start)
        first.close()
        self.assertFalse(gc.isenabled())
        self.assertIsNone(self.kept[0]())
        self.assertIsNotNone(self.kept[1]())
        second.close()
        self.assertTrue(gc.isenabled())
        self.assertIsNone(self.kept[1]())

    def test_a_disabled_collector_stays_disabled(self):
        gc.disable()
        self.app(_environ(), _start).close()
        self.assertFalse(gc.isenabled())

    def test_a_failing_application_resumes_and_releases(self):
        environ = _environ()
        kept = []

        def failing(environ, start_response):
            answer = _Answer()
            kept.append(weakref.ref(answer))
            collector.keep_until_sent(environ, answer)
            # Only the environ holds it (the traceback keeps this frame).
            del answer
            raise RuntimeError('boom')

        self.assertRaises(RuntimeError, collector.Application(failing),
                          environ, _start)
        self.assertTrue(gc.isenabled())
        self.assertIsNone(kept[0]())
        self.assertNotIn(collector.KEPT, environ)

    def test_overlapping_requests_still_collect_cycles(self):
        first = self.app(_environ(), _start)
        second = self.app(_environ(), _start)
        cycle = _Answer()
        cycle.me = cycle
        ref = weakref.ref(cycle)
        del cycle
        # Below the limit, the cycle waits for the collector.
        first.close()
        self.assertIsNotNone(ref())
        self.patch(collector, 'MAX_PAUSED_ALLOCATIONS', -1)
        third = self.app(_environ(), _start)
        # Over it, a request that ends with others in flight collects.
        second.close()
        self.assertIsNone(ref())
        self.assertFalse(gc.isenabled())
        third.close()
        self.assertTrue(gc.isenabled())


class TestApplication(base.TestCase):
    """resobj's application keeps a handler's answer until it is sent."""

    def test_answer_released_on_close(self):
        self.addCleanup(gc.enable)
        conf = self.useFixture(
            resobj_fixtures.ConfFixture(service.register_all_opts))
        conf.config(group='api', auth_strategy='noauth2')
        app = api_app.Application(conf.conf)
        environ = webob.Request.blank('/').environ
        statuses = []
        body = app(environ, lambda status, headers, exc_info=None:
                   statuses.append(status))
        (answer,) = environ[collector.KEPT]
        self.assertFalse(gc.isenabled())
        self.assertEqual(answer, json.loads(b''.join(body)))
        self.assertEqual(['200 OK'], statuses)
        body.close()
        self.assertNotIn(collector.KEPT, environ)
        self.assertTrue(gc.isenabled())
