"""Write doc/config-reference.md from the registered options.

Run by ``tox -e genconfig`` next to oslo-config-generator, so the
reference and the sample never drift from the code; a unit test checks
that the checked-in file is current.
"""

import argparse
import sys

from oslo_config import cfg

from nova_drs_scheduler import conf

HEADER = '''# Configuration reference

Every option nova-drs-scheduler adds to `nova.conf`, generated from the
code by `tox -e genconfig` (which also writes
[`etc/nova-drs-scheduler.conf.sample`](../etc/nova-drs-scheduler.conf.sample)).
An invalid value stops `nova-drs-scheduler` (and a stock `nova-scheduler`
using our filters or weigher) at start, with a message naming the option.
'''


def _type(opt: cfg.Opt) -> str:
    return type(opt.type).__name__.lower() if opt.type else 'string'


def _constraints(opt: cfg.Opt) -> str:
    parts = []
    for bound in ('min', 'max'):
        value = getattr(opt.type, bound, None)
        if value is not None:
            parts.append(f'{bound} {value}')
    choices = getattr(opt.type, 'choices', None)
    if choices:
        parts.append('one of ' + ', '.join(f'`{c}`' for c in choices))
    return '; '.join(parts)


def _cell(text) -> str:
    return ' '.join(str(text).split()).replace('|', '\\|')


def _table(opts) -> list[str]:
    lines = ['| option | type | default | constraints | meaning |',
             '|---|---|---|---|---|']
    for opt in opts:
        default = '(secret)' if opt.secret and opt.default else \
            opt.default
        default = '' if default is None else f'`{_cell(default)}`'
        deprecated = ' **Deprecated.**' if opt.deprecated_for_removal \
            else ''
        lines.append(f'| `{opt.name}` | {_type(opt)} | {default} | '
                     f'{_cell(_constraints(opt))} | '
                     f'{_cell(opt.help)}{deprecated} |')
    return lines


def render() -> str:
    """Each group's options, its advanced ones (``advanced=True``, as
    oslo-config-generator puts them last in the sample) in a table of
    their own under it."""
    lines = [HEADER]
    for group, opts in conf.list_opts():
        name = 'DEFAULT' if group is None else group.name
        lines.append(f'\n## [{name}]\n')
        if group is not None and group.help:
            lines.append(_cell(group.help) + '\n')
        lines += _table([opt for opt in opts if not opt.advanced])
        advanced = [opt for opt in opts if opt.advanced]
        if advanced:
            lines.append(f'\n### [{name}] advanced options\n')
            lines.append('Few deployments set these: the options above '
                         'cover the usual choices. One set here wins over '
                         'what the options above would give it.\n')
            lines += _table(advanced)
    return '\n'.join(lines) + '\n'


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--output', default='doc/config-reference.md')
    args = parser.parse_args()
    with open(args.output, 'w') as handle:
        handle.write(render())
    print(f'wrote {args.output}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
