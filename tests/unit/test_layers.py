"""The package's layers point one way (doc/architecture.md, "Layers").

The pure decisions (``planning``) reach nothing of the live side, Nova,
the database or the options; the simulator reaches no live module; the
database layer reaches neither the decisions nor the live side.

Read from the source with :mod:`ast`, so the rules hold for every import
statement, whether it runs at import time or later: imports inside
functions and under ``if TYPE_CHECKING`` count too, since a cycle hidden
in a function is still two modules that need each other.  Importing
``a.b.c`` also runs ``a/__init__`` and ``a/b/__init__``, so it depends on
those packages as well, except the importer's own packages (initialised
before it runs).  Plug-ins loaded by stevedore entry points are not
imports.
"""

import ast
import functools
import os

import fixtures
import testtools

import nova_drs_scheduler

PACKAGE = 'nova_drs_scheduler'
CONF = f'{PACKAGE}.conf'


def rules(package: str) -> dict[str, tuple[str, ...]]:
    """``{importers: what they may not reach}``, of ours or not: a
    package or a module, by its dotted name."""
    planning, live = f'{package}.planning', f'{package}.rebalance'
    database = f'{package}.db'
    return {
        planning: (live, database, f'{package}.conf', 'nova',
                   'oslo_config', 'oslo_db', 'sqlalchemy'),
        f'{package}.simulate': (live,),
        database: (planning, live),
    }


def modules(root: str, package: str) -> dict[str, str]:
    """``{dotted name: path}`` of every module of ``package`` under root."""
    found = {}
    for folder, dirs, files in os.walk(os.path.join(root, package)):
        dirs[:] = [d for d in dirs if d != '__pycache__']
        for name in files:
            if name.endswith('.py'):
                path = os.path.join(folder, name)
                parts = os.path.relpath(path, root)[:-3].split(os.sep)
                if parts[-1] == '__init__':
                    parts.pop()
                found['.'.join(parts)] = path
    return found


def _imported(name: str, path: str, node, known) -> list[str]:
    """The modules that one import statement names, ours and not."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        module = node.module or ''
        if node.level:
            base = name.split('.')
            if not path.endswith('__init__.py'):
                base.pop()
            base = base[:len(base) - node.level + 1]
            module = '.'.join(base + ([module] if module else []))
        # ``from package import name``: a submodule, or a name in package.
        # A submodule or a name in the module: both for another
        # package's, for the message.
        names = [f'{module}.{alias.name}'
                 if f'{module}.{alias.name}' in known or
                 not _ours(name, module) else module
                 for alias in node.names]
    return names


def _ours(name: str, imported: str) -> bool:
    return imported.split('.')[0] == name.split('.')[0]


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(f'{prefix}.')


def graph(root: str, package: str) -> dict[str, dict[str, int]]:
    """``{importer: {imported: line}}`` over the package's modules."""
    return _read(root, package)[0]


def third_party(root: str, package: str) -> dict[str, dict[str, int]]:
    """``{importer: {imported: line}}``: what each module imports that is
    not ours (the standard library included)."""
    return _read(root, package)[1]


@functools.cache
def _read(root: str, package: str):
    known = modules(root, package)
    edges, others = {}, {}
    for name, path in known.items():
        with open(path, encoding='utf-8') as handle:
            tree = ast.parse(handle.read(), path)
        own = {'.'.join(name.split('.')[:i])
               for i in range(1, name.count('.') + 2)}
        out = edges.setdefault(name, {})
        other = others.setdefault(name, {})
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in _imported(name, path, node, known):
                if not _ours(name, target):
                    other.setdefault(target, node.lineno)
                    continue
                while target not in known:  # an attribute of a module
                    target = target.rpartition('.')[0]
                parts = target.split('.')
                for i in range(1, len(parts) + 1):
                    needed = '.'.join(parts[:i])
                    if needed in known and needed not in own:
                        out.setdefault(needed, node.lineno)
    return edges, others


def forbidden_reach(edges: dict[str, dict[str, int]],
                    others: dict[str, dict[str, int]],
                    layers: dict[str, tuple[str, ...]]) -> list[str]:
    """One shortest import path from each module of a layer to each thing
    it may not reach, directly or through other modules of ours."""
    problems = []
    for importer in sorted(edges):
        for layer, banned in layers.items():
            if not _under(importer, layer):
                continue
            paths = {importer: [importer]}
            queue = [importer]
            for node in queue:
                imports = {**others.get(node, {}), **edges[node]}
                for target, line in sorted(imports.items()):
                    if any(_under(target, ban) for ban in banned):
                        problems.append(' -> '.join(
                            paths[node] + [f'{target} (line {line})']))
                    elif target in edges and target not in paths:
                        paths[target] = paths[node] + [target]
                        queue.append(target)
    return problems


def cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """One import path around each strongly connected set of modules."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            members = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.add(member)
                if member == node:
                    break
            if len(members) > 1:
                found.append(_path_around(edges, members))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _path_around(edges, members: set[str]) -> list[str]:
    """A shortest cycle through the first member, for the message."""
    start = min(members)
    paths = {start: [start]}
    queue = [start]
    for node in queue:
        for nxt in sorted(edges[node]):
            if nxt == start:
                return paths[node] + [start]
            if nxt in members and nxt not in paths:
                paths[nxt] = paths[node] + [nxt]
                queue.append(nxt)
    raise AssertionError(f'no cycle through {start}')


def conf_violations(edges: dict[str, dict[str, int]],
                    conf: str) -> list[str]:
    """Imports from the options layer of anything but itself or a leaf.

    A leaf is a module at the top of the package that imports nothing of
    ours: a home for constants (choices, defaults) that options and code
    share.  A package is never one (importing it says nothing of what its
    modules import), so nothing of ``rebalance`` qualifies.
    """
    def leaf(module):
        return (module.count('.') == 1 and not edges[module] and
                not any(other.startswith(f'{module}.') for other in edges))

    problems = []
    for importer in sorted(edges):
        if importer != conf and not importer.startswith(f'{conf}.'):
            continue
        for target, line in sorted(edges[importer].items()):
            if not (target == conf or target.startswith(f'{conf}.') or
                    leaf(target)):
                problems.append(f'{importer} (line {line}) imports {target}')
    return problems


def _fmt(found: list[list[str]]) -> str:
    return '\n'.join(' -> '.join(path) for path in found)


ROOT = os.path.dirname(os.path.dirname(nova_drs_scheduler.__file__))


class PackageLayersTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.edges = graph(ROOT, PACKAGE)

    def test_the_graph_is_read(self):
        # A parse that found nothing would pass every rule below.
        self.assertGreater(len(self.edges), 50)
        self.assertIn(f'{PACKAGE}.conf', self.edges[f'{PACKAGE}.service'])
        self.assertIn(f'{PACKAGE}.planning.model',
                      self.edges[f'{PACKAGE}.planning.planner'])
        self.assertIn('nova.objects', third_party(ROOT, PACKAGE)[
            f'{PACKAGE}.rebalance.executor'])

    def test_no_import_cycle(self):
        found = cycles(self.edges)
        self.assertEqual([], found, f'import cycles:\n{_fmt(found)}')

    def test_decisions_simulator_and_database_keep_to_their_side(self):
        problems = forbidden_reach(self.edges, third_party(ROOT, PACKAGE),
                                   rules(PACKAGE))
        self.assertEqual(
            [], problems,
            'planning/ may reach nothing of rebalance/, db/, conf/, Nova or '
            'oslo.config; simulate/ nothing of rebalance/; db/ neither '
            'planning/ nor rebalance/ (doc/architecture.md):\n' +
            '\n'.join(problems))

    def test_conf_imports_nothing_above_it(self):
        problems = conf_violations(self.edges, CONF)
        self.assertEqual(
            [], problems,
            'the options layer may import only itself and leaf modules '
            '(doc/architecture.md):\n' + '\n'.join(problems))


class CheckerTest(testtools.TestCase):
    """The rules catch what they are for, on a package made for it."""

    FILES = {
        '__init__.py': '',
        'leaf.py': 'import os\nCHOICES = ("a", "b")\n',
        'service.py': 'from pkg import conf\n',
        'deadline.py': ('def gather():\n'
                        '    from pkg import service\n'),
        'conf/__init__.py': 'from pkg.conf import opts\n',
        'conf/opts.py': 'from pkg import leaf\n',
        'rebalance/__init__.py': '',
        'rebalance/sources.py': 'from pkg import deadline\n',
        'planning/__init__.py': '',
        'planning/model.py': 'import dataclasses\nfrom pkg import leaf\n',
        'simulate/__init__.py': '',
        'simulate/engine.py': 'from pkg.planning import model\n',
        'db/__init__.py': '',
        'db/store.py': 'import sqlalchemy\nfrom pkg import leaf\n',
    }

    def _edges(self, **changed):
        root = self.useFixture(fixtures.TempDir()).path
        for name, text in {**self.FILES, **changed}.items():
            path = os.path.join(root, 'pkg', name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'w', encoding='utf-8') as handle:
                handle.write(text)
        self.others = third_party(root, 'pkg')
        return graph(root, 'pkg')

    def test_clean_package_passes(self):
        edges = self._edges()
        self.assertEqual([], cycles(edges))
        self.assertEqual([], conf_violations(edges, 'pkg.conf'))
        self.assertEqual([], forbidden_reach(edges, self.others,
                                             rules('pkg')))

    def test_decisions_reaching_the_live_side_through_a_leaf(self):
        edges = self._edges(**{
            'leaf.py': 'from pkg.rebalance import sources\n'})
        self.assertEqual(
            ['pkg.planning.model -> pkg.leaf -> pkg.rebalance (line 1)',
             'pkg.planning.model -> pkg.leaf -> '
             'pkg.rebalance.sources (line 1)',
             # The simulator and the database reach it through planning's
             # model or the leaf.
             'pkg.db.store -> pkg.leaf -> pkg.rebalance (line 1)',
             'pkg.db.store -> pkg.leaf -> pkg.rebalance.sources (line 1)',
             'pkg.simulate.engine -> pkg.planning.model -> pkg.leaf -> '
             'pkg.rebalance (line 1)',
             'pkg.simulate.engine -> pkg.planning.model -> pkg.leaf -> '
             'pkg.rebalance.sources (line 1)'],
            sorted(forbidden_reach(edges, self.others, rules('pkg')),
                   key=lambda p: (not p.startswith('pkg.planning'), p)))

    def test_decisions_importing_nova_or_the_options(self):
        edges = self._edges(**{'planning/model.py': (
            'def read():\n'
            '    from oslo_config import cfg\n'
            '    from nova import objects\n'
            '    from pkg.conf import opts\n')})
        self.assertEqual(
            ['pkg.planning.model -> nova.objects (line 3)',
             'pkg.planning.model -> oslo_config.cfg (line 2)',
             'pkg.planning.model -> pkg.conf (line 4)',
             'pkg.planning.model -> pkg.conf.opts (line 4)'],
            sorted(p for p in forbidden_reach(edges, self.others,
                                              rules('pkg'))
                   if p.startswith('pkg.planning')))

    def test_database_importing_the_decisions(self):
        edges = self._edges(**{
            'db/store.py': 'from pkg.planning import model\n'})
        self.assertEqual(
            ['pkg.db.store -> pkg.planning (line 1)',
             'pkg.db.store -> pkg.planning.model (line 1)'],
            forbidden_reach(edges, self.others, rules('pkg')))

    def test_cycle_through_a_function_and_a_package_is_found(self):
        edges = self._edges(**{'conf/opts.py': (
            'from pkg import leaf\n'
            'from pkg.rebalance import sources\n')})
        self.assertEqual(
            [['pkg.conf', 'pkg.conf.opts', 'pkg.rebalance.sources',
              'pkg.deadline', 'pkg.service', 'pkg.conf']], cycles(edges))
        self.assertEqual(
            ['pkg.conf.opts (line 2) imports pkg.rebalance',
             'pkg.conf.opts (line 2) imports pkg.rebalance.sources'],
            conf_violations(edges, 'pkg.conf'))

    def test_importing_a_submodule_runs_its_package(self):
        # rebalance/__init__ importing deadline is enough: conf reaches it
        # through ``from pkg.rebalance import anything``.
        edges = self._edges(**{
            'rebalance/__init__.py': 'import pkg.deadline\n',
            'rebalance/sources.py': '',
            'conf/opts.py': 'from pkg.rebalance.sources import NAMES\n'})
        self.assertEqual(1, len(cycles(edges)))
        self.assertIn('pkg.rebalance', cycles(edges)[0])
        self.assertEqual(2, len(conf_violations(edges, 'pkg.conf')))

    def test_a_leaf_that_grows_an_import_is_no_longer_a_leaf(self):
        edges = self._edges(**{'leaf.py': 'from pkg import service\n'})
        self.assertEqual(['pkg.conf.opts (line 1) imports pkg.leaf'],
                         conf_violations(edges, 'pkg.conf'))

    def test_a_package_is_never_a_leaf(self):
        edges = self._edges(**{'conf/opts.py': 'from pkg import rebalance\n',
                               'rebalance/leaf.py': 'NAMES = ()\n'})
        self.assertEqual([], cycles(edges))
        self.assertEqual(['pkg.conf.opts (line 1) imports pkg.rebalance'],
                         conf_violations(edges, 'pkg.conf'))
        edges = self._edges(**{
            'conf/opts.py': 'from pkg.rebalance import leaf\n',
            'rebalance/leaf.py': 'NAMES = ()\n'})
        self.assertEqual(['pkg.conf.opts (line 1) imports pkg.rebalance',
                          'pkg.conf.opts (line 1) imports pkg.rebalance.leaf'],
                         conf_violations(edges, 'pkg.conf'))
