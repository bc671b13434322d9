test_refuselog_SRC := dnsproxy/refuselog.c dnsproxy/decide.c dnsproxy/wire.c dnsproxy/wire_svcb.c common/special.c common/addr.c common/log.c netd/policy.c common/yamlx.c common/diag.c
