test_statefile_SRC := netd/daemon/statefile.c netd/model/policy.c netd/model/policy_parse.c netd/model/policy_names.c netd/model/policy_index.c common/yamlx.c common/addr.c common/diag.c
