test_sandbox_SRC := netd/sandbox.c common/addr.c
