"""Which of Nova's functional tests run with our scheduler in place.

Whole modules about scheduling, plus every regression module whose source
mentions scheduling at all (the scheduler, scheduling, rescheduling,
scheduler hints, ``[filter_scheduler]`` options): the rule is applied to
the installed Nova, so a new release's scheduling regressions join
without a list to keep up to date.
"""

import os
import re

from nova.tests.functional import regressions

#: Nova's functional test modules that are about scheduling throughout.
MODULES = (
    'nova.tests.functional.test_aggregates',
    'nova.tests.functional.test_availability_zones',
    'nova.tests.functional.test_scheduler',
    'nova.tests.functional.test_server_group',
)

#: What marks a regression module as one that exercises scheduling.
SCHEDULING = re.compile(r'schedul', re.IGNORECASE)


def regression_modules() -> list[str]:
    """The regression modules the rule selects, sorted."""
    directory = os.path.dirname(regressions.__file__)
    names = []
    for filename in sorted(os.listdir(directory)):
        if not (filename.startswith('test_') and filename.endswith('.py')):
            continue
        with open(os.path.join(directory, filename)) as source:
            if SCHEDULING.search(source.read()):
                names.append(f'{regressions.__name__}.{filename[:-3]}')
    return names


def modules() -> list[str]:
    """Every module whose tests run."""
    return list(MODULES) + regression_modules()
