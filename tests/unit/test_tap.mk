test_tap_SRC := netd/tap.c common/addr.c
