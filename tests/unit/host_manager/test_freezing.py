"""Freezing the process's objects after background refreshes."""

import gc
import weakref

import testtools

from nova_drs_scheduler.host_manager import freezing


class Node:
    """Something a cache holds; weakly referenceable, tracked by gc."""

    def __init__(self):
        self.other = None


def is_frozen(obj) -> bool:
    """In the permanent generation: tracked, yet in no generation."""
    return gc.is_tracked(obj) and not any(
        found is obj for found in gc.get_objects())


class FreezerTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.now = 0.0
        self.freezer = freezing.Freezer(600.0, lambda: self.now)
        self.addCleanup(gc.unfreeze)

    def test_freezes_what_is_alive(self):
        node = Node()
        self.freezer.freeze()
        self.assertTrue(is_frozen(node))
        later = Node()
        self.freezer.freeze()
        self.assertTrue(is_frozen(later))
        self.freezer.release()
        self.assertEqual(0, gc.get_freeze_count())
        self.assertFalse(is_frozen(node))

    def test_a_frozen_object_dropped_is_freed(self):
        # What the cache replaces (a row read again, a reload) does not
        # stay behind because it was frozen.
        node = Node()
        ref = weakref.ref(node)
        self.freezer.freeze()
        self.assertTrue(is_frozen(node))
        del node
        self.assertIsNone(ref())

    def test_frozen_cycles_are_collected_once_per_interval(self):
        first, second = Node(), Node()
        first.other, second.other = second, first
        ref = weakref.ref(first)
        self.freezer.freeze()  # The first time collects everything.
        self.assertTrue(is_frozen(first))
        del first, second
        gc.collect()
        self.assertIsNotNone(ref(), 'a frozen cycle is not collected')
        self.now += 599.0
        self.freezer.freeze()
        self.assertIsNotNone(ref(), 'collected before the interval')
        self.now += 1.0
        self.freezer.freeze()
        self.assertIsNone(ref())

    def test_young_cycles_are_collected_before_freezing(self):
        self.freezer.freeze()
        first, second = Node(), Node()
        first.other, second.other = second, first
        ref = weakref.ref(first)
        del first, second
        self.now += 1.0
        self.freezer.freeze()
        self.assertIsNone(ref())

    def collections(self):
        """The generations collected from now on (none automatically)."""
        if gc.isenabled():
            gc.disable()
            self.addCleanup(gc.enable)
        collected = []

        def record(phase, info):
            if phase == 'start':
                collected.append(info['generation'])

        gc.callbacks.append(record)
        self.addCleanup(gc.callbacks.remove, record)
        return collected

    def test_only_young_generations_between_full_collections(self):
        self.now = 1000.0
        collected = self.collections()
        self.freezer.freeze()
        self.now += 599.0
        self.freezer.freeze()
        self.now += 2.0  # Past the interval, never exactly at it.
        self.freezer.freeze()
        self.now += 1.0
        self.freezer.freeze()
        self.assertEqual([2, 1, 2, 1], collected)

    def test_a_freeze_after_release_collects_everything(self):
        collected = self.collections()
        self.freezer.freeze()
        self.freezer.release()
        self.now += 1.0
        self.freezer.freeze()
        self.assertEqual([2, 2], collected)
