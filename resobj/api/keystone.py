"""Keystone authentication: keystonemiddleware's auth_token, configured.

``[keystone_authtoken]`` holds keystonemiddleware's options, which
resobj registers from keystonemiddleware's own list
(:func:`register_opts`), and the options of the keystoneauth plugin its
``auth_type`` names (the service's credentials, with which auth_token
validates tokens), which exist only once the files are parsed and the
plugin is known (:func:`register_plugin_opts`). Both run before the
unknown-option check, so that the check knows every option an OpenStack
service sets there.

:func:`check` refuses, before anything is served, a configuration with
which no token could ever be validated (no plugin, a plugin missing a
required option). :func:`middleware` wraps the application: ``/`` needs
no token, and auth_token's answers are given in the API's error format:
401 for a missing, bad or expired token, 503 when Keystone cannot be
asked (unreachable, or refusing the service's own credentials).
"""

import logging as std_logging
import threading
import time

from keystoneauth1 import exceptions as ksa_exc
from keystoneauth1 import loading as ks_loading
from keystonemiddleware import auth_token
from keystonemiddleware import opts as ksm_opts
from oslo_log import log as logging
import webob.exc

from resobj.api import auth
from resobj.api import errors
from resobj import exception

LOG = logging.getLogger(__name__)

GROUP = 'keystone_authtoken'


def register_opts(conf):
    """keystonemiddleware's options, auth_type and auth_section included.

    keystoneauth's session options that auth_token reads (``cafile``,
    ``certfile``, ``keyfile``, ``insecure``) are in its list under the
    same names; the others it never reads in this group.
    """
    for group, opts in ksm_opts.list_auth_token_opts():
        conf.register_opts(opts, group=group)


def _plugin_group(conf):
    """The section the auth plugin's options are read from."""
    return conf[GROUP].auth_section or GROUP


def register_plugin_opts(conf):
    """Register the options of the plugin ``auth_type`` names; parsed conf.

    As auth_token reads them: from the section ``auth_section`` names, or
    from ``[keystone_authtoken]``. Nothing when no plugin is named.
    Raises ConfigurationError for a plugin keystoneauth does not have.
    """
    ks_loading.register_auth_conf_options(conf, GROUP)
    group = _plugin_group(conf)
    name = conf[group].auth_type
    if not name:
        return
    try:
        opts = ks_loading.get_auth_plugin_conf_options(name)
    except ksa_exc.NoMatchingPlugin:
        raise exception.ConfigurationError(
            reason='[%s] auth_type: keystoneauth has no plugin %r (it has '
                   '%s)' % (group, name, ', '.join(
                       sorted(ks_loading.get_available_plugin_names()))))
    conf.register_opts(opts, group=group)


def check(conf):
    """Raise ConfigurationError unless auth_token could validate tokens.

    It needs a keystoneauth plugin (the service's own credentials) that
    loads: without one, every token would fail at request time.
    """
    group = _plugin_group(conf)
    try:
        plugin = ks_loading.load_auth_from_conf_options(conf, GROUP)
    except ksa_exc.MissingRequiredOptions as exc:
        raise exception.ConfigurationError(
            reason='[%s] auth_type = %s needs %s' % (
                group, conf[group].auth_type,
                ', '.join(opt.dest for opt in exc.options)))
    except ksa_exc.ClientException as exc:
        raise exception.ConfigurationError(
            reason='[%s] auth_type = %s: %s' % (
                group, conf[group].auth_type, exc))
    if plugin is None:
        raise exception.ConfigurationError(
            reason='[api] auth_strategy = keystone validates tokens with '
                   'the service\'s own credentials: set [%s] auth_type '
                   '(usually password) and its options (auth_url, '
                   'username, password, project_name, user_domain_name, '
                   'project_domain_name)' % GROUP)


UNAVAILABLE = ('Keystone is unavailable: the token could not be validated. '
               'Try again later.')


# auth_token's line, at CRITICAL, for each token it could not validate
# because Keystone could not be asked.
_UNREACHABLE = 'Unable to validate token: %s'


class _OneWarningPerOutage(std_logging.Filter):
    """auth_token's line per request while Keystone is away, said once.

    Every request with a token to validate logs it again, at CRITICAL;
    an outage becomes one WARNING per ``interval`` seconds saying what
    the service does, the repeats demoted to DEBUG and counted.
    ``test_api_auth`` fails if auth_token's line is no longer recognised.
    """

    def __init__(self, interval=60):
        super().__init__()
        self.interval = interval
        self._lock = threading.Lock()
        self._quiet_until = 0.0
        self._repeats = 0

    def filter(self, record):
        if record.msg != _UNREACHABLE:
            return True
        now = time.monotonic()
        with self._lock:
            if now < self._quiet_until:
                self._repeats += 1
                record.levelno, record.levelname = std_logging.DEBUG, 'DEBUG'
                return std_logging.getLogger(record.name).isEnabledFor(
                    std_logging.DEBUG)
            repeats, self._repeats = self._repeats, 0
            self._quiet_until = now + self.interval
        record.levelno, record.levelname = std_logging.WARNING, 'WARNING'
        record.msg = ('Keystone could not be asked to validate a token '
                      '(%s): requests with a token to validate answer 503 '
                      'until it can')
        record.args = (record.args[0] if record.args else '',)
        if repeats:
            record.msg += ' (%d more since the last such line)'
            record.args += (repeats,)
        return True


_FILTERED = {}
_FILTERED_LOCK = threading.Lock()


def _quiet_outages(log):
    """Put one _OneWarningPerOutage on auth_token's logger ``log``.

    One per logger (named by auth_token's log_name setting), however
    many applications are built in the process: two would each count the
    other's lines.
    """
    logger = getattr(log, 'logger', log)  # an oslo.log adapter's logger
    with _FILTERED_LOCK:
        if logger.name not in _FILTERED:
            _FILTERED[logger.name] = _OneWarningPerOutage()
            logger.addFilter(_FILTERED[logger.name])


class _AuthToken(auth_token.AuthProtocol):
    def __init__(self, app, conf):
        super().__init__(app, conf)
        self.application = app
        _quiet_outages(self.log)

    def __call__(self, environ, start_response):
        if auth.is_root(environ):
            return self.application(environ, start_response)
        return super().__call__(environ, start_response)

    def process_request(self, request):
        # auth_token answers in its own body format; clients of this API
        # parse one format only.
        try:
            return super().process_request(request)
        except webob.exc.HTTPUnauthorized as exc:
            headers = {}
            if exc.headers.get('WWW-Authenticate'):
                headers['WWW-Authenticate'] = exc.headers[
                    'WWW-Authenticate']
            raise errors.HTTPError(
                401, 'The request you have made requires '
                'authentication.', headers=headers)
        except webob.exc.HTTPServiceUnavailable:
            # auth_token has logged why (unreachable, or the service's
            # credentials refused).
            raise errors.HTTPError(503, UNAVAILABLE,
                                   errors.IDENTITY_UNAVAILABLE)
        except ksa_exc.ClientException as exc:
            # What auth_token lets through: a catalog without the
            # identity endpoint it looks for, for one.
            LOG.warning('Could not validate a token with Keystone: %s '
                        '(check [%s])', exc, GROUP)
            raise errors.HTTPError(503, UNAVAILABLE,
                                   errors.IDENTITY_UNAVAILABLE)


def middleware(app, conf):
    """auth_token around ``app``, skipping ``/``; ``conf`` checked first."""
    check(conf)
    return _AuthToken(app, {'oslo_config_config': conf})
