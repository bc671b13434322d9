test_sni_SRC := netd/sni/sni.c netd/sni/sni_match.c netd/model/policy.c netd/model/policy_parse.c netd/model/policy_names.c netd/model/policy_index.c common/yamlx.c common/addr.c common/diag.c
