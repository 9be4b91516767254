"""The service's client: `Client` and `AsyncClient`, two shells (client.py, async_client.py) over one
sans-IO core (core.py: every request, how its answer reads, and the flows of several requests, the
launch's included), with the I/O they share in http.py; submission.py builds a launch's job body,
launch.py holds a submitted launch without I/O, handle.py the handles the shells give for it.
A new call to the service is an exchange in core.py and a method in each shell."""
