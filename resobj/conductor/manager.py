"""The conductor's RPC endpoint: object methods run for other services.

A service without database access (``[conductor] use_local = false``)
sends each remotable object call here (oslo.versionedobjects'
indirection contract). The conductor always runs the newest code of the
cloud, so it can read what every peer sends and must answer each peer in
the versions that peer knows: results go back backported to the caller's
version manifest, and a value the caller's version cannot represent
fails the call (ObjectBackportError) instead of reaching it altered.

Each call runs for its caller's service version (``acting_for``): the
Service record a node registers or reports through a conductor carries
the node's version, which the caller says or, for older code, its
Service version tells.

A call with an ``idempotency_key`` (RPC 1.1) that changes state is
carried out at most once, whichever conductor each of its repeats
reaches (resobj.conductor.idempotency).
"""

import copy

from oslo_log import log as logging
import oslo_messaging as messaging

from resobj.conductor import idempotency
from resobj import exception
from resobj import objects
from resobj.objects import base
from resobj.objects import primitive as primitive_mod
from resobj.objects import service as service_obj
from resobj import rpc

LOG = logging.getLogger(__name__)


def _fields_at_caller_version(obj, manifest):
    """The fields of ``obj`` the caller's version of it has.

    The caller sent ``obj`` at its version; fields a newer version added
    (which the method may have set, reading them from the database) are
    not the caller's to receive. The backport decides, as for any object
    sent to the caller: what it drops, the caller does not know.
    """
    newest = type(obj).VERSION
    if obj.VERSION == newest:
        return set(obj.fields)
    current = obj.obj_clone()
    current.VERSION = newest
    primitive = current.obj_to_primitive(target_version=obj.VERSION,
                                         version_manifest=manifest)
    return set(primitive[primitive_mod.keys(base.ResobjObject).data])


def _manifest_of(obj, manifest=None):
    """{object name: version} of ``obj`` and every object inside it.

    What the caller sent is at the versions the caller knows; the
    conductor answers in those.
    """
    manifest = {} if manifest is None else manifest
    manifest.setdefault(obj.obj_name(), obj.VERSION)
    values = [getattr(obj, name) for name in obj.fields
              if obj.obj_attr_is_set(name)]
    if isinstance(obj, base.ObjectListBase):
        values.extend(obj.objects)
    for value in values:
        if isinstance(value, base.ovo_base.VersionedObject):
            _manifest_of(value, manifest)
    return manifest


def _caller_version(context, object_versions):
    """The service version of the code that sent this call.

    What the caller said (``context.service_version``); code that does
    not say it (older than service version 3) is known by the Service
    version it sent (service.version_of_caller). None when neither tells.
    """
    said = context.service_version
    if isinstance(said, int) and not isinstance(said, bool) and said >= 0:
        return said
    if said is not None:
        LOG.warning('Ignoring a caller\'s service version %r: not a '
                    'service version', said)
    return service_obj.version_of_caller(object_versions)


# The upgrade tests count these lines to know how many objects an older
# peer had to be sent backported (resobj/tests/upgrade).
BACKPORT_LOG = 'Backporting %s %s to %s for the caller'


def _log_backport(obj, target):
    LOG.debug(BACKPORT_LOG, obj.obj_name(), obj.VERSION, target)


def _for_caller(value, manifest):
    """``value`` as the caller can read it: objects backported.

    An object whose class the caller's manifest names goes as a primitive
    of that version (its children per the same manifest); anything else
    goes as it is and the serializer dehydrates it at its own version.
    """
    if isinstance(value, base.ResobjObject):
        wanted = manifest.get(value.obj_name())
        if wanted is not None and wanted != value.__class__.VERSION:
            _log_backport(value, wanted)
            return value.obj_to_primitive(target_version=wanted,
                                          version_manifest=manifest)
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_for_caller(item, manifest) for item in value)
    if isinstance(value, dict):
        return {key: _for_caller(item, manifest)
                for key, item in value.items()}
    return value


