fuzz_link_SRC := common/addr.c common/nlbuf.c
