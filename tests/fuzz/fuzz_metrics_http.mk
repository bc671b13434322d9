fuzz_metrics_http_SRC := netd/api/metrics_http.c common/log.c
