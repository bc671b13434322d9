test_ede_SRC := dnsproxy/ede.c dnsproxy/wire.c dnsproxy/wire_svcb.c common/addr.c
