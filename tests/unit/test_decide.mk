test_decide_SRC := dnsproxy/decide.c dnsproxy/wire.c dnsproxy/wire_svcb.c common/addr.c netd/policy.c common/yamlx.c common/diag.c
