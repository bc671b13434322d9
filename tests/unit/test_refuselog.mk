test_refuselog_SRC := dnsproxy/refuselog.c dnsproxy/decide.c dnsproxy/wire.c common/special.c common/addr.c common/log.c netd/policy.c netd/policy_index.c common/yamlx.c common/diag.c
