test_statefile_SRC := netd/daemon/statefile.c netd/policy.c common/yamlx.c common/addr.c common/diag.c
