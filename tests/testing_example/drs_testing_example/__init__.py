# Nova's functional harness needs its monkey patch before any other import.
from nova import monkey_patch ; monkey_patch.patch()  # noqa: E702,I001
