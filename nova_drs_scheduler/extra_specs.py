"""Flavor extra-spec validators for the ``drs_pool:`` and ``drs:`` scopes.

Registered under Nova's ``nova.api.extra_spec_validators`` entry point, so
the flavor API accepts ``drs_pool:KEY`` specs and rejects malformed ones
instead of storing a typo that the DRSPoolFilter would silently apply.
Declaring ``drs:exclude`` also registers the ``drs`` namespace: Nova then
rejects unknown ``drs:`` keys, such as a misspelt opt-out.
"""

from nova.api.validation.extra_specs import base

from nova_drs_scheduler.filters import pool

DESCRIPTION = """\
Require hosts whose aggregate metadata KEY matches the value. Requires the
``DRSPoolFilter`` scheduler filter. The value is a literal or uses Nova's
extra-spec operators: ``s==``, ``s!=``, ``s>=``, ``s>``, ``s<=``, ``s<``,
``==``, ``!=``, ``>=``, ``<=``, ``<in>``, ``<all-in>``, ``<or>``.
"""

EXTRA_SPEC_VALIDATORS = [
    base.ExtraSpecValidator(
        name=pool.SCOPE + ':{key}',
        description=DESCRIPTION,
        parameters=[{
            'name': 'key',
            'description': 'The aggregate metadata key to match',
            'pattern': r'[a-zA-Z0-9_.-]+',
        }],
        value={'type': str, 'description': 'The requirement to match'},
    ),
    base.ExtraSpecValidator(
        name='drs:exclude',
        description='Keep servers of this flavor where they are: the DRS '
                    'rebalancer never live-migrates them.',
        value={'type': bool,
               'description': 'Whether to exclude the servers from DRS.'},
    ),
]


def register():
    return EXTRA_SPEC_VALIDATORS
