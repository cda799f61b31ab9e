"""Every relative link in README.md and doc/*.md resolves.

A link's file must exist, and its ``#anchor`` must name a heading of the
page it points to, by GitHub's rule for heading ids: the heading's text
(code spans, links and emphasis rendered), lower-cased, every character
but letters, digits, ``_``, ``-`` and spaces removed, spaces turned into
``-``, and ``-1``, ``-2`` ... appended to a repeated id.
"""

import glob
import os
import re
import tempfile

import testtools

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

_FENCE = re.compile(r'^\s*(```|~~~)')
_HEADING = re.compile(r'^#{1,6}\s+(.*?)\s*#*\s*$')
_CODE_SPAN = re.compile(r'(`+)(.+?)\1')
_LINK = re.compile(r'!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?'
                   r'(?:\s+"[^"]*")?\s*\)')
_EXTERNAL = re.compile(r'^[a-z][a-z0-9+.-]*:', re.I)


def _prose_lines(text: str):
    """(line number, line) of the lines outside fenced code blocks."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def _rendered(markdown: str) -> str:
    """Text outside code spans as rendered: links as their text, no
    emphasis markers, no escapes."""
    text = _LINK.sub(lambda m: m.group(1), markdown)
    text = re.sub(r'\*+|(?<!\w)_+|_+(?!\w)', '', text)
    return re.sub(r'\\([^\w\s])', r'\1', text)


def slug(heading: str) -> str:
    """GitHub's id for a heading's text (before de-duplication)."""
    pieces, start = [], 0
    for code in _CODE_SPAN.finditer(heading):
        pieces += [_rendered(heading[start:code.start()]),
                   code.group(2).strip()]
        start = code.end()
    text = ''.join(pieces) + _rendered(heading[start:])
    text = re.sub(r'[^\w\- ]', '', text.strip().lower())
    return text.replace(' ', '-')


def anchors(path: str) -> frozenset:
    """The heading ids of a markdown file, repeats numbered as GitHub
    numbers them."""
    with open(path, encoding='utf-8') as handle:
        text = handle.read()
    seen = {}
    found = set()
    for _, line in _prose_lines(text):
        match = _HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f'{base}-{count}')
    return frozenset(found)


def broken_links(path: str) -> list[str]:
    """``file:line: target: why`` for each relative link of ``path`` that
    does not resolve."""
    with open(path, encoding='utf-8') as handle:
        text = handle.read()
    broken = []
    for number, line in _prose_lines(text):
        for match in _LINK.finditer(_CODE_SPAN.sub('', line)):
            target = match.group(2)
            if not target or _EXTERNAL.match(target):
                continue
            file_part, _, anchor = target.partition('#')
            resolved = (os.path.normpath(os.path.join(
                os.path.dirname(path), file_part)) if file_part else path)
            where = f'{os.path.relpath(path, ROOT)}:{number}: {target}'
            if not os.path.exists(resolved):
                broken.append(f'{where}: no such file')
            elif anchor and resolved.endswith('.md') and (
                    anchor not in anchors(resolved)):
                broken.append(f'{where}: no heading with this id')
    return broken


def documents() -> list[str]:
    return [os.path.join(ROOT, 'README.md')] + sorted(
        glob.glob(os.path.join(ROOT, 'doc', '*.md')))


class SlugTest(testtools.TestCase):

    def test_github_heading_ids(self):
        self.assertEqual('what-ci-runs-and-how-long-it-takes',
                         slug('What CI runs, and how long it takes'))
        self.assertEqual('basedrstestcase', slug('`base.DRSTestCase`'))
        self.assertEqual(
            'from-pre-victoria-nova-corefilter-ramfilter-diskfilter-'
            'aggregatefilter',
            slug('From pre-Victoria Nova: CoreFilter, RamFilter, '
                 'DiskFilter, Aggregate*Filter'))
        self.assertEqual('metrics_max_age-shared-with-the-utilization-filter',
                         slug('`metrics_max_age` (shared with the '
                              'utilization filter)'))
        self.assertEqual('the-balanced-policy-default',
                         slug('The `balanced` policy (default)'))
        self.assertEqual('relief--cost', slug('Relief & cost'))
        self.assertEqual('see-the-cli', slug('See [the CLI](cli.md)'))
        self.assertEqual('__init__py-and-bold',
                         slug('`__init__.py` and **bold**'))


class CheckerTest(testtools.TestCase):
    """The checker itself finds what is broken, and only that."""

    def test_broken_files_and_anchors_are_reported(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, 'other.md'), 'w') as handle:
                handle.write('# Title\n\n## Step\n\n## Step\n')
            page = os.path.join(tmp, 'page.md')
            with open(page, 'w') as handle:
                handle.write(
                    '# Page\n\n'
                    '[ok](other.md#step-1) [ok](#page) '
                    '[web](https://example.org/x#y) `[code](gone.md)`\n'
                    '```\n[fenced](gone.md)\n```\n'
                    '[gone](gone.md) [bad](other.md#step-2) [self](#nope)\n')
            found = broken_links(page)
        self.assertEqual(3, len(found), found)
        self.assertIn('gone.md: no such file', found[0])
        self.assertIn('other.md#step-2: no heading', found[1])
        self.assertIn('#nope: no heading', found[2])


class DocLinksTest(testtools.TestCase):

    def test_every_relative_link_resolves(self):
        broken = [entry for path in documents()
                  for entry in broken_links(path)]
        self.assertEqual([], broken, '\n'.join(broken))

    def test_readme_lists_every_doc_page(self):
        with open(os.path.join(ROOT, 'README.md'), encoding='utf-8') as f:
            readme = f.read()
        missing = [os.path.relpath(path, ROOT) for path in documents()[1:]
                   if f'({os.path.relpath(path, ROOT)})' not in readme]
        self.assertEqual([], missing)
