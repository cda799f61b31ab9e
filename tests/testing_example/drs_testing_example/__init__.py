# Nova's functional harness needs its monkey patch before any other import
# (compat.monkey_patch does it the way the installed Nova release wants).
from nova_drs_scheduler import compat ; compat.monkey_patch()  # noqa: E702,I001
