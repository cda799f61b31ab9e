# Nova's functional harness requires the monkey patch before any import.
from nova import monkey_patch ; monkey_patch.patch()  # noqa: E702,I001
