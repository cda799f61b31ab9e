"""Trace replay on a modelled cluster, driving the production planner."""
