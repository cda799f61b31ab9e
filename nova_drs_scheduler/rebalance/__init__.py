"""The DRS rebalancer: metrics, a pure planner, and an executor."""
