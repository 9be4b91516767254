"""The `ascrun` command (`python -m ascrun.cli`, the console script `ascrun`): main.py assembles
the parser; each command's arguments and code are in its own module."""
