"""Nova's filtering, without the per-host work that changes no result.

Nova's ``BaseFilterHandler`` asks, for every host and every filter,
whether the request is a rebuild, and records the names of the hosts that
passed each filter even when only debug logging would print them. This
handler asks once per request and records names only for debug logging.
Filters that override ``filter_all`` or ``_filter_one`` still go through
them; the rest get ``host_passes`` called directly, which is what Nova's
base classes do for them.
"""

import logging as std_logging
from typing import Any

from nova import filters as nova_filters
from nova.scheduler import filters as host_filters
from nova.scheduler import utils
from oslo_log import log as logging

LOG = logging.getLogger(__name__)


def _uses_base_dispatch(filter_: Any) -> bool:
    cls = type(filter_)
    return (cls.filter_all is nova_filters.BaseFilter.filter_all and
            cls._filter_one is host_filters.BaseHostFilter._filter_one)


def _names(objs: list) -> list:
    return [(getattr(obj, 'host', obj), getattr(obj, 'nodename', ''))
            for obj in objs]


class FilterHandler:
    """Same hosts, same order and same log lines as Nova's handler.

    Not a subclass of it: Nova's loader base class looks for plug-ins in
    the handler's own package. The host manager has already loaded its
    filters with Nova's handler and only needs this method.
    """

    def get_filtered_objects(self, filters, objs, spec_obj, index=0):
        list_objs = list(objs)
        LOG.debug('Starting with %d host(s)', len(list_objs))
        debug = LOG.isEnabledFor(std_logging.DEBUG)
        rebuild = utils.request_is_rebuild(spec_obj)
        part_results = []
        full_results = []
        for filter_ in filters:
            if not filter_.run_filter_for_index(index):
                continue
            cls_name = type(filter_).__name__
            start_count = len(list_objs)
            if not _uses_base_dispatch(filter_):
                passed = filter_.filter_all(list_objs, spec_obj)
                if passed is None:
                    LOG.debug('Filter %s says to stop filtering', cls_name)
                    return None
                list_objs = list(passed)
            elif rebuild and not filter_.RUN_ON_REBUILD:
                pass  # Nova lets every host through such a filter.
            else:
                host_passes = filter_.host_passes
                list_objs = [obj for obj in list_objs
                             if host_passes(obj, spec_obj)]
            part_results.append(
                f'{cls_name}: (start: {start_count}, end: {len(list_objs)})')
            if not list_objs:
                LOG.info('Filter %s returned 0 hosts', cls_name)
                full_results.append((cls_name, None))
                break
            if debug:
                full_results.append((cls_name, _names(list_objs)))
            LOG.debug('Filter %(cls_name)s returned %(obj_len)d host(s)',
                      {'cls_name': cls_name, 'obj_len': len(list_objs)})
        if not list_objs:
            _log_all_removed(spec_obj, part_results, full_results, debug)
        return list_objs


def _log_all_removed(spec_obj: Any, part_results: list, full_results: list,
                     debug: bool) -> None:
    message = ("Filtering removed all hosts for the request with instance "
               "ID '%(inst_uuid)s'. Filter results: %(str_results)s")
    if debug:
        LOG.debug(message, {'inst_uuid': spec_obj.instance_uuid,
                            'str_results': str(full_results)})
    LOG.info(message, {'inst_uuid': spec_obj.instance_uuid,
                       'str_results': str(part_results)})
