test_tap_SRC := netd/tap.c netd/rtnl.c common/nlbuf.c netd/ctlreq.c common/log.c common/addr.c
