fuzz_nlack_SRC := netd/fw/batch.c common/nlbuf.c
