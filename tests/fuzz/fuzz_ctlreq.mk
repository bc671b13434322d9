fuzz_ctlreq_SRC := netd/ctlreq.c common/log.c
