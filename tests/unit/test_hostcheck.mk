test_hostcheck_SRC := netd/daemon/hostcheck.c common/addr.c