class ConductorManager:
    """Serves the conductor RPC API (see rpcapi.py for its versions)."""

    target = messaging.Target(version='1.1')

    def __init__(self, conf):
        # Every class must be registered before the first call names one,
        # and the objects run with this conductor's settings (allocation
        # ratios, retries), not their defaults.
        objects.register_all()
        objects.configure(conf)
        self._purger = idempotency.Purger(
            conf.conductor.call_outcome_retention)

    @rpc.endpoint_method
    def object_class_action_versions(self, context, objname, objmethod,
                                     object_versions, args, kwargs,
                                     idempotency_key=None):
        """Run classmethod ``objmethod`` of ``objname``.

        The answer is at the caller's ``object_versions``. With an
        ``idempotency_key`` (1.1), a method that changes state runs at
        most once for the key.
        """
        cls = base.class_from_name(objname, object_versions.get(objname))
        method = self._method(cls, objname, objmethod)

        def run(args, kwargs):
            with service_obj.acting_for(_caller_version(context,
                                                        object_versions)):
                result = method(context, *args, **kwargs)
            return _for_caller(result, object_versions)

        if idempotency_key is None or \
                not idempotency.recorded(objname, objmethod):
            return run(args, kwargs)
        # A run whose transaction is retried starts again from the
        # arguments as they arrived.
        return self._once(
            context, idempotency_key, objname, objmethod,
            lambda: run(copy.deepcopy(args), copy.deepcopy(kwargs)))

    @rpc.endpoint_method
    def object_action(self, context, objinst, objmethod, args, kwargs,
                      idempotency_key=None):
        """Run ``objmethod`` on ``objinst``; return (changes, result).

        The changes are the fields the call set or changed, as
        primitives at the caller's versions, plus ``obj_what_changed``:
        the caller applies them to its own copy. With an
        ``idempotency_key`` (1.1), a method that changes state runs at
        most once for the key.
        """
        manifest = _manifest_of(objinst)
        objname = objinst.obj_name()
        self._method(objinst, objname, objmethod)
        if idempotency_key is None or \
                not idempotency.recorded(objname, objmethod):
            return self._act(context, objinst, objinst.obj_clone(),
                             objmethod, manifest, args, kwargs)

        def run():
            # On a copy, from the arguments as they arrived: a run whose
            # transaction is retried starts again from them.
            inst = objinst.obj_clone()
            inst.VERSION = objinst.VERSION
            return self._act(context, inst, objinst, objmethod, manifest,
                             copy.deepcopy(args), copy.deepcopy(kwargs))
        return self._once(context, idempotency_key, objname, objmethod, run)

    def _act(self, context, objinst, before, objmethod, manifest, args,
             kwargs):
        """``objmethod`` run on ``objinst``, answered for the caller.

        (changes since ``before``, result), as object_action answers.
        """
        method = getattr(objinst, objmethod)
        with service_obj.acting_for(_caller_version(context, manifest)):
            result = method(*args, **kwargs)
        known = _fields_at_caller_version(objinst, manifest)
        updates = {}
        for name, field in objinst.fields.items():
            if name not in known or not objinst.obj_attr_is_set(name):
                continue
            value = getattr(objinst, name)
            if before.obj_attr_is_set(name) and \
                    getattr(before, name) == value:
                continue
            if isinstance(value, base.ResobjObject):
                # The serializers carry it (backported, if the caller's
                # version differs) and the caller sets it as an object.
                updates[name] = _for_caller(value, manifest)
            else:
                updates[name] = field.to_primitive(objinst, name, value)
        updates['obj_what_changed'] = sorted(
            objinst.obj_what_changed() & known)
        return updates, _for_caller(result, manifest)

    def _once(self, context, key, objname, objmethod, run):
        """``run()``'s answer, or the one recorded for ``key``."""
        answer = idempotency.answer_once(
            context, key, '%s.%s' % (objname, objmethod),
            lambda: idempotency.as_sent(context, run()))
        self._purger.maybe_purge(context)
        return answer

    @rpc.endpoint_method
    def object_backport_versions(self, context, objinst, object_versions):
        """``objinst`` (newer than the caller reads) as its versions."""
        name = objinst.obj_name()
        if name not in object_versions:
            raise exception.ObjectBackportError(
                objname=name, target='none',
                reason='the caller knows no version of %s' % name)
        _log_backport(objinst, object_versions[name])
        return objinst.obj_to_primitive(
            target_version=object_versions[name],
            version_manifest=object_versions)

    @staticmethod
    def _method(owner, objname, objmethod):
        # Only remotable methods may be called over RPC: anything else
        # (a private helper, a framework method) is not an API.
        method = getattr(owner, objmethod, None)
        if method is None or not getattr(method, 'remotable', False):
            raise exception.ObjectActionError(
                action=objmethod,
                reason='%s has no remotable method %s' % (objname,
                                                          objmethod))
        return method
