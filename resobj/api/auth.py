"""Authentication: who is calling, as the environ headers keystone sets.

``noauth2`` trusts ``X-Auth-Token: user[:project]`` (the user ``admin``
gets the admin role unless ``X-Roles`` says otherwise), and, as
placement's does, the headers ``X-Roles``, ``X-Project-Id`` and
``OpenStack-System-Scope`` as sent: any caller is whoever it claims to
be, so it is for development and tests only. ``keystone``
validates tokens with keystonemiddleware's ``auth_token``. Either way the
root document ``/`` needs no token, so clients can discover versions.
"""

from resobj.api import errors


def is_root(environ):
    return environ.get('PATH_INFO', '') in ('', '/')


class NoAuth:
    """Development authentication: the token names the user."""

    def __init__(self, app):
        self._app = app

    def __call__(self, environ, start_response):
        if not is_root(environ):
            token = environ.get('HTTP_X_AUTH_TOKEN', '').strip()
            if not token:
                raise errors.HTTPError(401, 'No X-Auth-Token header; with '
                                       'noauth2 it is "user[:project]".')
            user_id, _, project_id = token.partition(':')
            project_id = project_id or user_id
            environ['HTTP_X_USER_ID'] = user_id
            if 'HTTP_OPENSTACK_SYSTEM_SCOPE' not in environ:
                project_id = environ.setdefault('HTTP_X_PROJECT_ID',
                                                project_id)
                environ['HTTP_X_TENANT_ID'] = project_id
            if 'HTTP_X_ROLES' not in environ:
                environ['HTTP_X_ROLES'] = 'admin' if user_id == 'admin' \
                    else ''
            environ['HTTP_X_IDENTITY_STATUS'] = 'Confirmed'
        return self._app(environ, start_response)


def keystone(app, conf):
    """keystonemiddleware auth_token around ``app``, skipping ``/``."""
    from keystonemiddleware import auth_token
    import webob.exc

    class _AuthToken(auth_token.AuthProtocol):
        def __call__(self, environ, start_response):
            if is_root(environ):
                return self._app(environ, start_response)
            return super().__call__(environ, start_response)

        def process_request(self, request):
            # auth_token answers 401 in its own body format; clients of
            # this API parse one format only.
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

    return _AuthToken(app, {'oslo_config_config': conf})
