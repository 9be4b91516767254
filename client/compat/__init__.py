"""pyasc code, unmodified, against ascrun: the launch redirection of `ascrun exec` and the pytest
plugin (script.py, pytest_plugin.py), the stand-in `asc` package where pyasc is not installed
(standin/asc, data put on sys.path), torch's device "npu" as the host (npu_host.py), and pyasc's
Matmul host tiling without CANN (host_tiling.py, host_tiling_solver.py). A new shim for pyasc goes here."""
