"""ascrun.server: the HTTP service in front of the worker pool."""
