fuzz_ctlreq_SRC := netd/api/ctlreq.c common/log.c
