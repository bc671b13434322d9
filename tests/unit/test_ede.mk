test_ede_SRC := dnsproxy/ede.c dnsproxy/wire.c common/addr.c
