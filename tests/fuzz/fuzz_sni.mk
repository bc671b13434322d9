fuzz_sni_SRC := netd/sni/flow.c netd/sni/sni.c netd/sni/sni_match.c netd/policy.c common/yamlx.c common/addr.c common/diag.c
