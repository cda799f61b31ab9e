# Nova's functional harness requires the monkey patch before any import.
from nova_drs_scheduler import compat ; compat.monkey_patch()  # noqa: E702,I001

from nova import objects  # noqa: E402

objects.register_all()
