fuzz_policy_SRC := netd/policy.c common/yamlx.c common/addr.c common/diag.c
