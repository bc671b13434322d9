fuzz_suggest_SRC := netd/suggest.c netd/suggest_render.c netd/policy.c netd/policy_parse.c netd/policy_names.c netd/policy_index.c common/special.c common/yamlx.c common/addr.c common/diag.c
