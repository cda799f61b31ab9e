"""A simulator strategy that plays fixed moves, for the engine's tests."""


class Looking:
    """Plays fixed moves (and power actions) at fixed periods and keeps
    what ``look`` reads of each period's view."""

    name = 'looking'

    def __init__(self, look=lambda view: None, moves=None):
        self.look, self.moves = look, moves or {}
        self.seen = []

    def plan(self, view):
        self.seen.append(self.look(view))
        return self.moves.get(view.period, []), 0.0, 0.0
