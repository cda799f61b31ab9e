"""The planner's goals, one module each, in the order they run (drain,
relieve, level; power management's consolidation plans after them, in
:mod:`..power`).

A goal module has ``GOAL`` (the ``model.Move.goal`` of its moves) and
``run(work)``, which plans on the shared :class:`..working.Working` with
the shared destination search (:mod:`..search`) and rails, and records
each move through :func:`..moves.apply`.  Adding a goal is adding a
module here and naming it in ``planner.PIPELINE``.
"""
