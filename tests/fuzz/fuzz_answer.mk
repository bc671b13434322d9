fuzz_answer_SRC := dnsproxy/wire.c common/addr.c
