test_tap_SRC := netd/link/tap.c netd/link/rtnl.c common/nlbuf.c netd/api/ctlreq.c common/log.c common/addr.c
