"""The service's client: `Client` and `AsyncClient`, two shells (client.py, async_client.py) over one
sans-IO core (core.py: every request, how its answer reads, and the flows of several requests),
with the I/O they share in http.py; submission.py builds a launch's job body, handle.py the handles
of submitted launches. A new call to the service is an exchange in core.py and a line in each shell."""
