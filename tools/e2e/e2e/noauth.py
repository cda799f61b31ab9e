"""A paste filter standing in for Keystone in front of nova-api.

Nova 34 dropped ``auth_strategy = noauth2``; its paste pipeline always
runs keystonemiddleware's ``authtoken``.  This filter takes its place and
does what placement's ``noauth2`` still does: ``X-Auth-Token: user:project``
becomes the identity headers that Nova's ``NovaKeystoneContext`` reads;
user ``admin`` gets the admin role (plus the member and reader roles it
implies in Keystone).  Test deployments only.
"""

import webob.dec
import webob.exc


class NoAuth:

    def __init__(self, application):
        self.application = application

    @webob.dec.wsgify
    def __call__(self, req):
        token = req.headers.get('X-Auth-Token')
        if not token:
            return webob.exc.HTTPUnauthorized()
        user_id, _sep, project_id = token.partition(':')
        roles = ['admin', 'member', 'reader'] if user_id == 'admin' else \
            ['member', 'reader']
        req.headers['X-User-Id'] = user_id
        req.headers['X-Project-Id'] = project_id or user_id
        req.headers['X-Roles'] = ','.join(roles)
        req.headers['X-Identity-Status'] = 'Confirmed'
        return self.application


def filter_factory(global_conf, **local_conf):
    return NoAuth
