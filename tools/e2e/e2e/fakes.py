"""The two OpenStack services the test does not deploy, as tiny fakes.

One WSGI app on one port, served by gunicorn like the real APIs:

- **Glance**: ``GET /v2/images/{id}`` returns one fixed, active, public
  image (``IMAGE_ID``) and 404 for any other id.  Nova needs an image to
  boot without volumes; the fake virt driver never downloads it.
  ``GET /v2/schemas/image`` returns a permissive schema, which
  glanceclient fetches before it parses an image.
- **Neutron, empty**: every ``GET /v2.0/<collection>`` returns an empty
  list.  Servers boot with ``networks: none``, so they have no ports, but
  Nova still asks Neutron about ports during live migration; an empty
  Neutron is the truthful answer for port-less servers.  Anything else is
  a 501, so an unexpected call shows up in the logs instead of passing.
"""

import json

IMAGE_ID = '155d900f-4e14-4e4c-a73d-069cbf4541e6'

IMAGE = {
    'id': IMAGE_ID, 'name': 'drs-e2e-image', 'status': 'active',
    'visibility': 'public', 'protected': False, 'os_hidden': False,
    'container_format': 'bare', 'disk_format': 'raw',
    'min_disk': 0, 'min_ram': 0, 'size': 25165824, 'virtual_size': None,
    'checksum': None, 'owner': 'admin', 'tags': [],
    'created_at': '2026-01-01T00:00:00Z', 'updated_at': '2026-01-01T00:00:00Z',
    'file': f'/v2/images/{IMAGE_ID}/file', 'self': f'/v2/images/{IMAGE_ID}',
    'schema': '/v2/schemas/image',
}

#: glanceclient treats only the schema's properties as image attributes.
IMAGE_SCHEMA = {'name': 'image', 'properties': {key: {} for key in IMAGE},
                'additionalProperties': {'type': 'string'}, 'links': []}


def application(environ, start_response):
    method = environ['REQUEST_METHOD']
    parts = [p for p in environ['PATH_INFO'].split('/') if p]
    status, body = '501 Not Implemented', {'error': 'not faked'}
    if method == 'GET' and parts == ['v2', 'schemas', 'image']:
        status, body = '200 OK', IMAGE_SCHEMA
    elif method == 'GET' and parts[:2] == ['v2', 'images'] and \
            len(parts) == 3:
        if parts[2] == IMAGE_ID:
            status, body = '200 OK', IMAGE
        else:
            status, body = '404 Not Found', {'error': 'no such image'}
    elif method == 'GET' and parts[:1] == ['v2.0'] and len(parts) == 2:
        collection = parts[1].removesuffix('.json')
        status, body = '200 OK', {collection: []}
    data = json.dumps(body).encode()
    start_response(status, [('Content-Type', 'application/json'),
                            ('Content-Length', str(len(data)))])
    return [data]
