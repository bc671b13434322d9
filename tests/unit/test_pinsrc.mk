test_pinsrc_SRC := netd/pinsrc.c netd/policy.c common/yamlx.c common/addr.c common/diag.c
