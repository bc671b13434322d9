test_sandbox_SRC := netd/model/sandbox.c common/addr.c
