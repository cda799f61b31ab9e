# Nova must be monkey patched before anything imports eventlet or futurist,
# exactly as nova/tests/functional/__init__.py does.
from nova_drs_scheduler import compat ; compat.monkey_patch()  # noqa: E702,I001

from nova import objects  # noqa: E402

objects.register_all()
