test_metrics_SRC := netd/metrics.c netd/metrics_http.c netd/denyfold.c netd/ctmsg.c common/addr.c common/log.c
