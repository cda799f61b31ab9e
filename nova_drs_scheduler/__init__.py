"""Dynamic resource scheduling (DRS) for OpenStack Nova."""
