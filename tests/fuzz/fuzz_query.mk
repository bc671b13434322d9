fuzz_query_SRC := dnsproxy/wire.c common/addr.c
