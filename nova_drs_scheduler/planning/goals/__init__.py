"""The planner's goals, one module each, in the order they run (drain,
relieve, level, consolidate: power management's, whose decisions are
:mod:`..power`'s).

A goal module has ``GOAL`` (its name, the ``model.Move.goal`` of its
moves) and ``run(work)``, which plans on the shared
:class:`..working.Working` with the shared destination search
(:mod:`..search`) and rails, and records each move through
:func:`..moves.apply`; consolidation, which moves nothing, leaves its
power plan on the working projection.  Adding a goal is adding a module
here and naming it in ``planner.PIPELINE``.
"""
