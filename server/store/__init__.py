"""All of the service's Redis, by concept: keys.py (the key layout: every key and the function
naming it), jobs.py (job records: admission, their moves, traces), ended.py (who waits for which
job to end), queues.py (the job queues), pool.py (worker liveness and capabilities), reaper.py
(ending jobs whatever died), cache.py (the compile caches), blobs.py (tensor bytes), and
rq_adapter.py, the one module that knows RQ's internals. Only the metrics' recorder
(metrics/recorder.py) reaches Redis besides."""
