"""oslo.context's internals that resobj relies on, where it has no public way.

Used through the one function here; ``resobj/tests/unit/test_context.py``
fails if oslo.context changes it, and
doc/source/contributor/architecture.rst lists it.
"""

from oslo_context import context


def forget_current():
    """Forget the context oslo.context stored for this thread, if any.

    The one oslo.log names in the thread's log lines (``get_current``),
    stored by ``update_store`` or a context created with
    ``overwrite=True``. oslo.context keeps it in its thread-local
    ``_request_store`` and offers no way to remove it.
    """
    store = context._request_store
    if getattr(store, 'context', None) is not None:
        del store.context
