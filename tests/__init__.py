# Nova must be monkey patched before anything imports eventlet or futurist,
# exactly as nova/tests/functional/__init__.py does.
from nova import monkey_patch ; monkey_patch.patch()  # noqa: E702,I001

from nova import objects  # noqa: E402

objects.register_all()
