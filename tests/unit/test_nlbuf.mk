test_nlbuf_SRC := common/nlbuf.c
