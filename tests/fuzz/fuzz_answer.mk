fuzz_answer_SRC := dnsproxy/wire.c dnsproxy/wire_svcb.c common/addr.c
