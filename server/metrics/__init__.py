"""The service's Prometheus metrics: recorder.py (what any process of the pool records, in Redis:
a new series of the pool starts there), scrape.py (what a scrape shows of the pool: those, the
queues, the live workers), http.py (this API server's HTTP series, blob transfers, where /metrics
is served; the route itself is routers/metrics.py)."""
