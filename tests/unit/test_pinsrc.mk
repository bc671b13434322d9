test_pinsrc_SRC := netd/pinsrc.c netd/policy.c netd/policy_parse.c netd/policy_names.c netd/policy_index.c common/yamlx.c common/addr.c common/diag.c
