fuzz_sni_SRC := netd/sni/flow.c netd/sni/sni.c netd/sni/sni_match.c netd/policy.c netd/policy_parse.c netd/policy_names.c netd/policy_index.c common/yamlx.c common/addr.c common/diag.c
