fuzz_metrics_http_SRC := netd/metrics_http.c common/log.c
