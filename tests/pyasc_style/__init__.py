"""pyasc-style tests and scripts (a package only so that its conftest.py is not the `conftest`
module the project's own tests import)."""
