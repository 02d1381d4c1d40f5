from oslo_context import context as oslo_context
from oslo_db import exception as db_exc

from resobj import context
from resobj.tests import base


class TestRequestContext(base.TestCase):

    def test_read_deleted_is_validated(self):
        ctx = context.RequestContext()
        self.assertEqual('no', ctx.read_deleted)
        self.assertRaises(ValueError, setattr, ctx, 'read_deleted', 'maybe')
        self.assertRaises(ValueError, context.RequestContext,
                          read_deleted='all')

    def test_elevated_copies(self):
        ctx = context.RequestContext(user_id='u', project_id='p',
                                     roles=['reader'])
        admin = ctx.elevated(read_deleted='yes')
        self.assertTrue(admin.is_admin)
        self.assertIn('admin', admin.roles)
        self.assertEqual('yes', admin.read_deleted)
        self.assertFalse(ctx.is_admin)
        self.assertEqual(['reader'], ctx.roles)
        self.assertEqual('no', ctx.read_deleted)

    def test_dict_round_trip_keeps_read_deleted(self):
        ctx = context.RequestContext(user_id='u', read_deleted='only')
        again = context.RequestContext.from_dict(ctx.to_dict())
        self.assertEqual('only', again.read_deleted)
        self.assertEqual('u', again.user_id)

    def test_dict_round_trip_keeps_the_senders_service_version(self):
        ctx = context.RequestContext(service_version=3)
        self.assertEqual(3, context.RequestContext.from_dict(
            ctx.to_dict()).service_version)
        # Not said: not in the dict, None on arrival.
        ctx = context.RequestContext()
        self.assertNotIn('service_version', ctx.to_dict())
        self.assertIsNone(context.RequestContext.from_dict(
            ctx.to_dict()).service_version)
        # Code that does not know the key ignores it.
        self.assertEqual('u1', oslo_context.RequestContext.from_dict(
            dict(context.RequestContext(user_id='u1', service_version=3)
                 .to_dict())).user_id)

    def test_no_session_outside_a_transaction(self):
        ctx = context.get_admin_context()
        self.assertTrue(ctx.is_admin)
        self.assertRaises(db_exc.NoEngineContextEstablished,
                          getattr, ctx, 'session')

    def test_clear_current_forgets_the_stored_context(self):
        # Through resobj._oslo_context.forget_current, which reaches into
        # oslo.context's store: this fails if oslo.context keeps it
        # elsewhere.
        ctx = context.RequestContext(user_id='u', overwrite=True)
        self.assertIs(ctx, oslo_context.get_current())
        context.clear_current()
        self.assertIsNone(oslo_context.get_current())
        # Clearing an empty store is harmless.
        context.clear_current()
        self.assertIsNone(oslo_context.get_current())

    def test_a_new_context_is_stored_only_when_asked(self):
        # oslo.context would store it in a thread that has none stored:
        # that context (a service's start-up admin context, a
        # conductor's first message) would then name the thread's every
        # later line.
        self.addCleanup(context.clear_current)
        context.clear_current()
        context.get_admin_context()
        context.RequestContext.from_dict({'request_id': 'req-first'})
        self.assertIsNone(oslo_context.get_current())
        asked = context.RequestContext(overwrite=True)
        self.assertIs(asked, oslo_context.get_current())
        # And a context stored later, on purpose.
        later = context.get_admin_context()
        later.update_store()
        self.assertIs(later, oslo_context.get_current())
