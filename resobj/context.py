"""The request context every object and DB API call takes.

The class is an enginefacade transaction-context provider: inside a
``@reader``/``@writer`` scope ``context.session`` (or ``.connection``) is
the current transaction; outside one it does not exist, so nothing can
hold a session across calls.
"""

import copy

from oslo_context import context
from oslo_db.sqlalchemy import enginefacade

from resobj import _oslo_context

_READ_DELETED = ('no', 'yes', 'only')


@enginefacade.transaction_context_provider
class RequestContext(context.RequestContext):
    """A security context plus how soft-deleted rows are treated.

    ``read_deleted`` is ``'no'`` (hide soft-deleted rows), ``'yes'`` (show
    every row) or ``'only'`` (show only soft-deleted rows).

    ``service_version`` is the service version of the code that sent this
    context over RPC, as that code said (None: not said, or not received
    over RPC). A node's calls to a conductor say it, so that the Service
    record the conductor writes for it carries its own version.

    ``arrived``: for the context of an API request, when the request
    arrived whole at the server (a ``time.monotonic()`` value); the
    database layer bounds its waits on the server from then. None
    otherwise. It stays in this process: ``to_dict`` leaves it out.
    """

    def __init__(self, *args, read_deleted='no', service_version=None,
                 arrived=None, overwrite=False, **kwargs):
        # Objects and DB calls pass contexts around explicitly; a new
        # one is stored in oslo.context's thread-local (which names the
        # request in each line the thread logs) only when asked. With
        # overwrite=False, oslo.context would still store it in a thread
        # that has none stored: the first context a thread ever made
        # (the admin context of a service's start, the heartbeat's, a
        # conductor's first message) would then name every line that
        # thread logs outside a request, forever.
        self._store_when_made = overwrite
        super().__init__(*args, overwrite=overwrite, **kwargs)
        self._store_when_made = True
        self.read_deleted = read_deleted
        self.service_version = service_version
        self.arrived = arrived

    def update_store(self):
        """Store this context for the thread's log lines (see above)."""
        if self._store_when_made:
            super().update_store()

    @property
    def read_deleted(self):
        return self._read_deleted

    @read_deleted.setter
    def read_deleted(self, value):
        if value not in _READ_DELETED:
            raise ValueError(
                'read_deleted must be one of %s, not %r'
                % (', '.join(_READ_DELETED), value))
        self._read_deleted = value

    def elevated(self, read_deleted=None):
        """A copy with admin rights and, optionally, other read_deleted."""
        ctx = copy.copy(self)
        ctx.is_admin = True
        ctx.roles = list(self.roles)
        if 'admin' not in ctx.roles:
            ctx.roles.append('admin')
        if read_deleted is not None:
            ctx.read_deleted = read_deleted
        return ctx

    def to_dict(self):
        values = super().to_dict()
        values['read_deleted'] = self.read_deleted
        if self.service_version is not None:
            # A key older code's from_dict ignores, as it does every key
            # it does not know.
            values['service_version'] = self.service_version
        return values

    @classmethod
    def from_dict(cls, values, **kwargs):
        kwargs.setdefault('read_deleted', values.get('read_deleted', 'no'))
        kwargs.setdefault('service_version', values.get('service_version'))
        return super().from_dict(values, **kwargs)


def clear_current():
    """Forget the context stored for this thread's log lines, if any.

    oslo.log names, in each line a thread logs, the context last stored
    for that thread (``update_store``, or a context created with
    ``overwrite=True``); a request served by a pooled thread clears it
    when it ends, so the thread's next lines never name that request.
    oslo.context offers no public way to forget it (see
    :func:`resobj._oslo_context.forget_current`).
    """
    _oslo_context.forget_current()


def get_admin_context(read_deleted='no'):
    """A context with admin rights, for services and management commands."""
    return RequestContext(is_admin=True, read_deleted=read_deleted)
