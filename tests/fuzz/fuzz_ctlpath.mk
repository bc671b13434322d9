fuzz_ctlpath_SRC := netd/ctlreq.c common/log.c
