# Nova must be monkey patched before anything imports eventlet or futurist,
# the way the installed release wants (Nova 31 has no monkey_patch.patch()).
from nova_drs_scheduler import compat ; compat.monkey_patch()  # noqa: E702,I001

import os  # noqa: E402

import hypothesis  # noqa: E402
from nova import objects  # noqa: E402

objects.register_all()

# Mutation testing (tox -e mutation) needs the same examples at every run,
# or a mutant could be killed in one run and survive the next.
hypothesis.settings.register_profile(
    'mutation', derandomize=True, database=None)
hypothesis.settings.load_profile(os.environ.get('HYPOTHESIS_PROFILE',
                                                'default'))
