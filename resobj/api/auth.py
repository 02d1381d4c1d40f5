"""Authentication: who is calling, as the environ headers keystone sets.

``noauth2`` trusts ``X-Auth-Token: user[:project]`` (the user ``admin``
gets the admin role unless ``X-Roles`` says otherwise), and, as
placement's does, the headers ``X-Roles``, ``X-Project-Id`` and
``OpenStack-System-Scope`` as sent: any caller is whoever it claims to
be, so it is for development and tests only. ``keystone``
(``resobj.api.keystone``) validates tokens with keystonemiddleware's
``auth_token``. Either way the root document ``/`` needs no token, so
clients can discover versions.
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
