test_pinsrc_SRC := netd/trail/pinsrc.c netd/model/policy.c netd/model/policy_parse.c netd/model/policy_names.c netd/model/policy_index.c common/yamlx.c common/addr.c common/diag.c
