test_ctlpath_SRC := netd/api/ctlreq.c common/log.c
