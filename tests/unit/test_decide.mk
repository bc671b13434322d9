test_decide_SRC := common/special.c dnsproxy/decide.c dnsproxy/wire.c dnsproxy/wire_svcb.c common/addr.c netd/policy.c netd/policy_index.c netd/policy_dns.c common/yamlx.c common/diag.c
