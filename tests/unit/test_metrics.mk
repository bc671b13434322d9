test_metrics_SRC := netd/common/metrics.c netd/api/metrics_http.c netd/trail/denyfold.c netd/trail/ctmsg.c common/addr.c common/log.c
