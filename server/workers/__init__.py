"""ascrun.server.workers: RQ workers that run the compiler pipeline."""
